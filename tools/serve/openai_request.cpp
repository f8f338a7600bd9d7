// openai_request.cpp — see openai_request.h. Each field is read by a checker that names it in the
// error ("'max_tokens' must be an integer >= 1, got \"ten\""), as OpenAI's API answers.
#include "openai_request.h"

#include <fmt/format.h>

#include <limits>

namespace hwinfer::serve {
namespace {

using nlohmann::json;

ApiError Bad(const std::string& param, const std::string& message) {
  return ApiError{400, message, "invalid_request_error", param};
}

// A short rendering of a value for messages (strings quoted, long values cut).
std::string Shown(const json& value) {
  std::string text = value.dump(-1, ' ', true, json::error_handler_t::replace);
  return text.size() > 40 ? text.substr(0, 37) + "..." : text;
}

// Reads optional fields of |body|, stopping at the first error.
class Fields {
 public:
  explicit Fields(const json& body) : body_(body) {}
  const std::optional<ApiError>& error() const { return error_; }

  // The value under |key| unless absent or null.
  const json* Find(const std::string& key) const {
    const auto found = body_.find(key);
    return found == body_.end() || found->is_null() ? nullptr : &*found;
  }
  void Integer(const std::string& key, int64_t min, int64_t max, std::optional<int64_t>& out) {
    const json* value = Find(key);
    if (value == nullptr || error_) return;
    if (!value->is_number_integer() ||
        (value->is_number_unsigned() && value->get<uint64_t>() > uint64_t(max)) ||
        value->get<int64_t>() < min || value->get<int64_t>() > max) {
      error_ = Bad(key, fmt::format("'{}' must be an integer in [{}, {}], got {}", key, min, max,
                                    Shown(*value)));
      return;
    }
    out = value->get<int64_t>();
  }
  void Number(const std::string& key, double min, double max, double& out) {
    const json* value = Find(key);
    if (value == nullptr || error_) return;
    if (!value->is_number() || value->get<double>() < min || value->get<double>() > max) {
      error_ = Bad(key, fmt::format("'{}' must be a number in [{}, {}], got {}", key, min, max,
                                    Shown(*value)));
      return;
    }
    out = value->get<double>();
  }
  void Boolean(const std::string& key, bool& out) {
    const json* value = Find(key);
    if (value == nullptr || error_) return;
    if (!value->is_boolean()) {
      error_ = Bad(key, fmt::format("'{}' must be true or false, got {}", key, Shown(*value)));
      return;
    }
    out = value->get<bool>();
  }
  void String(const std::string& key, std::string& out) {
    const json* value = Find(key);
    if (value == nullptr || error_) return;
    if (!value->is_string()) {
      error_ = Bad(key, fmt::format("'{}' must be a string, got {}", key, Shown(*value)));
      return;
    }
    out = value->get<std::string>();
  }
  // A field this server cannot honour: refused unless absent or at its no-op value.
  void Unsupported(const std::string& key, const json& no_op, const std::string& why) {
    const json* value = Find(key);
    if (value == nullptr || error_ || *value == no_op) return;
    error_ = Bad(key, fmt::format("'{}' = {} is not supported: {}", key, Shown(*value), why));
  }
  void Fail(const std::string& key, const std::string& message) {
    if (!error_) error_ = Bad(key, message);
  }

 private:
  const json& body_;
  std::optional<ApiError> error_;
};

void ReadStop(Fields& fields, std::vector<std::string>& out) {
  const json* stop = fields.Find("stop");
  if (stop == nullptr) return;
  if (stop->is_string()) {
    out.push_back(stop->get<std::string>());
  } else if (stop->is_array() && stop->size() <= 4) {
    for (const json& item : *stop) {
      if (!item.is_string())
        return fields.Fail("stop", "'stop' must hold strings, got " + Shown(item));
      out.push_back(item.get<std::string>());
    }
  } else {
    return fields.Fail(
        "stop", "'stop' must be a string or an array of up to 4 strings, got " + Shown(*stop));
  }
  for (const std::string& s : out) {
    if (s.empty()) return fields.Fail("stop", "'stop' strings must not be empty");
  }
}

void ReadPrompt(Fields& fields, CompletionRequest& out) {
  const json* prompt = fields.Find("prompt");
  if (prompt == nullptr) return fields.Fail("prompt", "'prompt' is required");
  // A list of one prompt is that prompt (OpenAI accepts lists of prompts).
  const json* one = prompt;
  if (prompt->is_array() && !prompt->empty() &&
      (prompt->front().is_string() || prompt->front().is_array())) {
    if (prompt->size() != 1) {
      return fields.Fail("prompt", "only one prompt per request is supported, got " +
                                       std::to_string(prompt->size()));
    }
    one = &prompt->front();
  }
  if (one->is_string()) {
    out.prompt_text = one->get<std::string>();
    if (out.prompt_text.empty()) return fields.Fail("prompt", "'prompt' must not be empty");
    return;
  }
  if (!one->is_array() || one->empty()) {
    return fields.Fail(
        "prompt", "'prompt' must be a non-empty string or array of token ids, got " + Shown(*one));
  }
  for (const json& id : *one) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 ||
        id.get<int64_t>() > std::numeric_limits<int32_t>::max()) {
      return fields.Fail("prompt", "'prompt' token ids must be integers >= 0, got " + Shown(id));
    }
    out.prompt_ids.push_back(id.get<int32_t>());
  }
  out.prompt_is_ids = true;
}

