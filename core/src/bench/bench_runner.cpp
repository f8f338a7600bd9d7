// bench_runner.cpp — one benchmark run end to end (hwinfer/bench_runner.h): requests arrive on
// the run clock, the scheduler plans each step, the executor runs it, greedy sampling picks the
// tokens, and every token and step is recorded for the metrics layer.
//
// The run clock starts at 0 when the first request may arrive. On a real device it is the host's
// steady clock (idle gaps are slept through, "measure end to end"); on a simulated device
// (HWINFER_DEVICE_TYPE_VIRTUAL) each step lasts its virtual device time and idle gaps jump to the
// next event. A token's time is the end of the step that produced it.
#include "hwinfer/bench_runner.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <limits>
#include <map>
#include <thread>
#include <vector>

#include "bench_replica.h"
#include "hwinfer/llama_executor.h"
#include "hwinfer/llama_model.h"
#include "hwinfer/log.h"
#include "hwinfer/metrics.h"
#include "hwinfer/plugin_loader.h"
#include "hwinfer/probe.h"
#include "hwinfer/sampler.h"
#include "hwinfer/scheduler.h"
#include "hwinfer/tensor_view.h"
#include "hwinfer/tokenizer.h"
#include "hwinfer/workload.h"
#include "replica_drivers.h"

