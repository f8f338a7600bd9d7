// sweep_command.cpp — `hwinfer sweep --config FILE.yaml --batch 1,2,4,...,256
// [--requests-per-batch K] [--json OUT.json] [--csv OUT.csv] [bench flags]`: the
// throughput-latency curve. For each batch size b it runs the bench with
// scheduler.max_sequences = b and workload.num_requests = b * K (every point is K full batches of
// work; arrivals as the config says, offline by default; a dataset's prompts repeat when a point
// needs more than it has), on one device opened once, and prints one
// row per point: batch, output tok/s, median TPOT (ms), median TTFT (ms), mean E2E (ms), decode MBU
// (% of the spec peak bandwidth; of the measured peak when no spec is known), and on stderr a
// warning for each point whose MBU or MFU exceeds a peak (UtilisationWarnings). The JSON is
// {"config": {...}, "points": [{"batch": b, <SummaryToJson keys>}, ...]}, which `hwinfer compare`
// and tools/plot_results.py read.
#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "bench_run.h"
#include "commands.h"
#include "hwinfer/llama_executor.h"
#include "hwinfer/metrics.h"
#include "hwinfer/workload.h"

namespace hwinfer::cli {
namespace {

std::vector<std::string> DeviceIds(const std::vector<std::shared_ptr<Device>>& devices) {
  std::vector<std::string> ids;
  for (const auto& device : devices) ids.push_back(device->id());
  return ids;
}

double DecodeMbuPercent(const RunSummary& s) {
  return 100.0 * (s.decode.mbu_spec > 0 ? s.decode.mbu_spec : s.decode.mbu_measured);
}

}  // namespace

int RunSweep(const GlobalOptions& global, const SweepOptions& options) {
  for (const int64_t batch : options.batches) {  // both at most 2^20: the product cannot overflow
    if (batch * options.requests_per_batch > kMaxWorkloadRequests) {
      return ReportError(InvalidArgument(fmt::format(
          "--batch {} x --requests-per-batch {} = {} requests; a point sends at most {}", batch,
          options.requests_per_batch, batch * options.requests_per_batch, kMaxWorkloadRequests)));
    }
  }
  auto prepared = PrepareBenchRanks(global, options.flags);
  if (!prepared.ok()) return ReportError(prepared.status());
  PreparedBench& bench = **prepared;
  if (bench.followed) return 0;  // a tensor-parallel rank other than 0: rank 0 reports
  const bool progress = !options.flags.no_progress;

  nlohmann::json points = nlohmann::json::array();
  nlohmann::json first_result;
  std::string csv =
      "batch,output_throughput,median_tpot_ms,median_ttft_ms,mean_e2el_ms,"
      "decode_mbu_percent\n";
  fmt::print("{:>6} {:>14} {:>16} {:>16} {:>14} {:>14}\n", "batch", "output tok/s",
             "median TPOT ms", "median TTFT ms", "mean E2E ms", "decode MBU %");
  for (const int64_t batch : options.batches) {
    BenchConfig config = bench.config;
    config.scheduler.max_sequences = batch;
    config.workload.num_requests = batch * options.requests_per_batch;
    BenchRunOptions run_options = bench.run_options;
    run_options.on_progress = MakeProgressLine(progress, fmt::format("batch {}", batch));
    StatusOr<BenchResult> result = RunBench(config, bench.devices, run_options);
    if (run_options.on_progress) EndProgressLine(progress);
    if (!result.ok()) {
      return ReportError(result.status().WithContext(fmt::format("sweep point batch {}", batch)));
    }
    const RunSummary& s = result->summary;
    fmt::print("{:>6} {:>14.1f} {:>16.2f} {:>16.2f} {:>14.2f} {:>14.1f}\n", batch,
               s.output_throughput, s.tpot_ms.median, s.ttft_ms.median, s.e2el_ms.mean,
               DecodeMbuPercent(s));
    std::fflush(stdout);
    PrintWarnings(UtilisationWarnings(s), fmt::format("batch {}: ", batch));
    csv += fmt::format("{},{},{},{},{},{}\n", batch, s.output_throughput, s.tpot_ms.median,
                       s.ttft_ms.median, s.e2el_ms.mean, DecodeMbuPercent(s));
    nlohmann::json point = SummaryToJson(s);
    point["batch"] = batch;
    points.push_back(std::move(point));
    if (first_result.is_null()) first_result = result->json;
  }

  nlohmann::json config_json = {{"file", bench.config.file},
                                {"device", bench.device_id},
                                {"devices", DeviceIds(bench.devices)},
                                {"batches", options.batches},
                                {"requests_per_batch", options.requests_per_batch}};
  // The run's description (env, model, workload, scheduler, hardware) from the first point.
  for (const char* key : {"env", "model", "workload", "scheduler", "hardware"}) {
    if (first_result.is_object() && first_result.contains(key))
      config_json[key] = first_result[key];
  }
  const nlohmann::json document = {{"config", config_json}, {"points", points}};
  if (!options.json_out.empty()) {
    if (Status s = WriteTextFile(options.json_out, document.dump(2) + "\n"); !s.ok()) {
      return ReportError(s);
    }
    fmt::print("wrote {}\n", options.json_out);
  }
  if (!options.csv_out.empty()) {
    if (Status s = WriteTextFile(options.csv_out, csv); !s.ok()) return ReportError(s);
    fmt::print("wrote {}\n", options.csv_out);
  }
  return 0;
}

}  // namespace hwinfer::cli
