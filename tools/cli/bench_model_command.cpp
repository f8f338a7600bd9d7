// bench_model_command.cpp — `hwinfer bench-model -m FILE.gguf -p 128 -n 64 -b 1 [--json]
// [--repetitions R] [--no-probe]`: times prefill and decode of one model on one device, end to end
// (host wall clock around each executor step, synchronisation included), and reports the medians
// over R runs after one warm-up run:
//   prefill tok/s = b * p / prefill time (TTFT of the batch)
//   TPOT          = median decode step time (each step yields one token per sequence)
//   decode tok/s  = b / TPOT
//   decode MBU    = bytes read per decode step / TPOT / the device's measured read bandwidth
//                   (the bandwidth probe), where bytes = the decode weights (every layer, final
//                   norm, output projection) + the KV cache read at the mean context p + n/2.
//                   --no-probe skips the probe (a slow device: an emulator, a sanitizer build);
//                   then only the MBU against the spec bandwidth, where the device has one.
// Prompts are random token ids (seeded); decoding is greedy.
#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <random>

#include "commands.h"
#include "hwinfer/generate.h"
#include "hwinfer/metrics.h"
#include "hwinfer/probe.h"
#include "hwinfer/text_escape.h"
#include "hwinfer/workload.h"
#include "model_run.h"

namespace hwinfer::cli {
namespace {

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t mid = values.size() / 2;
  return values.size() % 2 == 1 ? values[mid] : 0.5 * (values[mid - 1] + values[mid]);
}

std::vector<double> Milliseconds(std::vector<double> seconds) {
  for (double& v : seconds) v *= 1e3;
  return seconds;
}

// One tensor-parallel rank's decode, per step of the last repetition.
struct RankFigures {
  double bytes = 0;    // its kernels' bytes
  double step_ms = 0;  // its device time
  double comm_ms = 0;  // of which in all-reduces (and waiting for slower ranks)
  double mbu = 0;      // bytes / device time / rank 0's measured bandwidth
};

std::vector<RankFigures> RanksOfDecode(const GenerateResult& result, double bandwidth) {
  std::vector<RankFigures> figures;
  const auto steps = static_cast<double>(result.decode_step_seconds.size());
  if (steps == 0) return figures;
  for (const RankStepStats& rank : result.decode_rank_totals) {
    RankFigures f;
    f.bytes = rank.cost.bytes / steps;
    f.step_ms = rank.device_seconds / steps * 1e3;
    f.comm_ms = rank.comm_seconds / steps * 1e3;
    f.mbu = rank.device_seconds > 0 && bandwidth > 0
                ? rank.cost.bytes / rank.device_seconds / bandwidth
                : 0;
    figures.push_back(f);
  }
  return figures;
}

nlohmann::json RanksJson(const std::vector<RankFigures>& figures) {
  nlohmann::json ranks = nlohmann::json::array();
  for (size_t r = 0; r < figures.size(); ++r) {
    ranks.push_back({{"rank", r},
                     {"decode_bytes_per_step", figures[r].bytes},
                     {"decode_step_ms", figures[r].step_ms},
                     {"decode_comm_ms_per_step", figures[r].comm_ms},
                     {"decode_mbu", figures[r].mbu}});
  }
  return ranks;
}

void PrintRanks(const std::vector<RankFigures>& figures, const LlamaExecutor& executor,
                uint32_t device_type) {
  const int ranks = executor.tensor_parallel();
  const std::string path = executor.all_reduce_path();
  fmt::print(
      "  tensor parallel over {} ranks, all-reduces {} (system MBU above: against {} x the "
      "bandwidth)\n",
      ranks,
      path == "device" ? "on the devices"
                       : (path == "host" ? "through host memory" : "modelled (simulated)"),
      ranks);
  for (size_t r = 0; r < figures.size(); ++r) {
    fmt::print(
        "  rank {:<3}     {:>10}/step  device {:.2f} ms, all-reduce {:.2f} ms, MBU {:.1f}%\n", r,
        FormatBytes(figures[r].bytes), figures[r].step_ms, figures[r].comm_ms,
        100.0 * figures[r].mbu);
  }
  if (device_type == HWINFER_DEVICE_TYPE_CPU) {
    fmt::print(
        "  note: CPU ranks on one machine share its memory bandwidth: against one bandwidth the "
        "system MBU is {} x the figure above\n",
        ranks);
  }
}

// The runs' prefill and median decode-step seconds, and the last run (its per-rank stats under
// --tp): random prompts of options.prompt_tokens ids, one warm-up, options.repetitions runs.
struct Timings {
  std::vector<double> ttft, tpot;
  GenerateResult last;
};

StatusOr<Timings> TimeRuns(LlamaExecutor& executor, const BenchModelOptions& options) {
  std::mt19937_64 rng(options.seed);
  std::uniform_int_distribution<int32_t> token(
      0, static_cast<int32_t>(executor.model().shape().vocab_size - 1));
  std::vector<std::vector<int32_t>> prompts(static_cast<size_t>(options.batch));
  for (auto& prompt : prompts) {
    for (int64_t i = 0; i < options.prompt_tokens; ++i) prompt.push_back(token(rng));
  }
  const SamplingParams greedy;
  // Warm-up: touches every weight page and buffer once.
  HWINFER_RETURN_IF_ERROR(
      Generate(executor, prompts, std::min<int64_t>(options.new_tokens, 2), greedy).status());
  Timings timings;
  for (int r = 0; r < options.repetitions; ++r) {
    HWINFER_ASSIGN_OR_RETURN(GenerateResult result,
                             Generate(executor, prompts, options.new_tokens, greedy));
    timings.ttft.push_back(result.prefill_seconds);
    if (!result.decode_step_seconds.empty()) {
      timings.tpot.push_back(Median(result.decode_step_seconds));
    }
    timings.last = std::move(result);
  }
  return timings;
}

}  // namespace

