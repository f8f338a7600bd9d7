// openai_response.cpp — see openai_response.h. Strings that are not valid UTF-8 (a stream cut
// inside a character cannot happen here: TextOutput sends whole characters) are dumped with the
// replacement character rather than throwing.
#include "openai_response.h"

#include <chrono>
#include <random>

namespace hwinfer::serve {

using nlohmann::json;

ResponseHeader NewResponseHeader(bool chat, const std::string& model) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id = chat ? "chatcmpl-" : "cmpl-";
  for (int i = 0; i < 24; ++i) id += kHex[rng() % 16];
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  return {chat, id, std::chrono::duration_cast<std::chrono::seconds>(now).count(), model};
}

json Usage(int64_t prompt_tokens, int64_t completion_tokens) {
  return {{"prompt_tokens", prompt_tokens},
          {"completion_tokens", completion_tokens},
          {"total_tokens", prompt_tokens + completion_tokens}};
}

namespace {

json Envelope(const ResponseHeader& header, const char* object, json choices) {
  return {{"id", header.id},
          {"object", object},
          {"created", header.created},
          {"model", header.model},
          {"choices", std::move(choices)}};
}

json FinishValue(const std::string& finish_reason) {
  return finish_reason.empty() ? json() : json(finish_reason);
}

}  // namespace

json CompletionBody(const ResponseHeader& header, const std::string& text,
                    const std::string& finish_reason, int64_t prompt_tokens,
                    int64_t completion_tokens) {
  json choice = {
      {"index", 0}, {"logprobs", nullptr}, {"finish_reason", FinishValue(finish_reason)}};
  if (header.chat) {
    choice["message"] = {{"role", "assistant"}, {"content", text}};
  } else {
    choice["text"] = text;
  }
  json body = Envelope(header, header.chat ? "chat.completion" : "text_completion", {choice});
  body["usage"] = Usage(prompt_tokens, completion_tokens);
  return body;
}

json ChunkBody(const ResponseHeader& header, const std::string& text,
               const std::string& finish_reason, bool opening) {
  json choice = {
      {"index", 0}, {"logprobs", nullptr}, {"finish_reason", FinishValue(finish_reason)}};
  if (header.chat) {
    json delta = json::object();
    if (opening) delta["role"] = "assistant";
    if (opening || !text.empty()) delta["content"] = text;
    choice["delta"] = delta;
  } else {
    choice["text"] = text;
  }
  return Envelope(header, header.chat ? "chat.completion.chunk" : "text_completion", {choice});
}

json UsageChunk(const ResponseHeader& header, int64_t prompt_tokens, int64_t completion_tokens) {
  json body =
      Envelope(header, header.chat ? "chat.completion.chunk" : "text_completion", json::array());
  body["usage"] = Usage(prompt_tokens, completion_tokens);
  return body;
}

std::string SseEvent(const json& body) {
  return "data: " + body.dump(-1, ' ', false, json::error_handler_t::replace) + "\n\n";
}

}  // namespace hwinfer::serve
