// openai_request.h — the bodies of OpenAI's POST /v1/completions and /v1/chat/completions as
// `hwinfer serve` takes them: parsed and checked field by field, so a bad request gets a 400 that
// names the field (OpenAI's error object), before anything is tokenized or queued.
//
// Supported: model, prompt (a string or an array of token ids; one prompt), messages (system /
// developer / user / assistant; content a string or text parts), max_tokens
// (max_completion_tokens), temperature, top_p, top_k (vLLM; -1 or 0 = off), seed, stop (a string
// or up to 4), stream, stream_options.include_usage, ignore_eos (vLLM), n = 1. Fields this server
// cannot honour (n > 1, best_of > 1, echo, logprobs, non-zero penalties, logit_bias, tools)
// are refused rather than ignored; fields OpenAI does not define are ignored, as OpenAI does.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "hwinfer/chat_template.h"

namespace hwinfer::serve {

// An error answered as {"error": {"message", "type", "param", "code"}}.
struct ApiError {
  int http_status = 400;
  std::string message;
  std::string type = "invalid_request_error";
  std::string param;  // "" = null
  nlohmann::json ToJson() const;
};

struct CompletionRequest {
  bool chat = false;
  std::string model;                // "" when not given
  std::string prompt_text;          // completions: a text prompt
  std::vector<int32_t> prompt_ids;  // completions: a prompt of token ids (prompt_text unused)
  bool prompt_is_ids = false;
  std::vector<ChatMessage> messages;  // chat ("developer" read as "system")
  std::optional<int64_t> max_tokens;  // none: 16 for completions, the context left for chat
  double temperature = 1.0;
  double top_p = 1.0;
  int64_t top_k = 0;  // 0 = off
  std::optional<uint64_t> seed;
  std::vector<std::string> stop;
  bool stream = false;
  bool include_usage = false;
  bool ignore_eos = false;
};

// Parses |body| (the raw request body) for /v1/completions (|chat| false) or
// /v1/chat/completions. Errors: not JSON, not an object, a field of the wrong type or out of
// range, a missing prompt / messages, an unsupported option.
std::optional<ApiError> ParseCompletionRequest(const std::string& body, bool chat,
                                               CompletionRequest& out);

}  // namespace hwinfer::serve