namespace hwinfer {
namespace {

using SteadyClock = std::chrono::steady_clock;

StatusOr<uint32_t> ParseKvDtype(const std::string& name) {
  if (name == "f16") return uint32_t{HWINFER_DTYPE_F16};
  if (name == "i8") return uint32_t{HWINFER_DTYPE_I8};
  return InvalidArgument("scheduler.kv_dtype is '" + name + "'; expected f16 | i8");
}

// The weight dtype that dominates the model's FLOPs (its layer matrices).
uint32_t ModelWeightType(const LlamaModel& model) {
  return model.layers().empty() ? HWINFER_DTYPE_F32 : model.layers().front().wq->ggml_type;
}

// The KV tokens the longest request that can run needs (prompt + output - 1: the last token is
// never fed back), in whole blocks; at least one block.
int64_t LongestRequestTokens(const std::vector<WorkloadRequest>& workload, int64_t max_model_len,
                             int64_t block_size) {
  int64_t longest = 1;
  for (const WorkloadRequest& r : workload) {
    if (CheckFitsModelLength(r.id, r.input_len, r.output_len, max_model_len).ok()) {
      longest = std::max(longest, r.input_len + r.output_len - 1);
    }
  }
  return (longest + block_size - 1) / block_size * block_size;
}

// The KV tokens one running sequence can take, in whole blocks: the workload's longest request,
// or under kv_reservation max_length the max_model_len every admitted request reserves.
int64_t SequenceKvTokens(const SchedulerOptions& so, const std::vector<WorkloadRequest>& workload,
                         int64_t block_size) {
  if (so.kv_reservation != KvReservation::kMaxLength) {
    return LongestRequestTokens(workload, so.max_model_len, block_size);
  }
  const int64_t blocks = so.max_model_len / block_size + (so.max_model_len % block_size != 0);
  return blocks > kMaxKvCacheTokens / block_size ? kMaxKvCacheTokens : blocks * block_size;
}

// KV tokens to allocate: the config's, else memory_utilization of the device memory after the
// weights and activations, capped at what max_sequences sequences of |longest_request| tokens
// (SequenceKvTokens) could ever hold: sized by what the run needs, never by the model's context
// length alone (unless the run reserves it).
// |share|: the fraction of the model's layers the device holds (a layer split; 1 otherwise):
// it holds that share of the weights and of every token's KV.
StatusOr<int64_t> KvCacheTokens(const BenchConfig& config, const ExecutorOptions& eo,
                                const LlamaModel& model, const Device& device,
                                int64_t longest_request, double share = 1.0) {
  const ModelShape& m = model.shape();
  const int64_t sequences = config.scheduler.max_sequences;
  const int64_t cap = longest_request > kMaxKvCacheTokens / sequences ? kMaxKvCacheTokens
                                                                      : sequences * longest_request;
  if (config.kv_cache_tokens > 0) return config.kv_cache_tokens;
  const double per_token = share * m.KvBytesPerToken(eo.kv_dtype == HWINFER_DTYPE_I8 ? 1.0 : 2.0);
  const double memory = static_cast<double>(device.info().memory_total_bytes);
  if (memory <= 0) return cap;
  ExecutorOptions sized = eo;
  sized.kv_cache_tokens = cap;
  const double left = memory * config.memory_utilization -
                      share * static_cast<double>(model.weight_bytes()) -
                      LlamaExecutor::MemoryNeeded(m, sized).activation_bytes;
  const double fit = std::max(left / per_token, 0.0);
  if (fit < static_cast<double>(longest_request)) {
    return OutOfMemory(fmt::format(
        "{}: after the weights ({:.2f} GiB) and activations, {:.0f}% of the device memory "
        "({:.2f} GiB) holds {:.0f} KV tokens, less than {} ({} tokens); lower "
        "scheduler.max_batch_tokens or the request lengths, raise "
        "scheduler.memory_utilization or set scheduler.kv_cache_tokens",
        device.id(), share * static_cast<double>(model.weight_bytes()) / (1 << 30),
        100 * config.memory_utilization, memory / (1 << 30), fit,
        config.scheduler.kv_reservation == KvReservation::kMaxLength
            ? "the max_model_len every sequence reserves (scheduler.kv_reservation: max_length)"
            : "the workload's longest request",
        longest_request));
  }
  return fit >= static_cast<double>(cap) ? cap : static_cast<int64_t>(fit);
}

// The model's tokenizer, which |purpose| needs; a model without one is an error naming the file
// and the key it lacks.
StatusOr<std::unique_ptr<Tokenizer>> ModelTokenizer(const LlamaModel& model,
                                                    const std::string& purpose) {
  StatusOr<std::unique_ptr<Tokenizer>> tokenizer = Tokenizer::FromGguf(model.file());
  if (!tokenizer.ok()) {
    return tokenizer.status().WithContext(
        fmt::format("{} needs the model's tokenizer (tokenizer.ggml.* metadata)", purpose));
  }
  return tokenizer;
}

// One line on stderr about what the dataset gave (a warning when prompts were skipped).
void LogDatasetStats(const DatasetSpec& spec, const DatasetStats& stats, int64_t max_model_len) {
  std::string skipped;
  if (stats.skipped_no_exchange > 0) {
    skipped +=
        fmt::format(", {} without a human turn followed by an answer", stats.skipped_no_exchange);
  }
  if (stats.skipped_length > 0) {
    skipped += fmt::format(", {} by vLLM's length filter", stats.skipped_length);
  }
  if (stats.skipped_context > 0) {
    skipped += fmt::format(", {} past the model's context ({} tokens)", stats.skipped_context,
                           max_model_len);
  }
  Log(skipped.empty() ? LogLevel::kInfo : LogLevel::kWarning, "bench",
      fmt::format("dataset {}: {} requests from {} prompts{}", DatasetSpecText(spec),
                  stats.requests, stats.used,
                  skipped.empty() ? "" : "; skipped" + skipped.substr(1)));
}

// vLLM's per-request arrays, by request id: input_lens, output_lens and (with a tokenizer)
// generated_texts.
void AddPerRequestArrays(const BenchResult& result, const Tokenizer* tokenizer,
                         nlohmann::json& json) {
  nlohmann::json input_lens = nlohmann::json::array();
  nlohmann::json output_lens = nlohmann::json::array();
  for (const RequestRecord& r : result.requests) {
    input_lens.push_back(r.input_tokens);
    output_lens.push_back(r.output_tokens);
  }
  json["input_lens"] = std::move(input_lens);
  json["output_lens"] = std::move(output_lens);
  if (tokenizer == nullptr) return;
  nlohmann::json texts = nlohmann::json::array();
  for (const std::vector<int32_t>& output : result.outputs) {
    StreamingDecoder decoder(*tokenizer);
    std::string text;
    for (const int32_t id : output) text += decoder.Push(id);
    text += decoder.Flush();
    // JSON text is UTF-8: a character the output left incomplete becomes U+FFFD.
    texts.push_back(nlohmann::json::parse(
        nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)));
  }
  json["generated_texts"] = std::move(texts);
}

nlohmann::json DatasetStatsJson(const DatasetStats& stats) {
  return {{"records", stats.records},
          {"skipped_no_exchange", stats.skipped_no_exchange},
          {"tokenized", stats.tokenized},
          {"skipped_length", stats.skipped_length},
          {"skipped_context", stats.skipped_context},
          {"used", stats.used},
          {"requests", stats.requests}};
}

}  // namespace

StepRecord StepRecordOf(const StepPlan& plan, const LlamaExecutor& executor, double start_s,
                        double end_s) {
  StepRecord step;
  step.start_s = start_s;
  step.end_s = end_s;
  step.prefill_tokens = plan.prefill_tokens;
  step.decode_tokens = plan.decode_tokens;
  step.sequences = static_cast<int64_t>(plan.chunks.size());
  const CostTotals cost = executor.last_step().system_cost();  // every rank's under --tp
  step.bytes = cost.bytes;
  step.flops = cost.flops;
  step.kv_used_blocks = executor.kv().num_used_blocks();
  step.kv_used_tokens = executor.kv().TotalTokens();
  step.preemptions = static_cast<int64_t>(plan.preempted.size());
  return step;
}

