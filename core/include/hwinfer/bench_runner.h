// hwinfer/bench_runner.h — runs one benchmark end to end: the workload's requests arrive on a
// clock, the scheduler plans each step, the executor runs it on one device, the sampler picks
// tokens, and the metrics layer records every token and step ("measure end to end").
//
// The clock is the host's wall clock, except on a simulated device (HWINFER_DEVICE_TYPE_VIRTUAL)
// whose event timestamps are a virtual clock: there step times come from device events and idle
// gaps jump to the next arrival, so a run on simulated hardware finishes as fast as the host can
// plan it. Scheduling and metrics overhead is measured separately on the host (host_overhead_s).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "hwinfer/bench_config.h"
#include "hwinfer/collective.h"
#include "hwinfer/dataset.h"
#include "hwinfer/device.h"
#include "hwinfer/hardware_spec.h"
#include "hwinfer/llama_executor.h"
#include "hwinfer/llama_model.h"
#include "hwinfer/metrics.h"
#include "hwinfer/scheduler.h"
#include "hwinfer/status.h"

namespace hwinfer {

struct BenchProgress {
  int64_t finished = 0, total = 0;  // requests
  int64_t running = 0, waiting = 0;
  double now_s = 0;  // run clock
  int64_t output_tokens = 0;
};

struct BenchRunOptions {
  // The GGUF file to run; empty = config.model.path. The CLI resolves `model: {shape, type,
  // weights}` into a file first (tools/cli/bench_model_source.h: synthesised once, or a sparse
  // dummy-weight file), because synthesis lives with the tools, not in the core.
  std::string model_path;
  std::optional<HardwareSpec> hardware;       // spec peaks (else the device's own spec, if any)
  double measured_bandwidth_bytes_per_s = 0;  // from the probe; 0 = run it
  double measured_flops = 0;                  // of the model's weight dtype's matmul; 0 = probe it
  // False: no probe; MBU and MFU against the measured peaks are 0 (unknown) unless given above.
  bool probe_peaks = true;
  std::function<void(const BenchProgress&)> on_progress;  // called after each step
  // Keep the |top_logits| largest logits (id, value) of every output token's distribution, for
  // comparing backends (`hwinfer bench --tokens`); 0 = none.
  int32_t top_logits = 0;
  // The workload's dataset file already read (the CLI reads it once for every sweep point);
  // null: RunBench reads config.workload.dataset itself when it is not random.
  std::shared_ptr<const DatasetFile> dataset;
  // Tensor parallelism: this process is rank 0 of |collective| and runs the bench on one device
  // with every rank's shard (LlamaExecutor::CreateTensorParallel); the other ranks follow. Step
  // bytes and FLOPs are every rank's, peaks N x this device's (each rank's device taken to match
  // it); the device's JSON gains `tensor_parallel` (per rank: bytes, FLOPs, device and
  // all-reduce seconds). Null: no tensor parallelism.
  std::shared_ptr<Collective> collective;
};

// One candidate of an output token's distribution.
struct TokenLogit {
  int32_t token = 0;
  float logit = 0;
};

// One device's part of a run over several (replicas): the requests routed to it and its steps,
// summarised against its own peaks.
struct DeviceResult {
  std::string device_id;  // "cpu:0"
  RunSummary summary;
  int64_t requests = 0;  // requests that ended on it (finished or failed there)
  std::string failure;   // why it left the run ("" = it did not fail)
  nlohmann::json json;   // env, hardware, summary and scheduler, as the result document has them
};

struct BenchResult {
  // The whole run; with several devices their pool (PoolDeviceSummaries).
  RunSummary summary;
  std::vector<DeviceResult> devices;  // one per device, in the order given
  std::vector<int> request_devices;   // per request id: its index in |devices| (-1: none)
  std::vector<RequestRecord> requests;
  std::vector<StepRecord> steps;
  std::vector<std::vector<int32_t>> outputs;  // per request (by id): the tokens it produced
  // Per request, per output token: the BenchRunOptions::top_logits best candidates, best first
  // (empty unless asked for).
  std::vector<std::vector<std::vector<TokenLogit>>> top_logits;
  double host_overhead_s = 0;  // time spent in the scheduler and metrics (not in Step)
  double step_time_s = 0;      // sum of step times on the run clock
  nlohmann::json json;         // the whole result document (env, model, workload, scheduler,
                               // summary keys flat at the top, phases, hardware, and vLLM's
                               // per-request arrays by request id: input_lens, output_lens
                               // (0 for a failed request) and with config.save_texts
                               // generated_texts, each output as the streaming decoder prints
                               // it, a byte sequence left incomplete as U+FFFD)
};

// The run's requests, sorted by arrival: drawn (random prompts over |vocab_size|) or sampled from
// config.workload.dataset with |tokenizer| (|dataset|: the file read once by the caller; null:
// read here). Dataset statistics go to |stats| and a log line.
StatusOr<std::vector<WorkloadRequest>> DrawBenchWorkload(const BenchConfig& config,
                                                         std::shared_ptr<const DatasetFile> dataset,
                                                         const Tokenizer* tokenizer,
                                                         int64_t vocab_size, int64_t max_model_len,
                                                         DatasetStats* stats);

// |info| with the peaks of |hardware| (when given) in place of the device's own.
DeviceInfo WithHardwareSpec(DeviceInfo info, const std::optional<HardwareSpec>& hardware);

// The spec peaks of |spec| for a model whose matmul weights are |weight_dtype|: bandwidth, and the
// FLOP/s figure of the dtype that work computes in (SpecFlopsDtypeOf: F32/F16/BF16 weights their
// own, block-quantized weights int8 ops/s); when the spec lacks that figure, the one a device
// without it computes in, as the simulated backend prices it: int8 -> f16 -> f32, f16/bf16 -> f32
// (the description then says which figure was missing).
PeakRates SpecPeaks(const DeviceInfo& spec, uint32_t weight_dtype);

// The peaks a run's MBU and MFU are measured against: spec from |hardware|, else the device's own
// (SpecPeaks at the model's weight dtype); measured = |measured_bandwidth| / |measured_flops| when
// > 0, else (with |probe|) from a short probe of the device: read bandwidth over 64 MiB and the
// matmul of the model's weight dtype at its prefill shape, m = 512 tokens, n = k = d_model
// (MeasureMatmulPeak), 3 repetitions each.
// A matmul the probe cannot time leaves the measured FLOP/s unknown (0) with a warning.
StatusOr<PeakRates> ModelPeaks(const std::shared_ptr<Device>& device, const LlamaModel& model,
                               const std::optional<HardwareSpec>& hardware, bool probe,
                               double measured_bandwidth, double measured_flops);
// |peaks| of one device as the peaks of |ranks| such devices (tensor parallelism: every rank's
// device taken to match this one; the spec source says so).
PeakRates ScaledPeaks(PeakRates peaks, int ranks);

// What the metrics layer records of one executed step: |plan|'s tokens and preemptions, the
// executor's last step's bytes and FLOPs and its KV use after it. (The bench and the serving
// engine record steps alike.)
StepRecord StepRecordOf(const StepPlan& plan, const LlamaExecutor& executor, double start_s,
                        double end_s);

// The workload section of the result JSON.
nlohmann::json WorkloadJson(const WorkloadSpec& workload);

// Opens the model, draws the workload (random prompts, or a dataset's tokenized with the model's
// tokenizer: hwinfer/dataset.h; a warning says how many prompts it skipped), sizes the KV cache
// (kv_cache_tokens, else memory_utilization of the device memory left after the weights and
// activations, capped at max_sequences x the workload's longest request: what the run needs, not
// the context length), creates the executor and scheduler, and runs the workload to completion with
// greedy sampling. Errors name the config key or file at fault (a dataset or save_texts with a
// model without tokenizer metadata names the model file and the missing key); a request that can
// never fit is recorded as failed with the reason (the run goes on).
StatusOr<BenchResult> RunBench(const BenchConfig& config, std::shared_ptr<Device> device,
                               const BenchRunOptions& options = {});
// The same workload over one model replica per device (docs/multi-device.md): each request is
// routed once, when it arrives, by config.routing; each device gets its own KV cache (sized for
// it), executor, scheduler and peaks. Simulated devices run on one virtual clock, real ones on
// one worker thread each; mixing the two is InvalidArgument naming both, as are no device, a null
// one and one device given twice. A device whose step fails leaves the run: its never-scheduled
// requests go to the others, its running ones fail with the reason (with one device the error
// ends the run). The result JSON's flat keys are the pooled summary; `devices` holds each one's.
StatusOr<BenchResult> RunBench(const BenchConfig& config,
                               const std::vector<std::shared_ptr<Device>>& devices,
                               const BenchRunOptions& options = {});

}  // namespace hwinfer
