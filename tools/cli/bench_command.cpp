// bench_command.cpp — `hwinfer bench --config FILE.yaml [--backend NAME] [--device D]
// [--hardware FILE.yaml] [--json OUT.json] [--csv PREFIX] [--markdown OUT.md] [--mode M]
// [--kv-reservation R] [--tokens OUT.jsonl] [--num-requests N] [--max-sequences N]
// [--dataset sharegpt:F | jsonl:F | random] [--output-len N] [--seed S] [--disable-shuffle]
// [--save-texts] [--no-progress]`: runs one benchmark
// (RunBench) on one device, draws a progress line on stderr while it runs, prints the summary table
// on stdout and writes the result JSON (2-space indent), the per-request and per-step CSVs
// (<prefix>_requests.csv, <prefix>_steps.csv), the Markdown summary and the generated tokens (one
// JSON line per request, in the workload file's order: {"id", "line" (its JSONL line, for a file
// workload), "input_tokens", "output", "top": the 5 best [id, logit] of every output position};
// tools/compare_tokens.py compares two such files) where asked. Output paths
// come from the flags, else from the config's `output:` section.
#include <fmt/format.h>

#include <memory>
#include <nlohmann/json.hpp>

#include "bench_run.h"
#include "commands.h"
#include "hwinfer/metrics.h"