void ReadMessages(Fields& fields, CompletionRequest& out) {
  const json* messages = fields.Find("messages");
  if (messages == nullptr || !messages->is_array() || messages->empty()) {
    return fields.Fail("messages", "'messages' must be a non-empty array of messages");
  }
  for (size_t i = 0; i < messages->size(); ++i) {
    const json& m = (*messages)[i];
    const std::string where = fmt::format("messages[{}]", i);
    if (!m.is_object() || !m.contains("role") || !m["role"].is_string()) {
      return fields.Fail(where, "'" + where + "' must be an object with a string 'role'");
    }
    ChatMessage message{m["role"].get<std::string>(), ""};
    if (message.role == "developer") message.role = "system";
    if (message.role != "system" && message.role != "user" && message.role != "assistant") {
      return fields.Fail(where + ".role", "'" + where +
                                              ".role' must be system, developer, user "
                                              "or assistant, got '" +
                                              message.role + "'");
    }
    const json content = m.value("content", json());
    if (content.is_string()) {
      message.content = content.get<std::string>();
    } else if (content.is_array()) {
      for (const json& part : content) {
        if (!part.is_object() || part.value("type", "") != "text" || !part.contains("text") ||
            !part["text"].is_string()) {
          return fields.Fail(where + ".content", "'" + where +
                                                     ".content' parts must be "
                                                     "{\"type\": \"text\", \"text\": ...}");
        }
        message.content += part["text"].get<std::string>();
      }
    } else if (!content.is_null()) {
      return fields.Fail(where + ".content", "'" + where +
                                                 ".content' must be a string or an "
                                                 "array of text parts, got " +
                                                 Shown(content));
    }
    out.messages.push_back(std::move(message));
  }
}

}  // namespace

nlohmann::json ApiError::ToJson() const {
  return {{"error",
           {{"message", message},
            {"type", type},
            {"param", param.empty() ? json() : json(param)},
            {"code", http_status}}}};
}

std::optional<ApiError> ParseCompletionRequest(const std::string& body, bool chat,
                                               CompletionRequest& out) {
  json parsed = json::parse(body, nullptr, false);
  if (parsed.is_discarded()) return Bad("", "the request body is not valid JSON");
  if (!parsed.is_object()) return Bad("", "the request body must be a JSON object");
  out = CompletionRequest{};
  out.chat = chat;
  Fields fields(parsed);
  fields.String("model", out.model);
  if (chat) {
    ReadMessages(fields, out);
    fields.Integer("max_completion_tokens", 1, std::numeric_limits<int32_t>::max(), out.max_tokens);
  } else {
    ReadPrompt(fields, out);
  }
  fields.Integer("max_tokens", 1, std::numeric_limits<int32_t>::max(), out.max_tokens);
  fields.Number("temperature", 0, 2, out.temperature);
  fields.Number("top_p", std::numeric_limits<double>::min(), 1, out.top_p);
  std::optional<int64_t> top_k, seed, n;
  fields.Integer("top_k", -1, std::numeric_limits<int32_t>::max(), top_k);
  if (top_k) out.top_k = std::max<int64_t>(*top_k, 0);
  fields.Integer("seed", std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(),
                 seed);
  if (seed) out.seed = static_cast<uint64_t>(*seed);
  fields.Integer("n", 1, 1, n);
  ReadStop(fields, out.stop);
  fields.Boolean("stream", out.stream);
  fields.Boolean("ignore_eos", out.ignore_eos);
  if (const json* options = fields.Find("stream_options")) {
    if (!options->is_object()) {
      fields.Fail("stream_options", "'stream_options' must be an object");
    } else if (options->contains("include_usage")) {
      if (!(*options)["include_usage"].is_boolean()) {
        fields.Fail("stream_options", "'stream_options.include_usage' must be true or false");
      } else {
        out.include_usage = (*options)["include_usage"].get<bool>();
      }
    }
  }
  fields.Unsupported("best_of", 1, "one sequence per request");
  fields.Unsupported("echo", false, "the prompt is not returned");
  fields.Unsupported("logprobs", chat ? json(false) : json(0), "no log probabilities");
  fields.Unsupported("top_logprobs", 0, "no log probabilities");
  fields.Unsupported("presence_penalty", 0, "no penalties");
  fields.Unsupported("frequency_penalty", 0, "no penalties");
  fields.Unsupported("logit_bias", json::object(), "no logit bias");
  fields.Unsupported("tools", json::array(), "no tool calls");
  return fields.error();
}

}  // namespace hwinfer::serve