int RunBenchModel(const GlobalOptions& global, const BenchModelOptions& options) {
  const int64_t b = options.batch, p = options.prompt_tokens, n = options.new_tokens;
  // Checked against the context length and the device's memory before anything is sized.
  auto opened = OpenModel(global, options.run, {b, p, n});
  if (!opened.ok()) return ReportError(opened.status());
  if ((*opened)->followed) return 0;  // a tensor-parallel rank other than 0: rank 0 reports
  LlamaExecutor& executor = *(*opened)->executor;
  const ModelShape& shape = executor.model().shape();

  auto timed = TimeRuns(executor, options);
  if (!timed.ok()) return ReportError(timed.status().WithContext(options.run.model_path));
  const std::vector<double>& ttft = timed->ttft;
  const std::vector<double>& tpot = timed->tpot;
  const GenerateResult& last = timed->last;

  ProbeOptions probe_options;
  double bandwidth = 0.0;  // not measured: --no-probe, or a device without the probe
  if (!options.no_probe) {
    auto read = MeasureBandwidth((*opened)->device, HWINFER_PROBE_READ, probe_options);
    if (!read.ok()) return ReportError(read.status());
    if (read->measured) bandwidth = read->value;
  }
  const double spec = (*opened)->device->info().spec_peak_bandwidth_bytes_per_s;

  const double ttft_s = Median(ttft), tpot_s = Median(tpot);
  const double weight_bytes = static_cast<double>(executor.model().decode_weight_bytes());
  // Under --tp the KV cache of every rank, and the peaks of every rank (each rank's device
  // taken to match rank 0's).
  const int ranks = executor.tensor_parallel();
  const double kv_bytes = static_cast<double>(b) *
                          (static_cast<double>(p) + 0.5 * static_cast<double>(n)) *
                          executor.kv_bytes_per_token() * ranks;
  const double step_bytes = weight_bytes + kv_bytes;
  const double prefill_tps = ttft_s > 0 ? static_cast<double>(b * p) / ttft_s : 0;
  const double decode_tps = tpot_s > 0 ? static_cast<double>(b) / tpot_s : 0;
  const double mbu = tpot_s > 0 && bandwidth > 0 ? step_bytes / tpot_s / bandwidth / ranks : 0;
  const double mbu_spec = tpot_s > 0 && spec > 0 ? step_bytes / tpot_s / spec / ranks : 0;
  const std::vector<RankFigures> rank_figures = RanksOfDecode(last, bandwidth);
  PeakRates peaks;
  peaks.spec_bandwidth_bytes_per_s = spec;
  peaks.spec_source = (*opened)->device->info().spec_source;
  peaks.measured_bandwidth_bytes_per_s = bandwidth;
  peaks.measured_bandwidth_probe_bytes =
      options.no_probe ? 0 : BandwidthProbeBytes(*(*opened)->device, probe_options);
  PrintWarnings(UtilisationWarnings({{"decode MBU", PeakKind::kMeasuredBandwidth, mbu},
                                     {"decode MBU", PeakKind::kSpecBandwidth, mbu_spec}},
                                    peaks));

  if (options.json) {
    nlohmann::json out = {{"model", shape.name},
                          {"file", options.run.model_path},
                          {"device", (*opened)->device->id()},
                          {"device_name", (*opened)->device->info().name},
                          {"kv_dtype", options.run.kv_dtype},
                          {"batch", b},
                          {"prompt_tokens", p},
                          {"new_tokens", n},
                          {"repetitions", options.repetitions},
                          {"ttft_ms", ttft_s * 1e3},
                          {"ttft_ms_samples", Milliseconds(ttft)},
                          {"prefill_tokens_per_s", prefill_tps},
                          {"tpot_ms", tpot_s * 1e3},
                          {"tpot_ms_samples", Milliseconds(tpot)},
                          {"decode_tokens_per_s", decode_tps},
                          {"decode_weight_bytes", weight_bytes},
                          {"decode_kv_bytes", kv_bytes},
                          {"measured_read_bandwidth_bytes_per_s", bandwidth},
                          {"spec_bandwidth_bytes_per_s", spec},
                          {"decode_mbu", mbu},
                          {"decode_mbu_spec", mbu_spec},
                          {"tensor_parallel", ranks}};
    if (ranks > 1) {
      out["ranks"] = RanksJson(rank_figures);
      out["all_reduces"] = executor.all_reduce_path();
    }
    fmt::print("{}\n", out.dump(2));
    return 0;
  }
  fmt::print("{} on {} ({}), KV {}: batch {}, prompt {}, generate {}; median of {} runs\n",
             EscapeControlCharacters(shape.name), (*opened)->device->id(),
             EscapeControlCharacters((*opened)->device->info().name), options.run.kv_dtype, b, p, n,
             options.repetitions);
  fmt::print("  prefill      {:>10.1f} tok/s   (TTFT {:.1f} ms)\n", prefill_tps, ttft_s * 1e3);
  fmt::print("  decode       {:>10.1f} tok/s   (TPOT {:.2f} ms)\n", decode_tps, tpot_s * 1e3);
  fmt::print("  bytes/step   {:>10}         (weights {} + KV {})\n", FormatBytes(step_bytes),
             FormatBytes(weight_bytes), FormatBytes(kv_bytes));
  if (bandwidth > 0) {
    fmt::print("  decode MBU   {:>9.1f}%         of the measured read bandwidth {}\n", 100.0 * mbu,
               FormatBandwidth(bandwidth));
  } else {
    fmt::print("  decode MBU        n/a          the read bandwidth was not measured{}\n",
               options.no_probe ? " (--no-probe)" : "");
  }
  if (spec > 0) {
    fmt::print("  decode MBU   {:>9.1f}%         of the spec bandwidth {}\n", 100.0 * mbu_spec,
               FormatBandwidth(spec));
  }
  if (ranks > 1) PrintRanks(rank_figures, executor, (*opened)->device->info().device_type);
  return 0;
}

}  // namespace hwinfer::cli
