// bench_endpoint.cpp — `hwinfer bench --endpoint http://HOST:PORT --model-file F.gguf [--api
// completions|chat] [--model NAME] [--hardware H.yaml] [--config C] [workload flags]`: the same
// workload as the in-process bench (random prompts or a dataset, the same arrivals and
// concurrency cap), sent to any OpenAI-compatible server, each request streamed and timed at the
// client: TTFT at the first token chunk, every inter-token gap, end to end. The records go
// through the same metrics layer, so the summary table and the result JSON have the in-process
// bench's keys. MBU from the outside (the article's formula): (weight bytes + KV bytes at the
// mean context) / TPOT / peak bandwidth.
//
// Completions send the prompt as token ids (exact input lengths, any server that takes them:
// vLLM, llama-server, hwinfer); chat sends its text as one user message. Every request asks for
// exactly its output length (max_tokens, ignore_eos, temperature 0). Queue times are not visible
// from outside: they read 0.
#include <fmt/format.h>

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

#include "bench_run.h"
#include "commands.h"
#include "endpoint_client.h"
#include "hwinfer/bench_runner.h"
#include "hwinfer/hardware_spec.h"
#include "hwinfer/llama_model.h"
#include "hwinfer/metrics.h"
#include "hwinfer/tokenizer.h"