DeviceInfo WithHardwareSpec(DeviceInfo info, const std::optional<HardwareSpec>& hardware) {
  if (hardware) {
    info.spec_peak_bandwidth_bytes_per_s = hardware->peak_bandwidth_bytes_per_s;
    info.spec_peak_flops_f32 = hardware->peak_flops_f32;
    info.spec_peak_flops_f16 = hardware->peak_flops_f16;
    info.spec_peak_flops_bf16 = hardware->peak_flops_bf16;
    info.spec_peak_flops_int8 = hardware->peak_flops_int8;
    info.spec_source = hardware->file;
  }
  return info;
}

PeakRates SpecPeaks(const DeviceInfo& spec, uint32_t weight_dtype) {
  PeakRates peaks;
  peaks.spec_bandwidth_bytes_per_s = spec.spec_peak_bandwidth_bytes_per_s;
  peaks.spec_source = spec.spec_source;
  peaks.flops_weight_dtype = weight_dtype;
  auto figure = [&spec](uint32_t dtype) {
    switch (dtype) {
      case HWINFER_DTYPE_F16:
        return spec.spec_peak_flops_f16;
      case HWINFER_DTYPE_BF16:
        return spec.spec_peak_flops_bf16;
      case HWINFER_DTYPE_I8:
        return spec.spec_peak_flops_int8;
      default:
        return spec.spec_peak_flops_f32;
    }
  };
  // The dtype the work computes in, then what a device without that figure computes it in (as
  // the simulated backend prices it): int8 -> f16 -> f32, f16 / bf16 -> f32.
  const uint32_t computes_in = SpecFlopsDtypeOf(weight_dtype);
  std::vector<uint32_t> candidates = {computes_in};
  if (computes_in == HWINFER_DTYPE_I8) candidates.push_back(HWINFER_DTYPE_F16);
  if (computes_in != HWINFER_DTYPE_F32) candidates.push_back(HWINFER_DTYPE_F32);
  peaks.spec_flops_dtype = computes_in;
  for (const uint32_t dtype : candidates) {
    if (figure(dtype) > 0) {
      peaks.spec_flops_dtype = dtype;
      break;
    }
  }
  peaks.spec_flops = figure(peaks.spec_flops_dtype);
  return peaks;
}

StatusOr<PeakRates> ModelPeaks(const std::shared_ptr<Device>& device, const LlamaModel& model,
                               const std::optional<HardwareSpec>& hardware, bool probe,
                               double measured_bandwidth, double measured_flops) {
  const uint32_t weight_dtype = ModelWeightType(model);
  PeakRates peaks = SpecPeaks(WithHardwareSpec(device->info(), hardware), weight_dtype);
  peaks.measured_bandwidth_bytes_per_s = measured_bandwidth;
  peaks.measured_flops = measured_flops;
  if (!probe) return peaks;
  ProbeOptions options;
  options.bandwidth_bytes = 64ull << 20;
  options.repetitions = 3;
  options.matmul_width = model.shape().d_model;  // the q / o projections of a 512-token chunk
  if (peaks.measured_bandwidth_bytes_per_s <= 0) {
    HWINFER_ASSIGN_OR_RETURN(ProbeMeasurement read,
                             MeasureBandwidth(device, HWINFER_PROBE_READ, options));
    if (read.measured) {
      peaks.measured_bandwidth_bytes_per_s = read.value;
      peaks.measured_bandwidth_probe_bytes = BandwidthProbeBytes(*device, options);
    }
  }
  // The FLOP/s ceiling of the work the model does: its own weight dtype's matmul, timed at the
  // model's prefill shape (512 tokens x d_model x d_model) through the same kernel the executor
  // issues, whatever path the backend takes inside.
  if (peaks.measured_flops <= 0) {
    const MatmulPeak matmul = MeasureMatmulPeak(device, weight_dtype, options);
    if (matmul.flops.measured) {
      peaks.measured_flops = matmul.flops.value;
      peaks.measured_flops_probe = {matmul.m, matmul.n, matmul.k};
    } else {
      Log(LogLevel::kWarning, "bench",
          fmt::format("{}: no measured {} matmul peak (MFU against it is left unknown): {}",
                      device->id(), DtypeName(weight_dtype), matmul.flops.reason));
    }
  }
  return peaks;
}

