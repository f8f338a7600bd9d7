// openai_server.cpp — see openai_server.h. One HTTP worker thread serves one connection; a
// streamed completion holds its thread while it waits on the request's token stream (in slices,
// so a client that went away is noticed at the next write, which cancels the request).
#include "openai_server.h"

#include <httplib.h>

#include <chrono>
#include <functional>
#include <random>

#include "hwinfer/prometheus_text.h"
#include "openai_response.h"
#include "text_output.h"

namespace hwinfer::serve {
namespace {

using nlohmann::json;
constexpr auto kStreamSlice = std::chrono::milliseconds(50);

void SendError(httplib::Response& res, const ApiError& error) {
  res.status = error.http_status;
  res.set_content(error.ToJson().dump(-1, ' ', false, json::error_handler_t::replace),
                  "application/json");
}

// The HTTP status and error object for a Submit that failed.
ApiError SubmitError(const Status& status) {
  if (status.code() == StatusCode::kUnavailable) {
    return {503, status.message(), "server_overloaded", ""};
  }
  return {400, status.message(), "invalid_request_error", ""};
}

}  // namespace

// One completion in progress: its stream, its text so far, and how it ended.
struct OpenAiServer::Completion {
  Completion(ResponseHeader header_in, std::shared_ptr<RequestStream> stream_in,
             TextOutput output_in, int64_t prompt_tokens_in)
      : header(std::move(header_in)),
        stream(std::move(stream_in)),
        output(std::move(output_in)),
        prompt_tokens(prompt_tokens_in) {}

  ResponseHeader header;
  std::shared_ptr<RequestStream> stream;
  TextOutput output;
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  bool include_usage = false;
  bool opened = false;  // a chat stream's first chunk (the role) is sent
  bool done = false;
  std::string finish_reason;  // "stop" or "length" once done without error
  std::optional<ApiError> error;

  // Waits up to |slice| for tokens; appends the text each one releases to |pieces| (one piece
  // per token, maybe empty: a stream sends one chunk per token, as vLLM does); sets done when the
  // request ended (a stop string ends it here: the engine is told to stop it).
  void Advance(ServingReplicas& engine, std::chrono::milliseconds slice,
               std::vector<std::string>& pieces) {
    const StreamUpdate update = stream->Wait(slice);
    for (int32_t token : update.tokens) {
      ++completion_tokens;
      pieces.push_back(output.Push(token));
      if (output.stopped()) {
        engine.Stop(stream->id());
        finish_reason = "stop";
        done = true;
        return;
      }
    }
    if (update.finish == FinishReason::kNone) return;
    done = true;
    const std::string rest = output.Finish();
    if (pieces.empty()) pieces.emplace_back();
    pieces.back() += rest;
    if (update.finish == FinishReason::kStop || update.finish == FinishReason::kLength) {
      finish_reason = FinishReasonName(update.finish);
    } else if (update.finish == FinishReason::kCancelled) {
      error = ApiError{503, "the server stopped before the request finished", "server_error", ""};
    } else {
      error = ApiError{500, update.error, "server_error", ""};
    }
  }

  // One call of a stream's content provider: waits for tokens and writes a chunk per token with
  // |write|; once the request ended, the last chunk carries the finish reason, then the usage
  // (when asked) and [DONE]. False when a write failed (the client is gone).
  bool StreamStep(ServingReplicas& engine, const std::function<bool(const std::string&)>& write) {
    if (header.chat && !opened) {
      opened = true;
      if (!write(SseEvent(ChunkBody(header, "", "", true)))) return false;
    }
    std::vector<std::string> pieces;
    Advance(engine, kStreamSlice, pieces);
    const size_t plain = done ? std::max<size_t>(pieces.size(), 1) - 1 : pieces.size();
    for (size_t i = 0; i < plain; ++i) {
      if (!write(SseEvent(ChunkBody(header, pieces[i], "")))) return false;
    }
    if (!done) return true;
    if (error) return write(SseEvent(error->ToJson())) && write(kSseDone);
    const std::string last = pieces.empty() ? "" : pieces.back();
    if (!write(SseEvent(ChunkBody(header, last, finish_reason)))) return false;
    if (include_usage && !write(SseEvent(UsageChunk(header, prompt_tokens, completion_tokens)))) {
      return false;
    }
    return write(kSseDone);
  }
};

OpenAiServer::OpenAiServer(ServingReplicas& engine, const Tokenizer& tokenizer,
                           ServerOptions options)
    : engine_(engine),
      tokenizer_(tokenizer),
      options_(std::move(options)),
      http_(std::make_unique<httplib::Server>()) {
  const int threads = std::max(options_.threads, 4);
  http_->new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  Route();
}

OpenAiServer::~OpenAiServer() = default;

StatusOr<int> OpenAiServer::Bind() {
  const std::string where = options_.host + ":" + std::to_string(options_.port);
  const int port = options_.port == 0
                       ? http_->bind_to_any_port(options_.host)
                       : (http_->bind_to_port(options_.host, options_.port) ? options_.port : -1);
  if (port <= 0) {
    return Unavailable("cannot listen on " + where + " (in use, or not an address of this host)");
  }
  return port;
}

void OpenAiServer::Serve() { http_->listen_after_bind(); }

void OpenAiServer::Stop() { http_->stop(); }

void OpenAiServer::Route() {
  http_->Get("/health", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("", "text/plain");
  });
  http_->Get("/v1/models", [this](const httplib::Request&, httplib::Response& res) {
    const json model = {{"id", options_.model_name},
                        {"object", "model"},
                        {"created", NewResponseHeader(false, "").created},
                        {"owned_by", "hwinfer"},
                        {"max_model_len", engine_.max_model_len()}};
    res.set_content(json{{"object", "list"}, {"data", {model}}}.dump(), "application/json");
  });
  http_->Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(PrometheusText(engine_.Metrics(), options_.model_name), kPrometheusContentType);
  });
  http_->Post("/v1/completions", [this](const httplib::Request& req, httplib::Response& res) {
    HandleCompletion(req.body, false, &res);
  });
  http_->Post("/v1/chat/completions", [this](const httplib::Request& req, httplib::Response& res) {
    HandleCompletion(req.body, true, &res);
  });
}

