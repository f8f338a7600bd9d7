// endpoint_client.h — one streamed request to an OpenAI-compatible server (hwinfer serve,
// llama.cpp's llama-server, vLLM), timed at the client: when the response started, when each
// Server-Sent Event chunk that carries a token arrived, and the server's own token count (usage)
// when it sends one. For `hwinfer bench --endpoint`.
#pragma once

#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "hwinfer/status.h"

namespace hwinfer::serve {

// "http://HOST:PORT[/PREFIX]" (PREFIX defaults to /v1).
struct Endpoint {
  std::string host;
  int port = 80;
  std::string prefix = "/v1";
};
// InvalidArgument naming the URL and the expected form (https is not supported).
StatusOr<Endpoint> ParseEndpoint(const std::string& url);

struct StreamedResponse {
  bool ok = false;
  std::string error;                 // when !ok: the HTTP status and body, or the transport error
  std::vector<double> chunk_times;   // seconds from |start| at each chunk that carried a choice
  std::vector<bool> chunk_has_text;  // ... and whether it carried text
  int64_t usage_tokens = -1;         // usage.completion_tokens, -1 when the server sent none
  std::string text;                  // the streamed text, concatenated
  std::string finish_reason;
};

// POSTs |body| (stream forced on, usage asked for) to PREFIX/completions or
// PREFIX/chat/completions and reads the stream to its end; times are seconds since |start|.
StreamedResponse PostStreaming(const Endpoint& endpoint, bool chat, nlohmann::json body,
                               std::chrono::steady_clock::time_point start, double timeout_s = 600);

// GET PREFIX/models: the first model's id (what requests name), or the error.
StatusOr<std::string> FirstModelId(const Endpoint& endpoint);

}  // namespace hwinfer::serve
