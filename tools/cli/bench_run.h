// tools/cli/bench_run.h — what `hwinfer bench` and `hwinfer sweep` share: their common flags,
// loading one config file as both the runtime section (registry) and the bench sections,
// applying flag overrides, picking the device, the live progress line and writing result files.
// No measuring here: RunBench (hwinfer/bench_runner.h) does that.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli_common.h"
#include "hwinfer/bench_config.h"
#include "hwinfer/bench_runner.h"
#include "hwinfer/registry.h"
#include "simulated_ranks.h"

namespace hwinfer::cli {

struct BenchFlags {
  std::string config_file;     // --config; falls back to the global --config
  std::string backend;         // --backend: that backend's first device
  std::string device;          // --device: an exact device (cpu:0, a name or a UUID)
  std::string devices;         // --devices A,B: one replica per device ("" = the config's)
  std::string routing;         // --routing least_tokens|round_robin ("" = the config's)
  std::string split;           // --split replicas|layers ("" = the config's)
  std::string layer_split;     // --layer-split 11,11 ("" = the config's)
  std::string hardware_file;   // --hardware: spec peaks; also the sim plugin's `hardware` option
  std::string mode;            // --mode continuous|dynamic|static ("" = the config's)
  std::string kv_reservation;  // --kv-reservation paged|max_length ("" = the config's)
  int64_t num_requests = 0;    // --num-requests / --num-prompts (0 = the config's)
  std::string dataset;         // --dataset sharegpt:FILE | jsonl:FILE | random ("" = the config's)
  int64_t output_len = 0;      // --output-len: every request's output length (0 = the config's)
  std::optional<uint64_t> seed;  // --seed: the workload's seed
  bool disable_shuffle = false;  // --disable-shuffle: dataset prompts in file order
  int64_t max_sequences = 0;     // --max-sequences (0 = the config's)
  bool no_progress = false;      // --no-progress
  bool no_probe = false;         // --no-probe: no measured peaks (MBU/MFU against them read 0)
  int64_t tp = 1;                // --tp N: tensor-parallel ranks (one MPI process each)
  double tp_timeout_s = 60;      // --tp-timeout S: the longest wait for the other ranks
  std::string tp_collectives;    // --tp-collectives auto|host|device ("" = the config's)
};

// The workload flags (--dataset, --num-requests, --output-len, --seed, --disable-shuffle) over
// the config's workload.
Status ApplyWorkloadFlags(const BenchFlags& flags, WorkloadSpec& workload);

// Everything a run needs, loaded from the config and the flags.
struct PreparedBench {
  Registry registry;
  std::shared_ptr<Device> device;  // the first of |devices|
  std::string device_id;           // "cpu:0"
  // One replica per device: --devices, else scheduler.devices, else the one device above.
  std::vector<std::shared_ptr<Device>> devices;
  BenchConfig config;  // with the flag overrides applied
  BenchRunOptions run_options;
  // With --tp, on ranks other than 0: this rank has followed rank 0's runs to the end; the
  // command has nothing left to do.
  bool followed = false;
  // With --tp on the simulator: the other ranks' threads. Last: ended before the devices go.
  std::unique_ptr<SimulatedRanks> simulated_ranks;
};

// Loads the runtime section (with --hardware passed to every `sim` backend as its `hardware`
// option), the bench sections and the hardware file; applies the overrides; reads a dataset file
// once (run_options.dataset, for every run made from it); opens the devices of --devices, else
// the device chosen by --device, else --backend, else the config's scheduler.devices, device or
// backend, else the first. A device named twice (under any selector) is InvalidArgument.
StatusOr<std::unique_ptr<PreparedBench>> PrepareBench(const GlobalOptions& global,
                                                      const BenchFlags& flags);
// PrepareBench, and with --tp N: without mpirun on the simulator, N ranks as threads on the
// simulated devices (SimulatedRanks, priced by the hardware file's interconnect); under mpirun
// -np N on every rank: rank 0 prepares first (a model
// shape is synthesised once) and runs the bench with run_options.collective on its device
// (--device, or its entry of --devices); the others then prepare the same way and follow every run
// rank 0 makes (LlamaExecutor::FollowTensorParallel), returning with |followed| set.
StatusOr<std::unique_ptr<PreparedBench>> PrepareBenchRanks(const GlobalOptions& global,
                                                           const BenchFlags& flags);

// Opens the devices of |selectors| (each as `device:` takes it) from |registry|, in order. Errors
// name |where| (the flag or key): a selector that matches nothing, a device named twice.
StatusOr<std::vector<std::shared_ptr<Device>>> OpenDeviceList(
    Registry& registry, const std::vector<std::string>& selectors, const std::string& where);
// The same for a --devices value, "A,B" (an empty item is an error naming the flag).
StatusOr<std::vector<std::shared_ptr<Device>>> OpenDevicesFlag(Registry& registry,
                                                               const std::string& list);

// What `hwinfer config check` checks beyond the runtime section: the model file opens as a Llama
// model (or the shape file loads), the workload passes every check RunBench makes (its file line
// by line, its bounds, against the model's length), and a `device:` / `backend:` the config
// names is in |registry|. Returns a one-line description of the model.
StatusOr<std::string> CheckBenchSections(const BenchConfig& config, const Registry& registry);

// A progress callback when |enabled| (an empty function otherwise): on a terminal it redraws one
// line on stderr ("\r"-updated: a bar, requests done / total, running, waiting, elapsed,
// requests/s, tokens/s); otherwise it prints the same as a plain line every 10 s of the run.
// |label| prefixes the line (e.g. "batch 8").
std::function<void(const BenchProgress&)> MakeProgressLine(bool enabled, const std::string& label);
// Ends the progress line (a newline) when one was drawn.
void EndProgressLine(bool enabled);
// One update of a progress line on stderr: on a |terminal| "\r<prefix>[bar] <counts>" with
// |fraction| of the bar filled; elsewhere "hwinfer: <prefix><percent>%: <counts>" when 10 s of
// |now_s| have passed since |*last_line_s| (the time of the last plain line, updated).
void PrintProgressUpdate(bool terminal, const std::string& prefix, double fraction, double now_s,
                         const std::string& counts, double* last_line_s);

// Writes |text| to |path|, creating its parent folders. Errors name the path.
Status WriteTextFile(const std::string& path, const std::string& text);

}  // namespace hwinfer::cli
