// openai_server.h — `hwinfer serve`'s HTTP front: OpenAI's completions and chat completions
// (streamed as Server-Sent Events or whole), /v1/models, /health and Prometheus' /metrics, over
// one ServingEngine per device (hwinfer/serving_replicas.h), with cpp-httplib. Text in and out
// through the model's tokenizer; chat messages through its chat template. Docs: docs/serving.md.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "hwinfer/serving_replicas.h"
#include "hwinfer/status.h"
#include "hwinfer/tokenizer.h"
#include "openai_request.h"

namespace httplib {
class Server;
}

namespace hwinfer::serve {

// Renders a chat for the model (its chat template, with the assistant's turn opened), or an
// error naming what is wrong (no user turn, no template).
using ChatRenderer = std::function<StatusOr<std::string>(const std::vector<ChatMessage>&)>;

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;         // 0: any free port (Bind returns it)
  std::string model_name;  // what /v1/models lists and requests must name (or omit)
  int threads = 128;       // HTTP worker threads: one per open connection (streams hold one)
  ChatRenderer render_chat;
};

class OpenAiServer {
 public:
  // |engine| and |tokenizer| must outlive the server.
  OpenAiServer(ServingReplicas& engine, const Tokenizer& tokenizer, ServerOptions options);
  ~OpenAiServer();

  // Binds the listening socket; returns the port. Unavailable naming host:port when it cannot.
  StatusOr<int> Bind();
  // Answers requests until Stop (blocks).
  void Serve();
  // Stops listening; Serve returns once the open connections' handlers are done. Any thread.
  void Stop();

 private:
  struct Completion;
  void Route();
  void HandleCompletion(const std::string& body, bool chat, void* response);
  StatusOr<std::vector<int32_t>> PromptIds(const CompletionRequest& request,
                                           std::optional<ApiError>& error) const;

  ServingReplicas& engine_;
  const Tokenizer& tokenizer_;
  ServerOptions options_;
  std::unique_ptr<httplib::Server> http_;
};

}  // namespace hwinfer::serve
