// openai_response.h — the response bodies of OpenAI's completions and chat completions, whole
// and as stream chunks, as its API documents them (text_completion / chat.completion /
// chat.completion.chunk objects, usage counts), and the Server-Sent Events that carry chunks.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace hwinfer::serve {

// What every body and chunk of one response repeats.
struct ResponseHeader {
  bool chat = false;
  std::string id;       // "cmpl-..." or "chatcmpl-..."
  int64_t created = 0;  // Unix seconds
  std::string model;
};

// A fresh header: a random id with the API's prefix, the current time.
ResponseHeader NewResponseHeader(bool chat, const std::string& model);

nlohmann::json Usage(int64_t prompt_tokens, int64_t completion_tokens);
// The whole answer (stream = false).
nlohmann::json CompletionBody(const ResponseHeader& header, const std::string& text,
                              const std::string& finish_reason, int64_t prompt_tokens,
                              int64_t completion_tokens);
// One chunk of a stream: |text| so far unsent; |finish_reason| "" until the last; chat streams
// open with a chunk whose delta carries the role (|opening|).
nlohmann::json ChunkBody(const ResponseHeader& header, const std::string& text,
                         const std::string& finish_reason, bool opening = false);
// The chunk stream_options.include_usage asks for after the last: no choices, the usage.
nlohmann::json UsageChunk(const ResponseHeader& header, int64_t prompt_tokens,
                          int64_t completion_tokens);
// "data: <json>\n\n".
std::string SseEvent(const nlohmann::json& body);
inline constexpr const char* kSseDone = "data: [DONE]\n\n";

}  // namespace hwinfer::serve