namespace hwinfer::cli {
namespace {

using Clock = std::chrono::steady_clock;

struct EndpointRun {
  serve::Endpoint endpoint;
  bool chat = false;
  std::string model_name;
  const Tokenizer* tokenizer = nullptr;
};

nlohmann::json RequestBody(const EndpointRun& run, const WorkloadRequest& w) {
  nlohmann::json body = {{"model", run.model_name},
                         {"max_tokens", w.output_len},
                         {"temperature", 0},
                         {"ignore_eos", true}};
  if (run.chat) {
    std::vector<int32_t> prompt = w.prompt;
    if (!prompt.empty() && prompt.front() == run.tokenizer->bos()) prompt.erase(prompt.begin());
    body["messages"] = {{{"role", "user"}, {"content", run.tokenizer->Decode(prompt, false)}}};
  } else {
    body["prompt"] = w.prompt;
  }
  return body;
}

// One request sent and read to its end, as a metrics record.
RequestRecord Send(const EndpointRun& run, const WorkloadRequest& w, Clock::time_point start) {
  RequestRecord record;
  record.id = w.id;
  record.line = w.line;
  record.input_tokens = w.input_len;
  record.arrival_s = std::chrono::duration<double>(Clock::now() - start).count();
  record.first_scheduled_s = record.arrival_s;  // not visible from outside
  if (w.prompt.empty()) {
    record.failed = true;
    record.error = "the prompt does not fit the model's context";
    return record;
  }
  const serve::StreamedResponse response =
      serve::PostStreaming(run.endpoint, run.chat, RequestBody(run, w), start);
  if (!response.ok) {
    record.failed = true;
    record.error = response.error;
    return record;
  }
  record.token_times_s = response.chunk_times;
  // A server that sends several tokens in one chunk: the others arrived with the last chunk.
  while (response.usage_tokens > static_cast<int64_t>(record.token_times_s.size()) &&
         !record.token_times_s.empty()) {
    record.token_times_s.push_back(record.token_times_s.back());
  }
  record.output_tokens = static_cast<int64_t>(record.token_times_s.size());
  if (record.output_tokens == 0) {
    record.failed = true;
    record.error = "the stream carried no token";
  }
  return record;
}

// Sends every request at its arrival time, at most |concurrency| at once (0 = no cap).
std::vector<RequestRecord> SendAll(const EndpointRun& run,
                                   const std::vector<WorkloadRequest>& workload,
                                   int64_t concurrency,
                                   const std::function<void(const BenchProgress&)>& on_progress) {
  std::vector<RequestRecord> records(workload.size());
  std::mutex mutex;
  std::condition_variable slot_freed;
  int64_t in_flight = 0, done = 0, output_tokens = 0;
  std::vector<std::thread> threads;
  const Clock::time_point start = Clock::now();
  for (const WorkloadRequest& w : workload) {
    std::this_thread::sleep_until(start + std::chrono::duration_cast<Clock::duration>(
                                              std::chrono::duration<double>(w.arrival_s)));
    {
      std::unique_lock lock(mutex);
      slot_freed.wait(lock, [&] { return concurrency <= 0 || in_flight < concurrency; });
      ++in_flight;
    }
    threads.emplace_back([&, w] {
      RequestRecord record = Send(run, w, start);
      std::lock_guard lock(mutex);
      output_tokens += record.output_tokens;
      records[static_cast<size_t>(w.id)] = std::move(record);
      --in_flight;
      ++done;
      if (on_progress) {
        on_progress({done, static_cast<int64_t>(workload.size()), in_flight, 0,
                     std::chrono::duration<double>(Clock::now() - start).count(), output_tokens});
      }
      slot_freed.notify_all();
    });
  }
  for (std::thread& thread : threads) thread.join();
  return records;
}

// The article's MBU seen from outside: per output token, the weights and the KV cache at the mean
// context are read once in TPOT.
nlohmann::json OutsideMbu(const RunSummary& summary, const LlamaModel& model,
                          const std::vector<RequestRecord>& records, double peak_bandwidth) {
  double context = 0;
  int64_t completed = 0;
  for (const RequestRecord& r : records) {
    if (r.failed) continue;
    context += static_cast<double>(r.input_tokens) + static_cast<double>(r.output_tokens) / 2;
    ++completed;
  }
  context = completed > 0 ? context / static_cast<double>(completed) : 0;
  const double bytes =
      static_cast<double>(model.weight_bytes()) + model.shape().KvBytesPerToken(2.0) * context;
  const double tpot_s = summary.tpot_ms.mean / 1e3;
  const double achieved = tpot_s > 0 ? bytes / tpot_s : 0;
  return {{"weight_bytes", static_cast<double>(model.weight_bytes())},
          {"mean_context_tokens", context},
          {"bytes_per_token", bytes},
          {"achieved_bandwidth_bytes_per_s", achieved},
          {"peak_bandwidth_bytes_per_s", peak_bandwidth},
          {"mbu", peak_bandwidth > 0 ? achieved / peak_bandwidth : 0}};
}

// The result document: the in-process bench's keys, the endpoint, and MBU from outside.
nlohmann::json ResultJson(const BenchOptions& options, const EndpointRun& run,
                          const RunSummary& summary, const LlamaModel& model,
                          const WorkloadSpec& workload, const std::vector<RequestRecord>& records,
                          const nlohmann::json& mbu) {
  nlohmann::json json = SummaryToJson(summary);
  json["env"] = {{"device", options.endpoint},
                 {"endpoint", options.endpoint},
                 {"api", options.api},
                 {"model", run.model_name}};
  json["model"] = {{"file", options.model_file},
                   {"name", model.shape().name},
                   {"weight_bytes", model.weight_bytes()},
                   {"context_length", model.shape().context_length}};
  json["workload"] = WorkloadJson(workload);
  json["mbu_outside"] = mbu;
  nlohmann::json input_lens = nlohmann::json::array(), output_lens = nlohmann::json::array();
  for (const RequestRecord& r : records) {
    input_lens.push_back(r.input_tokens);
    output_lens.push_back(r.output_tokens);
  }
  json["input_lens"] = std::move(input_lens);
  json["output_lens"] = std::move(output_lens);
  return json;
}

}  // namespace

int RunBenchEndpoint(const BenchOptions& options) {
  EndpointRun run;
  auto endpoint = serve::ParseEndpoint(options.endpoint);
  if (!endpoint.ok()) return ReportError(endpoint.status());
  run.endpoint = *endpoint;
  run.chat = options.api == "chat";
  if (options.model_file.empty()) {
    return ReportError(InvalidArgument(
        "--endpoint needs --model-file F.gguf: the served model's file, for its tokenizer "
        "(prompts and lengths) and its sizes (MBU)"));
  }
  BenchConfig config;
  if (!options.flags.config_file.empty()) {
    auto loaded = LoadBenchConfig(options.flags.config_file);
    if (!loaded.ok()) return ReportError(loaded.status());
    config = std::move(*loaded);
  }
  if (Status s = ApplyWorkloadFlags(options.flags, config.workload); !s.ok()) return ReportError(s);
  double peak_bandwidth = 0;
  if (!options.flags.hardware_file.empty()) {
    auto spec = LoadHardwareSpec(options.flags.hardware_file);
    if (!spec.ok()) return ReportError(spec.status());
    peak_bandwidth = spec->peak_bandwidth_bytes_per_s;
  }
  auto model = LlamaModel::Open(options.model_file);
  if (!model.ok()) return ReportError(model.status());
  auto tokenizer = Tokenizer::FromGguf((*model)->file());
  if (!tokenizer.ok()) return ReportError(tokenizer.status());
  run.tokenizer = tokenizer->get();
  DatasetStats stats;
  const ModelShape& shape = (*model)->shape();
  auto workload = DrawBenchWorkload(config, nullptr, run.tokenizer, shape.vocab_size,
                                    shape.context_length, &stats);
  if (!workload.ok()) return ReportError(workload.status());
  if (options.served_model.empty()) {
    auto first = serve::FirstModelId(run.endpoint);
    if (!first.ok()) return ReportError(first.status().WithContext("--endpoint"));
    run.model_name = *first;
  } else {
    run.model_name = options.served_model;
  }
  const bool progress = !options.flags.no_progress;
  const std::vector<RequestRecord> records =
      SendAll(run, *workload, config.workload.max_concurrency,
              MakeProgressLine(progress, run.endpoint.host));
  EndProgressLine(progress);
  SummaryInputs inputs;
  inputs.requests = records;
  inputs.slo = config.slo;
  const RunSummary summary = SummarizeRun(inputs);
  fmt::print("{}", SummaryTable(summary));
  const nlohmann::json mbu = OutsideMbu(summary, **model, records, peak_bandwidth);
  if (peak_bandwidth > 0) {
    fmt::print("MBU from outside: {:.1f}% ({} per token / TPOT against {})\n",
               mbu["mbu"].get<double>() * 100, FormatBytes(mbu["bytes_per_token"].get<double>()),
               FormatBandwidth(peak_bandwidth));
    PeakRates peaks;
    peaks.spec_bandwidth_bytes_per_s = peak_bandwidth;
    peaks.spec_source = options.flags.hardware_file;
    PrintWarnings(UtilisationWarnings(
        {{"MBU from outside", PeakKind::kSpecBandwidth, mbu["mbu"].get<double>()}}, peaks));
  }
  int64_t failed = 0;
  for (const RequestRecord& r : records) {
    if (r.failed && failed++ < 3) fmt::print(stderr, "request {} failed: {}\n", r.id, r.error);
  }
  std::fflush(stdout);
  if (options.json_out.empty()) return 0;
  const nlohmann::json json =
      ResultJson(options, run, summary, **model, config.workload, records, mbu);
  if (Status s = WriteTextFile(options.json_out, json.dump(2) + "\n"); !s.ok()) {
    return ReportError(s);
  }
  fmt::print("wrote {}\n", options.json_out);
  return 0;
}

}  // namespace hwinfer::cli
