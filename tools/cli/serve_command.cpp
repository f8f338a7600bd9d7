// serve_command.cpp — `hwinfer serve -m MODEL.gguf | --config FILE [--device D | --backend B |
// --devices A,B] [--host 127.0.0.1] [--port 8080] ...`: one model on one device (or one replica
// per device, hwinfer/serving_replicas.h) behind an OpenAI-compatible HTTP endpoint
// (tools/serve/openai_server.h) with continuous batching (the ServingEngine). SIGINT or
// SIGTERM stops accepting, lets in-flight requests finish for up to --drain-timeout seconds,
// and exits 0. Docs: docs/serving.md.
#include <fmt/format.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <csignal>
#include <thread>

#include "bench_run.h"
#include "commands.h"
#include "hwinfer/bench_runner.h"
#include "hwinfer/chat_template.h"
#include "hwinfer/gguf.h"
#include "hwinfer/hardware_spec.h"
#include "hwinfer/llama_model.h"
#include "hwinfer/replica_routing.h"
#include "hwinfer/serving_replicas.h"
#include "hwinfer/tokenizer.h"
#include "model_run.h"
#include "mpi_ranks.h"
#include "openai_server.h"

namespace hwinfer::cli {
namespace {

// What the engine runs: the device, the model file and the scheduler and executor settings, from
// --config (its model, scheduler and KV sections) or from the flags.
struct ServeSetup {
  Registry registry;
  std::vector<std::shared_ptr<Device>> devices;  // one replica each
  ReplicaRouting routing = ReplicaRouting::kLeastTokens;
  std::string model_path;
  EngineOptions engine;
};

StatusOr<std::unique_ptr<ServeSetup>> Prepare(const GlobalOptions& global,
                                              const ServeOptions& options) {
  auto setup = std::make_unique<ServeSetup>();
  EngineOptions& engine = setup->engine;
  if (!options.config_file.empty()) {
    BenchFlags flags;
    flags.config_file = options.config_file;
    flags.backend = options.run.backend;
    flags.device = options.run.device;
    flags.devices = options.devices;
    flags.routing = options.routing;
    flags.no_probe = true;
    HWINFER_ASSIGN_OR_RETURN(auto prepared, PrepareBench(global, flags));
    if (prepared->config.split_layers && prepared->devices.size() > 1) {
      return InvalidArgument(options.config_file +
                             ": scheduler.split: layers is for generate and bench for now; serve "
                             "runs one replica per device (split: replicas)");
    }
    setup->registry = std::move(prepared->registry);
    setup->devices = prepared->devices;
    setup->routing = prepared->config.routing;
    setup->model_path =
        options.run.model_path.empty() ? prepared->config.model.path : options.run.model_path;
    if (setup->model_path.empty()) {
      return InvalidArgument(options.config_file +
                             ": model.path: serve needs a GGUF file (with its tokenizer), not a "
                             "model shape");
    }
    engine.scheduler = prepared->config.scheduler;
    engine.executor.kv_block_size = prepared->config.kv_block_size;
    engine.executor.kv_cache_tokens = prepared->config.kv_cache_tokens;
    engine.executor.decode_graphs = prepared->config.decode_graphs;
    engine.executor.tp_collectives = prepared->config.tp_collectives;
    engine.executor.kv_dtype =
        prepared->config.kv_dtype == "i8" ? HWINFER_DTYPE_I8 : HWINFER_DTYPE_F16;
  } else {
    HWINFER_ASSIGN_OR_RETURN(setup->registry, BuildRegistry(global));
    if (!options.devices.empty()) {
      HWINFER_ASSIGN_OR_RETURN(setup->devices, OpenDevicesFlag(setup->registry, options.devices));
    } else {
      HWINFER_ASSIGN_OR_RETURN(
          const RegisteredDevice* target,
          SelectDevice(setup->registry, options.run.device, options.run.backend));
      HWINFER_ASSIGN_OR_RETURN(std::shared_ptr<Device> device, setup->registry.Open(*target));
      setup->devices.push_back(std::move(device));
    }
    if (!options.routing.empty()) {
      HWINFER_ASSIGN_OR_RETURN(setup->routing, ParseReplicaRouting(options.routing));
    }
    setup->model_path = options.run.model_path;
    engine.scheduler.max_batch_tokens = options.run.max_batch_tokens;
    engine.executor.decode_graphs = options.run.decode_graphs;
    engine.executor.kv_dtype = options.run.kv_dtype == "i8" ? HWINFER_DTYPE_I8 : HWINFER_DTYPE_F16;
  }
  if (!options.run.tp_collectives.empty()) {
    HWINFER_ASSIGN_OR_RETURN(engine.executor.tp_collectives,
                             ParseTpCollectives(options.run.tp_collectives));
  }
  if (options.max_sequences > 0) engine.scheduler.max_sequences = options.max_sequences;
  if (options.kv_cache_tokens > 0) engine.executor.kv_cache_tokens = options.kv_cache_tokens;
  engine.scheduler.max_model_len = 0;  // the model's context
  engine.executor.max_batch_tokens =
      std::max(engine.scheduler.max_batch_tokens, engine.scheduler.max_sequences);
  engine.executor.max_sequences = engine.scheduler.max_sequences;
  engine.max_waiting = options.max_waiting;
  return setup;
}

// How chats are rendered: --chat-template, else the model's tokenizer.chat_template. A model
// without one, or with one of no known family, still serves completions; its chat requests are
// answered 400 with the reason.
StatusOr<serve::ChatRenderer> ChatRendererFor(const GgufFile& file, const std::string& name) {
  StatusOr<ChatTemplate> chat =
      name.empty() ? ChatTemplate::FromGguf(file) : ChatTemplate::FromName(name);
  if (!chat.ok()) {
    if (!name.empty()) return chat.status();
    const std::string reason = chat.status().message() + " (pass --chat-template NAME)";
    fmt::print(stderr, "hwinfer: warning: chat completions unavailable: {}\n", reason);
    return serve::ChatRenderer([reason](const std::vector<ChatMessage>&) -> StatusOr<std::string> {
      return InvalidArgument(reason);
    });
  }
  return serve::ChatRenderer([chat = *chat](const std::vector<ChatMessage>& messages) {
    return chat.Render(messages, true);
  });
}

// SIGINT and SIGTERM, blocked in this thread and so in every thread it starts later (the
// engine's, the plugin's, the HTTP pool's): a watcher thread takes them with sigwait.
sigset_t BlockStopSignals() {
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  return stop_signals;
}

}  // namespace

int RunServe(const GlobalOptions& global, const ServeOptions& flags) {
  std::signal(SIGPIPE, SIG_IGN);  // a client gone mid-stream is a failed write, not a signal
  // Before any thread starts. Ranks other than 0 of --tp keep them blocked: mpirun's SIGTERM
  // reaches rank 0, which drains, and the others end when it does.
  const sigset_t stop_signals = BlockStopSignals();
  ServeOptions options = flags;
  std::shared_ptr<Collective> collective;
  if (options.run.tp > 1) {
    auto joined = JoinMpiRanks(options.run.tp, options.run.tp_timeout_s);
    if (!joined.ok()) return ReportError(joined.status());
    collective = *joined;
    auto device =
        RankDevice(options.devices, options.run.device, options.run.tp, collective->rank());
    if (!device.ok()) return ReportError(device.status());
    options.run.device = *device;
    options.devices.clear();
  }
  auto setup = Prepare(global, options);
  StatusOr<std::shared_ptr<const LlamaModel>> model =
      setup.ok() ? LlamaModel::Open((*setup)->model_path)
                 : StatusOr<std::shared_ptr<const LlamaModel>>(setup.status());
  if (collective != nullptr && collective->rank() != 0) {  // follow rank 0's engine
    const Status followed =
        model.ok()
            ? LlamaExecutor::FollowTensorParallel(collective, (*setup)->devices.front(), *model)
            : LlamaExecutor::FailTensorParallel(*collective, model.status());
    return followed.ok() ? 0 : ReportError(followed);
  }
  if (!model.ok()) return ReportError(model.status());
  (*setup)->engine.collective = collective;
  auto tokenizer = Tokenizer::FromGguf((*model)->file());
  if (!tokenizer.ok()) {
    return ReportError(tokenizer.status().WithContext("serve needs the model's tokenizer"));
  }
  auto chat = ChatRendererFor((*model)->file(), options.chat_template);
  if (!chat.ok()) return ReportError(chat.status());
  std::optional<HardwareSpec> hardware;
  if (!options.hardware_file.empty()) {
    auto spec = LoadHardwareSpec(options.hardware_file);
    if (!spec.ok()) return ReportError(spec.status());
    hardware = *spec;
  }
  std::vector<PeakRates> peaks;
  for (const std::shared_ptr<Device>& device : (*setup)->devices) {
    auto device_peaks = ModelPeaks(device, **model, hardware, !options.no_probe, 0, 0);
    if (!device_peaks.ok()) return ReportError(device_peaks.status());
    peaks.push_back(ScaledPeaks(*device_peaks, static_cast<int>(options.run.tp)));
  }
  auto engine = ServingReplicas::Create((*setup)->devices, *model, (*setup)->engine, peaks,
                                        (*setup)->routing);
  if (!engine.ok()) return ReportError(engine.status().WithContext((*setup)->model_path));
  serve::ServerOptions server_options;
  server_options.host = options.host;
  server_options.port = options.port;
  server_options.threads = options.http_threads;
  server_options.model_name =
      options.served_model_name.empty() ? (*model)->shape().name : options.served_model_name;
  server_options.render_chat = *chat;
  serve::OpenAiServer server(**engine, **tokenizer, server_options);
  auto port = server.Bind();
  if (!port.ok()) return ReportError(port.status());
  std::thread watcher([&] {
    int signal = 0;
    if (sigwait(&stop_signals, &signal) != 0) return;
    fmt::print(stderr, "hwinfer: {}: draining (up to {:g} s), then exiting\n",
               signal == SIGINT ? "SIGINT" : "SIGTERM", options.drain_timeout_s);
    (*engine)->Shutdown(options.drain_timeout_s);
    server.Stop();
  });
  fmt::print(stderr, "hwinfer: serving '{}' on {} at http://{}:{} (OpenAI API under /v1)\n",
             server_options.model_name, (*engine)->DeviceIds(), options.host, *port);
  server.Serve();
  // Serve returns after the watcher stopped it; should it return on its own, wake the watcher.
  if ((*engine)->accepting()) kill(getpid(), SIGTERM);
  watcher.join();
  return 0;
}

}  // namespace hwinfer::cli