StatusOr<std::vector<int32_t>> OpenAiServer::PromptIds(const CompletionRequest& request,
                                                       std::optional<ApiError>& error) const {
  if (request.prompt_is_ids) return request.prompt_ids;
  std::string text = request.prompt_text;
  if (request.chat) {
    if (!options_.render_chat) {
      error = ApiError{400, "this model has no chat template", "invalid_request_error", "messages"};
      return InvalidArgument(error->message);
    }
    auto rendered = options_.render_chat(request.messages);
    if (!rendered.ok()) {
      error = ApiError{400, rendered.status().message(), "invalid_request_error", "messages"};
      return rendered.status();
    }
    text = std::move(*rendered);
  }
  // Special-token texts in a prompt are those tokens, as llama.cpp's and vLLM's servers read it.
  return tokenizer_.Encode(text, true, true);
}

void OpenAiServer::HandleCompletion(const std::string& body, bool chat, void* response) {
  auto& res = *static_cast<httplib::Response*>(response);
  CompletionRequest request;
  if (auto error = ParseCompletionRequest(body, chat, request)) return SendError(res, *error);
  if (!request.model.empty() && request.model != options_.model_name) {
    return SendError(res, {404, "The model `" + request.model + "` does not exist.",
                           "invalid_request_error", "model"});
  }
  std::optional<ApiError> prompt_error;
  auto prompt = PromptIds(request, prompt_error);
  if (!prompt.ok()) return SendError(res, *prompt_error);
  const auto prompt_tokens = static_cast<int64_t>(prompt->size());
  const int64_t context = engine_.max_model_len();
  const int64_t max_tokens = request.max_tokens.value_or(chat ? context - prompt_tokens : 16);
  if (prompt_tokens >= context || prompt_tokens + max_tokens > context) {
    return SendError(
        res, {400,
              "This model's maximum context length is " + std::to_string(context) +
                  " tokens. However, you requested " + std::to_string(prompt_tokens + max_tokens) +
                  " tokens (" + std::to_string(prompt_tokens) + " in the prompt, " +
                  std::to_string(max_tokens) + " in the completion).",
              "invalid_request_error", chat ? "messages" : "prompt"});
  }
  ServeRequest serve;
  serve.prompt = std::move(*prompt);
  serve.max_tokens = max_tokens;
  serve.sampling.temperature = static_cast<float>(request.temperature);
  serve.sampling.top_p = static_cast<float>(request.top_p);
  serve.sampling.top_k = static_cast<int32_t>(request.top_k);
  serve.sampling.seed = request.seed.value_or(std::random_device{}());
  if (!request.ignore_eos) serve.stop_tokens = tokenizer_.EndOfGenerationIds();
  auto stream = engine_.Submit(std::move(serve));
  if (!stream.ok()) {
    if (stream.status().code() == StatusCode::kUnavailable) res.set_header("Retry-After", "1");
    return SendError(res, SubmitError(stream.status()));
  }
  auto state = std::make_shared<Completion>(NewResponseHeader(chat, options_.model_name), *stream,
                                            TextOutput(tokenizer_, request.stop), prompt_tokens);
  state->include_usage = request.include_usage;
  if (!request.stream) {
    std::vector<std::string> pieces;
    while (!state->done) state->Advance(engine_, std::chrono::milliseconds(200), pieces);
    if (state->error) return SendError(res, *state->error);
    std::string text;
    for (const std::string& piece : pieces) text += piece;
    res.set_content(CompletionBody(state->header, text, state->finish_reason, prompt_tokens,
                                   state->completion_tokens)
                        .dump(-1, ' ', false, json::error_handler_t::replace),
                    "application/json");
    return;
  }
  res.set_header("Cache-Control", "no-cache");
  res.set_chunked_content_provider(
      "text/event-stream",
      [this, state](size_t, httplib::DataSink& sink) {
        const bool ok = state->StreamStep(engine_, [&](const std::string& event) {
          return sink.write(event.data(), event.size());
        });
        if (ok && state->done) sink.done();
        return ok;
      },
      [this, state](bool) {
        // The connection ended: a request still going has lost its client.
        if (!state->done) engine_.Cancel(state->stream->id());
      });
}

}  // namespace hwinfer::serve
