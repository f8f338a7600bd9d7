// bench_run.cpp — see bench_run.h.
#include "bench_run.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>

#include "bench_model_source.h"
#include "hwinfer/config.h"
#include "hwinfer/dataset.h"
#include "hwinfer/hardware_spec.h"
#include "hwinfer/llama_executor.h"
#include "hwinfer/llama_model.h"
#include "hwinfer/model_shape.h"
#include "hwinfer/scheduler.h"
#include "hwinfer/workload.h"
#include "model_run.h"
#include "mpi_ranks.h"

namespace hwinfer::cli {
namespace {

namespace fs = std::filesystem;

}  // namespace

Status ApplyWorkloadFlags(const BenchFlags& flags, WorkloadSpec& workload) {
  if (!flags.dataset.empty()) {
    HWINFER_ASSIGN_OR_RETURN(DatasetSpec dataset, ParseDatasetSpec(flags.dataset));
    dataset.override_output = workload.dataset.override_output;
    workload.dataset = dataset;
    if (dataset.kind != DatasetSpec::Kind::kRandom) workload.jsonl_file.clear();
  }
  if (flags.num_requests > 0) workload.num_requests = flags.num_requests;
  if (flags.output_len > 0) {
    workload.output = LengthDistribution{};
    workload.output.value = flags.output_len;
    workload.dataset.override_output = true;
  }
  if (flags.seed) workload.seed = *flags.seed;
  if (flags.disable_shuffle) workload.dataset.shuffle = false;
  return Status::Ok();
}

namespace {

// "a,b" -> {"a", "b"}; an empty item is an error naming the flag.
StatusOr<std::vector<std::string>> SplitDeviceList(const std::string& text) {
  std::vector<std::string> items = SplitCommas(text);
  if (std::find(items.begin(), items.end(), "") != items.end()) {
    return InvalidArgument("--devices '" + text +
                           "' has an empty item; expected devices separated by commas, e.g. "
                           "cpu:0,vulkan:0");
  }
  return items;
}

}  // namespace

StatusOr<std::vector<std::shared_ptr<Device>>> OpenDeviceList(
    Registry& registry, const std::vector<std::string>& selectors, const std::string& where) {
  std::vector<std::string> ids;
  std::vector<std::shared_ptr<Device>> devices;
  for (const std::string& selector : selectors) {
    StatusOr<const RegisteredDevice*> found = registry.Find(selector);
    if (!found.ok()) return found.status().WithContext(where);
    const RegisteredDevice* target = *found;
    const std::string id = target->id();
    const auto seen = std::find(ids.begin(), ids.end(), id);
    if (seen != ids.end()) {
      return InvalidArgument(
          fmt::format("{} names device {} twice (as '{}' and '{}'); each device runs one replica",
                      where, id, selectors[static_cast<size_t>(seen - ids.begin())], selector));
    }
    ids.push_back(id);
    HWINFER_ASSIGN_OR_RETURN(std::shared_ptr<Device> device, registry.Open(*target));
    devices.push_back(std::move(device));
  }
  return devices;
}

StatusOr<std::vector<std::shared_ptr<Device>>> OpenDevicesFlag(Registry& registry,
                                                               const std::string& list) {
  HWINFER_ASSIGN_OR_RETURN(const std::vector<std::string> selectors, SplitDeviceList(list));
  return OpenDeviceList(registry, selectors, "--devices");
}

namespace {

Status OpenBenchDevices(const BenchFlags& flags, const BenchConfig& config,
                        PreparedBench& prepared) {
  const bool flag_picks_one = !flags.device.empty() || !flags.backend.empty();
  if (!flags.devices.empty() && flag_picks_one) {
    return InvalidArgument("give either --devices or --device/--backend, not both");
  }
  if (!flags.devices.empty()) {
    HWINFER_ASSIGN_OR_RETURN(prepared.devices, OpenDevicesFlag(prepared.registry, flags.devices));
  } else if (!flag_picks_one && !config.devices.empty()) {
    HWINFER_ASSIGN_OR_RETURN(prepared.devices, OpenDeviceList(prepared.registry, config.devices,
                                                              config.file + " scheduler.devices"));
  } else {
    // Flags first (device, then backend), then the config (device, then backend).
    const RegisteredDevice* target = nullptr;
    if (flag_picks_one) {
      HWINFER_ASSIGN_OR_RETURN(target,
                               SelectDevice(prepared.registry, flags.device, flags.backend, ""));
    } else {
      HWINFER_ASSIGN_OR_RETURN(target,
                               SelectDevice(prepared.registry, config.device, config.backend,
                                            " (named by " + config.file + ")"));
    }
    HWINFER_ASSIGN_OR_RETURN(std::shared_ptr<Device> device, prepared.registry.Open(*target));
    prepared.devices.push_back(std::move(device));
  }
  prepared.device = prepared.devices.front();
  prepared.device_id = prepared.device->id();
  return Status::Ok();
}

}  // namespace

StatusOr<std::unique_ptr<PreparedBench>> PrepareBench(const GlobalOptions& global,
                                                      const BenchFlags& flags) {
  const std::string config_file =
      flags.config_file.empty() ? global.config_file : flags.config_file;
  if (config_file.empty()) {
    return InvalidArgument(
        "no config file: give --config FILE.yaml (runtime section and model, "
        "workload, scheduler, ...)");
  }
  auto prepared = std::make_unique<PreparedBench>();
  HWINFER_ASSIGN_OR_RETURN(prepared->config, LoadBenchConfig(config_file));
  BenchConfig& config = prepared->config;
  if (config.model.path.empty() && config.model.shape.empty()) {
    return InvalidArgument(config_file +
                           ": no 'model' section; expected model: {path: FILE.gguf} "
                           "or model: {shape: NAME}");
  }
  HWINFER_RETURN_IF_ERROR(ApplyWorkloadFlags(flags, config.workload));
  // Fail fast on a bad workload (a JSONL line, an arrival past the bound, a dataset file) before
  // plugins and the model load; RunBench draws the same requests again with the model's
  // vocabulary or tokenizer, from the dataset file read here.
  if (config.workload.dataset.kind != DatasetSpec::Kind::kRandom) {
    HWINFER_RETURN_IF_ERROR(config.workload.Validate());
    HWINFER_ASSIGN_OR_RETURN(DatasetFile dataset, ReadDataset(config.workload.dataset));
    prepared->run_options.dataset = std::make_shared<const DatasetFile>(std::move(dataset));
  } else {
    HWINFER_RETURN_IF_ERROR(CheckWorkload(config.workload));
  }
  // A shape is synthesised once into the cache (or written as a sparse dummy file).
  HWINFER_ASSIGN_OR_RETURN(prepared->run_options.model_path, ResolveBenchModel(config.model));
  HWINFER_ASSIGN_OR_RETURN(RuntimeConfig runtime, LoadRuntimeConfig(config_file));
  if (!flags.hardware_file.empty()) {
    HWINFER_ASSIGN_OR_RETURN(HardwareSpec spec, LoadHardwareSpec(flags.hardware_file));
    prepared->run_options.hardware = std::move(spec);
    // The simulated backend models the hardware named by its `hardware` plugin option.
    const std::string absolute = fs::absolute(flags.hardware_file).lexically_normal().string();
    for (BackendConfig& backend : runtime.backends) {
      if (backend.name == "sim") backend.options["hardware"] = absolute;
    }
  }
  // --tp N on the simulator (no mpirun): its ranks need N simulated devices.
  if (flags.tp > 1 && !StartedByMpirun()) {
    for (BackendConfig& backend : runtime.backends) {
      if (backend.name == "sim" && !backend.options.count("devices")) {
        backend.options["devices"] = std::to_string(flags.tp);
      }
    }
  }
  HWINFER_ASSIGN_OR_RETURN(prepared->registry, BuildRegistry(global, std::move(runtime)));

  HWINFER_RETURN_IF_ERROR(OpenBenchDevices(flags, config, *prepared));

  if (!flags.split.empty()) config.split_layers = flags.split == "layers";
  if (!flags.layer_split.empty()) {
    HWINFER_ASSIGN_OR_RETURN(config.layer_split,
                             ParseLayerSplit(flags.layer_split, "--layer-split"));
  }
  if (!flags.routing.empty()) {
    HWINFER_ASSIGN_OR_RETURN(config.routing, ParseReplicaRouting(flags.routing));
  }
  if (!flags.mode.empty()) {
    HWINFER_ASSIGN_OR_RETURN(config.scheduler.mode, ParseBatchingMode(flags.mode));
  }
  if (!flags.tp_collectives.empty()) {
    HWINFER_ASSIGN_OR_RETURN(config.tp_collectives, ParseTpCollectives(flags.tp_collectives));
  }
  if (!flags.kv_reservation.empty()) {
    HWINFER_ASSIGN_OR_RETURN(config.scheduler.kv_reservation,
                             ParseKvReservation(flags.kv_reservation));
  }
  prepared->run_options.probe_peaks = !flags.no_probe;
  if (flags.max_sequences > 0) config.scheduler.max_sequences = flags.max_sequences;
  return prepared;
}

namespace {

// --tp N without mpirun: the ranks are threads on the simulator's devices.
StatusOr<std::unique_ptr<PreparedBench>> PrepareSimulatedRanks(const GlobalOptions& global,
                                                               const BenchFlags& flags) {
  if (!flags.devices.empty()) {
    return InvalidArgument(fmt::format(
        "--tp {} without mpirun runs the ranks on the simulator's devices, one after another "
        "from --device; --devices names one device per rank under mpirun",
        flags.tp));
  }
  HWINFER_ASSIGN_OR_RETURN(auto prepared, PrepareBench(global, flags));
  const Device& device = *prepared->device;
  if (device.info().device_type != HWINFER_DEVICE_TYPE_VIRTUAL) {
    return InvalidArgument(fmt::format(
        "--tp {} on the real device {} runs one rank per process: start it with mpirun -np {}",
        flags.tp, device.id(), flags.tp));
  }
  std::optional<HardwareSpec> spec = prepared->run_options.hardware;
  if (!spec) {
    HWINFER_ASSIGN_OR_RETURN(
        spec, FindKnownHardware(device.info().name, KnownHardwareDirs(prepared->config.file)));
  }
  if (!spec || spec->interconnect.bandwidth_bytes_per_s <= 0) {
    return InvalidArgument(fmt::format(
        "--tp {} on the simulated device {} prices its all-reduces by a hardware file's "
        "`interconnect:` section; {} (give --hardware FILE with one)",
        flags.tp, device.id(),
        spec ? spec->file + " has none" : std::string("no known hardware file matches it")));
  }
  HWINFER_ASSIGN_OR_RETURN(
      prepared->simulated_ranks,
      SimulatedRanks::Start(prepared->registry, prepared->device, prepared->run_options.model_path,
                            static_cast<int>(flags.tp), spec->interconnect, flags.tp_timeout_s));
  prepared->run_options.collective = prepared->simulated_ranks->rank0();
  return prepared;
}

}  // namespace

StatusOr<std::unique_ptr<PreparedBench>> PrepareBenchRanks(const GlobalOptions& global,
                                                           const BenchFlags& flags) {
  if (flags.tp == 1) return PrepareBench(global, flags);
  if (!StartedByMpirun()) return PrepareSimulatedRanks(global, flags);
  HWINFER_ASSIGN_OR_RETURN(std::shared_ptr<Collective> collective,
                           JoinMpiRanks(flags.tp, flags.tp_timeout_s));
  BenchFlags rank_flags = flags;
  HWINFER_ASSIGN_OR_RETURN(rank_flags.device,
                           RankDevice(flags.devices, flags.device, flags.tp, collective->rank()));
  rank_flags.devices.clear();
  // Rank 0 prepares first (and, should it fail, ends every rank); then the others.
  int32_t prepared_on_rank0 = 1;
  if (collective->rank() == 0) {
    HWINFER_ASSIGN_OR_RETURN(auto prepared, PrepareBench(global, rank_flags));
    HWINFER_RETURN_IF_ERROR(collective->Broadcast(&prepared_on_rank0, sizeof(prepared_on_rank0),
                                                  "rank 0 preparing the bench", false));
    prepared->run_options.collective = std::move(collective);
    return prepared;
  }
  HWINFER_RETURN_IF_ERROR(collective->Broadcast(&prepared_on_rank0, sizeof(prepared_on_rank0),
                                                "rank 0 preparing the bench", true));
  StatusOr<std::unique_ptr<PreparedBench>> prepared = PrepareBench(global, rank_flags);
  StatusOr<std::shared_ptr<const LlamaModel>> model =
      prepared.ok() ? LlamaModel::Open((*prepared)->run_options.model_path)
                    : StatusOr<std::shared_ptr<const LlamaModel>>(prepared.status());
  if (!model.ok()) return LlamaExecutor::FailTensorParallel(*collective, model.status());
  HWINFER_RETURN_IF_ERROR(
      LlamaExecutor::FollowTensorParallel(collective, (*prepared)->device, *model));
  (*prepared)->followed = true;
  return prepared;
}

StatusOr<std::string> CheckBenchSections(const BenchConfig& config, const Registry& registry) {
  std::string model = "no model";
  int64_t max_model_len = 0;
  if (!config.model.path.empty()) {
    auto opened_or = LlamaModel::Open(config.model.path);
    if (!opened_or.ok()) return opened_or.status().WithContext(config.file + ": model.path");
    const auto& opened = *opened_or;
    max_model_len = opened->shape().context_length;
    model = fmt::format("model {} ({} layers, context {})", config.model.path,
                        opened->shape().n_layers, max_model_len);
  } else if (!config.model.shape.empty()) {
    HWINFER_ASSIGN_OR_RETURN(const ModelShape shape, LoadModelShape(config.model.shape));
    max_model_len = shape.context_length;
    model =
        fmt::format("model shape {} ({}, {} weights)", shape.name, config.model.type,
                    config.model.weights == ModelSource::Weights::kDummy ? "dummy" : "synthesised");
  }
  HWINFER_RETURN_IF_ERROR(CheckWorkload(config.workload, max_model_len));
  if (!config.device.empty() || !config.backend.empty()) {
    HWINFER_RETURN_IF_ERROR(
        SelectDevice(registry, config.device, config.backend, " (named by " + config.file + ")")
            .status());
  }
  for (const std::string& device : config.devices) {
    HWINFER_RETURN_IF_ERROR(
        SelectDevice(registry, device, "", " (named by " + config.file + " scheduler.devices)")
            .status());
  }
  return model;
}

std::function<void(const BenchProgress&)> MakeProgressLine(bool enabled, const std::string& label) {
  if (!enabled) return {};
  const bool terminal = ::isatty(::fileno(stderr)) != 0;
  auto last_line_s = std::make_shared<double>(0);
  return [label, terminal, last_line_s](const BenchProgress& p) {
    const double fraction =
        p.total > 0 ? static_cast<double>(p.finished) / static_cast<double>(p.total) : 0.0;
    const double tokens_per_s = p.now_s > 0 ? static_cast<double>(p.output_tokens) / p.now_s : 0;
    const double requests_per_s = p.now_s > 0 ? static_cast<double>(p.finished) / p.now_s : 0;
    const std::string counts = fmt::format(
        "{}/{} done, {} running, {} waiting, {:.0f} s, {:.2f} req/s, {:.1f} tok/s", p.finished,
        p.total, p.running, p.waiting, p.now_s, requests_per_s, tokens_per_s);
    PrintProgressUpdate(terminal, label.empty() ? "" : label + " ", fraction, p.now_s, counts,
                        last_line_s.get());
  };
}

void PrintProgressUpdate(bool terminal, const std::string& prefix, double fraction, double now_s,
                         const std::string& counts, double* last_line_s) {
  if (terminal) {
    constexpr int kWidth = 24;
    const int filled = static_cast<int>(fraction * kWidth);
    fmt::print(stderr, "\r{}[{}{}] {}   ", prefix, std::string(static_cast<size_t>(filled), '#'),
               std::string(static_cast<size_t>(kWidth - filled), '.'), counts);
  } else {
    // Not a terminal (a CI log, a file): a plain line every kPlainEvery seconds of the run.
    constexpr double kPlainEvery = 10;
    if (now_s - *last_line_s < kPlainEvery) return;
    *last_line_s = now_s;
    fmt::print(stderr, "hwinfer: {}{:.0f}%: {}\n", prefix, fraction * 100, counts);
  }
  std::fflush(stderr);
}

void EndProgressLine(bool enabled) {
  if (enabled && ::isatty(::fileno(stderr)) != 0) fmt::print(stderr, "\n");
}

Status WriteTextFile(const std::string& path, const std::string& text) {
  std::error_code ec;
  const fs::path parent = fs::path(path).parent_path();
  if (!parent.empty()) fs::create_directories(parent, ec);
  if (ec) return InvalidArgument("cannot create folder '" + parent.string() + "': " + ec.message());
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  if (!out) return InvalidArgument("cannot write '" + path + "'");
  return Status::Ok();
}

}  // namespace hwinfer::cli