namespace hwinfer::cli {
namespace {

// The candidates kept per output token in the --tokens file.
constexpr int32_t kTopLogits = 5;

// One JSON line per request, in id order: {"id": 3, "input_tokens": 57, "output": [12, 7, ...],
// "top": [[[12, 3.25], [40, 3.19], ...], ...]} (per output token its kTopLogits best [id, logit]).
std::string TokensJsonLines(const BenchResult& result) {
  std::string text;
  for (size_t i = 0; i < result.requests.size() && i < result.outputs.size(); ++i) {
    nlohmann::json top = nlohmann::json::array();
    if (i < result.top_logits.size()) {
      for (const std::vector<TokenLogit>& candidates : result.top_logits[i]) {
        nlohmann::json position = nlohmann::json::array();
        for (const TokenLogit& c : candidates) position.push_back({c.token, c.logit});
        top.push_back(std::move(position));
      }
    }
    nlohmann::json line = {{"id", result.requests[i].id},
                           {"input_tokens", result.requests[i].input_tokens},
                           {"output", result.outputs[i]},
                           {"top", std::move(top)}};
    if (result.requests[i].line > 0) line["line"] = result.requests[i].line;  // a JSONL request
    text += line.dump() + "\n";
  }
  return text;
}

// Requests the server rejected (they can never fit) make the run fail after its results are
// written: the reason of the first few goes to stderr, and the exit status is 1.
int ReportFailedRequests(const BenchResult& result) {
  constexpr int kShown = 3;
  int shown = 0;
  for (const RequestRecord& r : result.requests) {
    if (!r.failed) continue;
    if (shown++ < kShown) fmt::print(stderr, "hwinfer: request {} failed: {}\n", r.id, r.error);
  }
  if (shown == 0) return 0;
  fmt::print(stderr, "hwinfer: error: {} of {} requests failed{}\n", shown, result.requests.size(),
             shown > kShown ? fmt::format(" ({} reasons shown above)", kShown) : "");
  return 1;
}

// Tensor parallelism: a line per rank of the device's `tensor_parallel` section.
void PrintRanks(const BenchResult& result) {
  for (const DeviceResult& device : result.devices) {
    if (!device.json.contains("tensor_parallel")) continue;
    const nlohmann::json& tp = device.json["tensor_parallel"];
    fmt::print("Tensor parallel over {} ranks (MBU over the run, against one device's peak):\n",
               tp["ranks"].get<int64_t>());
    for (const nlohmann::json& rank : tp["per_rank"]) {
      fmt::print(
          "  rank {:<3} {:>10.3f} GB read, device {:.3f} s, all-reduce {:.3f} ms/step, MBU "
          "{:.1f}% (spec {:.1f}%)\n",
          rank["rank"].get<int64_t>(), rank["bytes"].get<double>() / 1e9,
          rank["device_seconds"].get<double>(), rank["comm_ms_per_step"].get<double>(),
          100 * rank["mbu_measured"].get<double>(), 100 * rank["mbu_spec"].get<double>());
    }
  }
}

}  // namespace

int RunBenchCommand(const GlobalOptions& global, const BenchOptions& options) {
  if (!options.endpoint.empty()) {
    if (!options.flags.devices.empty()) {
      return ReportError(
          InvalidArgument("--devices runs replicas in process; with --endpoint "
                          "the server picks its devices"));
    }
    return RunBenchEndpoint(options);
  }
  auto prepared = PrepareBenchRanks(global, options.flags);
  if (!prepared.ok()) return ReportError(prepared.status());
  PreparedBench& bench = **prepared;
  if (bench.followed) return 0;  // a tensor-parallel rank other than 0: rank 0 reports
  const bool progress = !options.flags.no_progress;
  bench.run_options.on_progress = MakeProgressLine(progress, "");
  if (options.save_texts) bench.config.save_texts = true;
  if (!options.tokens_out.empty() || !bench.config.tokens_out.empty()) {
    bench.run_options.top_logits = kTopLogits;
  }
  StatusOr<BenchResult> result = RunBench(bench.config, bench.devices, bench.run_options);
  if (bench.run_options.on_progress) EndProgressLine(progress);
  if (!result.ok()) return ReportError(result.status());

  // The table names its MBU/MFU peaks and ends that section with any warning about them.
  std::vector<std::pair<std::string, RunSummary>> devices;
  for (const DeviceResult& d : result->devices) devices.emplace_back(d.device_id, d.summary);
  fmt::print("{}", SummaryTable(result->summary));
  if (devices.size() > 1) fmt::print("{}", DevicesTable(devices));
  PrintRanks(*result);
  std::fflush(stdout);
  const std::string json_out = options.json_out.empty() ? bench.config.json_out : options.json_out;
  const std::string csv_prefix =
      options.csv_prefix.empty() ? bench.config.csv_prefix : options.csv_prefix;
  const std::string markdown_out =
      options.markdown_out.empty() ? bench.config.markdown_out : options.markdown_out;
  if (!json_out.empty()) {
    if (Status s = WriteTextFile(json_out, result->json.dump(2) + "\n"); !s.ok()) {
      return ReportError(s);
    }
    fmt::print("wrote {}\n", json_out);
  }
  if (!csv_prefix.empty()) {
    for (const auto& [suffix, text] :
         {std::pair{std::string("_requests.csv"), RequestsCsv(result->requests)},
          std::pair{std::string("_steps.csv"), StepsCsv(result->steps)}}) {
      if (Status s = WriteTextFile(csv_prefix + suffix, text); !s.ok()) return ReportError(s);
      fmt::print("wrote {}{}\n", csv_prefix, suffix);
    }
  }
  const std::string tokens_out =
      options.tokens_out.empty() ? bench.config.tokens_out : options.tokens_out;
  if (!tokens_out.empty()) {
    if (Status s = WriteTextFile(tokens_out, TokensJsonLines(*result)); !s.ok()) {
      return ReportError(s);
    }
    fmt::print("wrote {}\n", tokens_out);
  }
  if (!markdown_out.empty()) {
    const std::string markdown = SummaryMarkdown(result->summary) +
                                 (devices.size() > 1 ? "\n" + DevicesMarkdown(devices) : "");
    if (Status s = WriteTextFile(markdown_out, markdown); !s.ok()) {
      return ReportError(s);
    }
    fmt::print("wrote {}\n", markdown_out);
  }
  return ReportFailedRequests(*result);
}

}  // namespace hwinfer::cli