PeakRates ScaledPeaks(PeakRates peaks, int ranks) {
  if (ranks == 1) return peaks;
  for (double PeakRates::*rate :
       {&PeakRates::spec_bandwidth_bytes_per_s, &PeakRates::spec_flops,
        &PeakRates::measured_bandwidth_bytes_per_s, &PeakRates::measured_flops}) {
    peaks.*rate *= ranks;
  }
  if (!peaks.spec_source.empty()) peaks.spec_source += fmt::format(" (x {} ranks)", ranks);
  return peaks;
}

nlohmann::json WorkloadJson(const WorkloadSpec& w) {
  auto length = [](const LengthDistribution& d) {
    nlohmann::json j = {{"dist", LengthKindName(d.kind)}};
    if (d.kind == LengthDistribution::Kind::kFixed) j["value"] = d.value;
    if (d.kind != LengthDistribution::Kind::kFixed) j.update({{"min", d.min}, {"max", d.max}});
    if (d.kind == LengthDistribution::Kind::kNormal) j.update({{"mean", d.mean}, {"std", d.std}});
    return j;
  };
  return {{"num_requests", w.num_requests},
          {"arrivals", ArrivalsName(w.arrivals)},
          {"rate", w.rate},
          {"burstiness", w.burstiness},
          {"max_concurrency", w.max_concurrency},
          {"input", length(w.input)},
          {"output", length(w.output)},
          {"file", w.jsonl_file},
          {"dataset", DatasetSpecText(w.dataset)},
          {"shuffle", w.dataset.shuffle},
          {"output_override", w.dataset.override_output},
          {"seed", w.seed}};
}

StatusOr<std::vector<WorkloadRequest>> DrawBenchWorkload(const BenchConfig& config,
                                                         std::shared_ptr<const DatasetFile> dataset,
                                                         const Tokenizer* tokenizer,
                                                         int64_t vocab_size, int64_t max_model_len,
                                                         DatasetStats* stats) {
  const WorkloadSpec& spec = config.workload;
  if (spec.dataset.kind == DatasetSpec::Kind::kRandom) {
    return GenerateWorkload(spec, vocab_size, max_model_len);
  }
  std::shared_ptr<const DatasetFile> file = std::move(dataset);
  if (file == nullptr) {
    HWINFER_ASSIGN_OR_RETURN(DatasetFile read, ReadDataset(spec.dataset));
    file = std::make_shared<const DatasetFile>(std::move(read));
  }
  HWINFER_ASSIGN_OR_RETURN(std::vector<WorkloadRequest> requests,
                           SampleDataset(*file, spec, *tokenizer, max_model_len, stats));
  LogDatasetStats(spec.dataset, *stats, max_model_len);
  HWINFER_RETURN_IF_ERROR(ScheduleArrivals(spec, requests));
  return requests;
}

namespace {

using bench_internal::BenchReplica;
using bench_internal::RunRecords;
using bench_internal::SecondsSince;

// No device, a null one, one given twice, or simulated and real devices together.
Status CheckDevices(const std::vector<std::shared_ptr<Device>>& devices) {
  if (devices.empty()) return InvalidArgument("RunBench: no device");
  for (size_t i = 0; i < devices.size(); ++i) {
    if (devices[i] == nullptr) {
      return InvalidArgument(fmt::format("RunBench: device {} is null", i));
    }
  }
  if (const Device* repeated = RepeatedDevice(devices)) {
    return InvalidArgument(fmt::format(
        "scheduler.devices names {} twice; each device runs one replica", repeated->id()));
  }
  const auto is_virtual = [](const std::shared_ptr<Device>& d) {
    return d->info().device_type == HWINFER_DEVICE_TYPE_VIRTUAL;
  };
  for (const auto& device : devices) {
    if (is_virtual(device) != is_virtual(devices.front())) {
      const auto& simulated = is_virtual(device) ? device : devices.front();
      const auto& real = is_virtual(device) ? devices.front() : device;
      return InvalidArgument(fmt::format(
          "scheduler.devices mixes the simulated device {} (virtual clock) with the real device "
          "{} (wall clock); their times cannot be compared in one run: run them separately",
          simulated->id(), real->id()));
    }
  }
  return Status::Ok();
}

ExecutorOptions ExecutorOptionsOf(const BenchConfig& config) {
  ExecutorOptions eo;
  eo.max_batch_tokens = config.scheduler.max_batch_tokens;
  eo.max_sequences = config.scheduler.max_sequences;
  eo.kv_block_size = config.kv_block_size;
  eo.decode_graphs = config.decode_graphs;
  eo.tp_collectives = config.tp_collectives;
  return eo;
}

// One replica: on one device, or (a layer split) on several running one model together. Its KV
// cache is sized for its devices (each holds its layers' share), then its executor, scheduler and
// each device's peaks.
StatusOr<std::unique_ptr<BenchReplica>> CreateReplica(
    int index, const std::vector<std::shared_ptr<Device>>& devices,
    const std::shared_ptr<const LlamaModel>& model, ExecutorOptions eo, const SchedulerOptions& so,
    const BenchConfig& config, const std::vector<WorkloadRequest>& workload,
    const BenchRunOptions& options) {
  const int64_t n_layers = model->shape().n_layers;
  std::vector<int64_t> counts = {n_layers};
  if (devices.size() > 1) {
    HWINFER_ASSIGN_OR_RETURN(counts,
                             LlamaExecutor::SplitLayers(devices, n_layers, config.layer_split));
  }
  const int64_t longest = SequenceKvTokens(so, workload, eo.kv_block_size);
  eo.kv_cache_tokens = kMaxKvCacheTokens;
  // A tensor-parallel rank holds 1/N of every layer's weights and KV heads.
  const int ranks = options.collective != nullptr ? options.collective->size() : 1;
  for (size_t i = 0; i < devices.size(); ++i) {
    const double share = static_cast<double>(counts[i]) / static_cast<double>(n_layers) / ranks;
    HWINFER_ASSIGN_OR_RETURN(const int64_t tokens,
                             KvCacheTokens(config, eo, *model, *devices[i], longest, share));
    eo.kv_cache_tokens = std::min(eo.kv_cache_tokens, tokens);
  }
  std::unique_ptr<LlamaExecutor> executor;
  if (options.collective != nullptr) {
    HWINFER_ASSIGN_OR_RETURN(executor, LlamaExecutor::CreateTensorParallel(devices.front(), model,
                                                                           eo, options.collective));
  } else if (devices.size() > 1) {
    HWINFER_ASSIGN_OR_RETURN(executor, LlamaExecutor::CreateSplit(devices, model, eo, counts));
  } else {
    HWINFER_ASSIGN_OR_RETURN(executor, LlamaExecutor::Create(devices.front(), model, eo));
  }
  HWINFER_ASSIGN_OR_RETURN(std::unique_ptr<Scheduler> scheduler,
                           Scheduler::Create(so, executor->mutable_kv()));
  std::vector<PeakRates> peaks;
  for (const std::shared_ptr<Device>& device : devices) {
    HWINFER_ASSIGN_OR_RETURN(
        PeakRates device_peaks,
        ModelPeaks(device, *model, options.hardware, options.probe_peaks,
                   options.measured_bandwidth_bytes_per_s, options.measured_flops));
    peaks.push_back(ScaledPeaks(std::move(device_peaks), ranks));
  }
  return std::make_unique<BenchReplica>(index, devices.front(), std::move(executor),
                                        std::move(scheduler), std::move(peaks));
}

RunRecords EmptyRecords(const std::vector<WorkloadRequest>& workload, int32_t top_logits) {
  RunRecords records;
  records.requests.resize(workload.size());
  records.outputs.resize(workload.size());
  records.replica_of.assign(workload.size(), -1);
  records.top_logits_k = top_logits;
  if (top_logits > 0) records.top_logits.resize(workload.size());
  // Records are indexed by request id (the file's order), the workload by arrival.
  for (const WorkloadRequest& w : workload) {
    RequestRecord& r = records.requests[static_cast<size_t>(w.id)];
    r.id = w.id;
    r.line = w.line;
    r.arrival_s = w.arrival_s;
    r.input_tokens = w.input_len;
  }
  return records;
}

nlohmann::json EnvJson(const Device& device) {
  const DeviceInfo& info = device.info();
  return {{"device", info.name},
          {"device_id", device.id()},
          {"backend", device.plugin().name()},
          {"vendor", info.vendor},
          {"driver", info.driver},
          {"device_type", info.device_type_name()},
          {"memory_total_bytes", info.memory_total_bytes},
          {"virtual_clock", info.device_type == HWINFER_DEVICE_TYPE_VIRTUAL}};
}

nlohmann::json HardwareJson(const BenchReplica& replica, const BenchRunOptions& options) {
  nlohmann::json hardware = PeakRatesJson(replica.peaks());
  hardware["name"] = options.hardware ? options.hardware->name : replica.device().info().name;
  return hardware;
}

// The executor-side scheduler keys of one replica.
nlohmann::json ReplicaSchedulerJson(const BenchReplica& replica) {
  const LlamaExecutor& executor = replica.executor();
  return {{"kv_cache_tokens", executor.options().kv_cache_tokens},
          {"decode_graphs_captured", executor.decode_graphs_captured()},
          {"fused_rope_kv_append", executor.fuses_rope_kv_append()}};
}

// A layer split's devices: each one's layers, the seconds they ran, its device and peaks.
nlohmann::json LayerSplitJson(const BenchReplica& replica) {
  nlohmann::json parts = nlohmann::json::array();
  const auto layers = replica.executor().device_layers();
  for (size_t d = 0; d < layers.size(); ++d) {
    nlohmann::json hardware = PeakRatesJson(replica.device_peaks()[d]);
    parts.push_back({{"device_id", layers[d].device->id()},
                     {"first_layer", layers[d].first_layer},
                     {"end_layer", layers[d].end_layer},
                     {"seconds", replica.stage_seconds()[d]},
                     {"env", EnvJson(*layers[d].device)},
                     {"hardware", std::move(hardware)}});
  }
  return parts;
}

// Tensor parallelism: each rank's share of the run (its device time includes its all-reduces),
// and its MBU over the whole run (prefill and decode) against one device's peak bandwidth.
nlohmann::json TensorParallelJson(const BenchReplica& replica) {
  const std::vector<RankStepStats>& totals = replica.rank_totals();
  const auto steps = static_cast<double>(std::max<int64_t>(replica.steps_run(), 1));
  const PeakRates peaks = replica.peaks();  // N x one device's
  const auto n = static_cast<double>(totals.size());
  const auto mbu = [&](const RankStepStats& rank, double peak) {
    return rank.device_seconds > 0 && peak > 0 ? rank.cost.bytes / rank.device_seconds / (peak / n)
                                               : 0.0;
  };
  nlohmann::json ranks = nlohmann::json::array();
  for (size_t r = 0; r < totals.size(); ++r) {
    ranks.push_back({{"rank", r},
                     {"mbu_measured", mbu(totals[r], peaks.measured_bandwidth_bytes_per_s)},
                     {"mbu_spec", mbu(totals[r], peaks.spec_bandwidth_bytes_per_s)},
                     {"bytes", totals[r].cost.bytes},
                     {"flops", totals[r].cost.flops},
                     {"kernels", totals[r].kernels},
                     {"device_seconds", totals[r].device_seconds},
                     {"comm_seconds", totals[r].comm_seconds},
                     {"comm_ms_per_step", totals[r].comm_seconds / steps * 1e3}});
  }
  return {{"ranks", totals.size()},
          {"all_reduces", replica.executor().all_reduce_path()},
          {"per_rank", std::move(ranks)}};
}

// Each replica's requests and steps summarised against its own peaks.
std::vector<DeviceResult> DeviceResults(const std::vector<std::unique_ptr<BenchReplica>>& replicas,
                                        const RunRecords& records, const BenchConfig& config,
                                        const BenchRunOptions& options) {
  std::vector<DeviceResult> results;
  for (const auto& replica : replicas) {
    SummaryInputs inputs;
    for (size_t id = 0; id < records.requests.size(); ++id) {
      if (records.replica_of[id] == replica->index())
        inputs.requests.push_back(records.requests[id]);
    }
    inputs.steps = replica->steps();
    inputs.peaks = replica->peaks();
    inputs.slo = config.slo;
    inputs.kv_capacity_blocks = replica->executor().kv().num_blocks();
    inputs.kv_block_size = replica->executor().kv().block_size();
    DeviceResult result;
    result.device_id = replica->name();
    result.requests = static_cast<int64_t>(inputs.requests.size());
    result.summary = SummarizeRun(inputs);
    result.summary.batching_mode = BatchingModeName(config.scheduler.mode);
    result.summary.kv_reservation = KvReservationName(config.scheduler.kv_reservation);
    result.failure = replica->failure();
    result.json = {{"env", EnvJson(replica->device())},
                   {"hardware", HardwareJson(*replica, options)},
                   {"summary", SummaryToJson(result.summary)},
                   {"scheduler", ReplicaSchedulerJson(*replica)},
                   {"requests", result.requests},
                   {"failure", result.failure}};
    if (replica->device_peaks().size() > 1) result.json["layer_split"] = LayerSplitJson(*replica);
    if (!replica->rank_totals().empty()) {
      result.json["tensor_parallel"] = TensorParallelJson(*replica);
    }
    results.push_back(std::move(result));
  }
  return results;
}

// The pooled summary: one device's own, or PoolDeviceSummaries of several.
RunSummary RunSummaryOf(const BenchResult& result, const BenchConfig& config,
                        const BenchReplica& first) {
  SummaryInputs inputs;
  inputs.requests = result.requests;
  inputs.steps = result.steps;
  inputs.peaks = first.peaks();
  inputs.slo = config.slo;
  inputs.kv_capacity_blocks = first.executor().kv().num_blocks();
  inputs.kv_block_size = first.executor().kv().block_size();
  RunSummary summary;
  if (result.devices.size() == 1) {
    summary = SummarizeRun(inputs);
  } else {
    std::vector<RunSummary> per_device;
    for (const DeviceResult& d : result.devices) per_device.push_back(d.summary);
    summary = PoolDeviceSummaries(inputs, per_device);
  }
  summary.batching_mode = BatchingModeName(config.scheduler.mode);
  summary.kv_reservation = KvReservationName(config.scheduler.kv_reservation);
  return summary;
}

// The model section of the result document.
nlohmann::json ModelJson(const std::string& path, const LlamaModel& model,
                         const BenchReplica& first) {
  const ModelShape& shape = model.shape();
  return {{"file", path},
          {"name", shape.name},
          {"weight_type", DtypeName(ModelWeightType(model))},
          {"params", shape.TotalParams()},
          {"weight_bytes", model.weight_bytes()},
          {"n_layers", shape.n_layers},
          {"d_model", shape.d_model},
          {"n_heads", shape.n_heads},
          {"n_kv_heads", shape.n_kv_heads},
          {"context_length", shape.context_length},
          {"kv_bytes_per_token", first.executor().kv_bytes_per_token()}};
}

// The scheduler section of the result document (the first replica adds its executor's keys).
nlohmann::json SchedulerJson(const BenchConfig& config, const SchedulerOptions& so,
                             const ExecutorOptions& eo) {
  return {{"mode", BatchingModeName(so.mode)},
          {"kv_reservation", KvReservationName(so.kv_reservation)},
          {"max_batch_tokens", so.max_batch_tokens},
          {"max_sequences", so.max_sequences},
          {"batch_timeout_s", so.batch_timeout_s},
          {"ageing_s", so.ageing_s},
          {"kv_block_size", eo.kv_block_size},
          {"kv_dtype", config.kv_dtype},
          {"decode_graphs", eo.decode_graphs},
          {"routing", ReplicaRoutingName(config.routing)},
          {"split", config.split_layers ? "layers" : "replicas"}};
}

// The run's records, every replica's steps (by start time), per-device and pooled summaries.
BenchResult CollectResult(const std::vector<std::unique_ptr<BenchReplica>>& replicas,
                          RunRecords records, const BenchConfig& config,
                          const BenchRunOptions& options) {
  BenchResult result;
  result.requests = records.requests;  // DeviceResults reads them from |records| too
  result.outputs = std::move(records.outputs);
  result.top_logits = std::move(records.top_logits);
  result.request_devices = records.replica_of;
  for (const auto& replica : replicas) {
    result.steps.insert(result.steps.end(), replica->steps().begin(), replica->steps().end());
    result.step_time_s += replica->step_time_s();
    result.host_overhead_s += replica->overhead_s();
  }
  std::stable_sort(result.steps.begin(), result.steps.end(),
                   [](const StepRecord& a, const StepRecord& b) { return a.start_s < b.start_s; });
  result.devices = DeviceResults(replicas, records, config, options);
  result.summary = RunSummaryOf(result, config, *replicas.front());
  return result;
}

}  // namespace

StatusOr<BenchResult> RunBench(const BenchConfig& config, std::shared_ptr<Device> device,
                               const BenchRunOptions& options) {
  return RunBench(config, std::vector<std::shared_ptr<Device>>{std::move(device)}, options);
}

StatusOr<BenchResult> RunBench(const BenchConfig& config,
                               const std::vector<std::shared_ptr<Device>>& devices,
                               const BenchRunOptions& options) {
  HWINFER_RETURN_IF_ERROR(CheckDevices(devices));
  if (options.collective != nullptr) {
    if (devices.size() != 1) {
      return InvalidArgument(fmt::format(
          "tensor parallelism runs one model over the ranks' devices, one device each; {} "
          "devices given (replicas and a layer split are for one process)",
          devices.size()));
    }
    const bool modelled = options.collective->ModelledAllReduceSeconds(1) > 0;
    const bool simulated = devices.front()->info().device_type == HWINFER_DEVICE_TYPE_VIRTUAL;
    if (simulated && !modelled) {
      return InvalidArgument(fmt::format(
          "tensor parallelism on the simulated device {} needs an interconnect model (the "
          "`interconnect:` section of its hardware file), not real ranks",
          devices.front()->id()));
    }
    if (!simulated && modelled) {
      return InvalidArgument(
          fmt::format("the device {} is real: its ranks' all-reduces are measured, not modelled",
                      devices.front()->id()));
    }
  }
  // ---- model and workload ----
  const std::string path = options.model_path.empty() ? config.model.path : options.model_path;
  if (path.empty()) {
    return InvalidArgument(config.file +
                           ": model: no GGUF file to run (model.path, or a shape "
                           "resolved by the CLI)");
  }
  HWINFER_ASSIGN_OR_RETURN(std::shared_ptr<const LlamaModel> model, LlamaModel::Open(path));
  const ModelShape& shape = model->shape();
  ExecutorOptions eo = ExecutorOptionsOf(config);
  HWINFER_ASSIGN_OR_RETURN(eo.kv_dtype, ParseKvDtype(config.kv_dtype));
  SchedulerOptions so = config.scheduler;
  so.max_model_len = shape.context_length;
  // The requests first: the KV caches are sized by what they need.
  const bool from_dataset = config.workload.dataset.kind != DatasetSpec::Kind::kRandom;
  std::unique_ptr<Tokenizer> tokenizer;
  if (from_dataset || config.save_texts) {
    HWINFER_ASSIGN_OR_RETURN(
        tokenizer,
        ModelTokenizer(*model, from_dataset ? "dataset " + DatasetSpecText(config.workload.dataset)
                                            : std::string("output.save_texts")));
  }
  DatasetStats dataset_stats;
  HWINFER_ASSIGN_OR_RETURN(std::vector<WorkloadRequest> workload,
                           DrawBenchWorkload(config, options.dataset, tokenizer.get(),
                                             shape.vocab_size, so.max_model_len, &dataset_stats));

  // ---- one replica per device, or one over every device (a layer split) ----
  std::vector<std::vector<std::shared_ptr<Device>>> replica_devices;
  if (config.split_layers) {
    replica_devices.push_back(devices);
  } else {
    for (const auto& device : devices) replica_devices.push_back({device});
  }
  std::vector<std::unique_ptr<BenchReplica>> replicas;
  for (size_t i = 0; i < replica_devices.size(); ++i) {
    HWINFER_ASSIGN_OR_RETURN(std::unique_ptr<BenchReplica> replica,
                             CreateReplica(static_cast<int>(i), replica_devices[i], model, eo, so,
                                           config, workload, options));
    replicas.push_back(std::move(replica));
  }

  // ---- the run ----
  RunRecords records = EmptyRecords(workload, options.top_logits);
  const bench_internal::DriverOptions driver{config.routing, config.workload.max_concurrency,
                                             options.on_progress};
  const bool virtual_clock = devices.front()->info().device_type == HWINFER_DEVICE_TYPE_VIRTUAL;
  HWINFER_RETURN_IF_ERROR(
      virtual_clock ? bench_internal::RunOnVirtualClock(replicas, workload, driver, records)
                    : bench_internal::RunOnRealClock(replicas, workload, driver, records));

  // ---- summaries and the result document ----
  const SteadyClock::time_point summary_start = SteadyClock::now();
  BenchResult result = CollectResult(replicas, std::move(records), config, options);
  const BenchReplica& first = *replicas.front();
  result.host_overhead_s += SecondsSince(summary_start);

  nlohmann::json json = SummaryToJson(result.summary);
  json["env"] = EnvJson(first.device());
  json["hardware"] = HardwareJson(first, options);
  json["model"] = ModelJson(path, *model, first);
  json["workload"] = WorkloadJson(config.workload);
  if (from_dataset) json["workload"]["dataset_stats"] = DatasetStatsJson(dataset_stats);
  AddPerRequestArrays(result, config.save_texts ? tokenizer.get() : nullptr, json);
  json["scheduler"] = SchedulerJson(config, so, eo);
  json["scheduler"].update(ReplicaSchedulerJson(first));
  json["scheduler"]["tensor_parallel"] = first.executor().tensor_parallel();
  json["devices"] = nlohmann::json::array();
  for (const DeviceResult& d : result.devices) json["devices"].push_back(d.json);
  json["request_devices"] = result.request_devices;
  json["slo"] = {{"ttft_ms", config.slo.ttft_ms},
                 {"tpot_ms", config.slo.tpot_ms},
                 {"e2el_ms", config.slo.e2el_ms}};
  json["host_overhead_s"] = result.host_overhead_s;
  json["step_time_s"] = result.step_time_s;
  result.json = std::move(json);
  return result;
}

}  // namespace hwinfer
