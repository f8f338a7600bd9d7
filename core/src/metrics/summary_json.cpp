// summary_json.cpp — RunSummary <-> JSON (metrics.h). Keys follow vLLM's benchmark_serving
// result file (duration, completed, request_throughput, mean_ttft_ms, p99_itl_ms, ...), plus
// hwinfer's own: failed, min/max and sample counts of each latency, KV usage, preemptions, steps
// and the per-phase "phases" object. One field list drives both directions, so they cannot drift.
// No file I/O here.
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>

#include "hwinfer/metrics.h"

namespace hwinfer {
namespace {

// Calls fn(key, field) for every flat (top-level) field of |s|; |Summary| is RunSummary or
// const RunSummary, so the same list serves reading and writing. Latencies are in ms, duration
// in s, throughputs per s.
template <typename Summary, typename Fn>
void ForEachField(Summary& s, Fn&& fn) {
  fn("duration", s.duration_s);
  fn("completed", s.completed);
  fn("failed", s.failed);
  fn("total_input_tokens", s.total_input_tokens);
  fn("total_output_tokens", s.total_output_tokens);
  fn("request_throughput", s.request_throughput);
  fn("request_goodput", s.request_goodput);
  fn("output_throughput", s.output_throughput);
  fn("total_token_throughput", s.total_token_throughput);
  const struct {
    const char* metric;
    decltype((s.ttft_ms)) d;  // Distribution&, const for writing
  } distributions[] = {{"ttft", s.ttft_ms},
                       {"tpot", s.tpot_ms},
                       {"itl", s.itl_ms},
                       {"e2el", s.e2el_ms},
                       {"queue", s.queue_ms}};
  for (const auto& [metric, d] : distributions) {
    const std::string m = metric;
    fn("mean_" + m + "_ms", d.mean);
    fn("median_" + m + "_ms", d.median);
    fn("std_" + m + "_ms", d.std);
    fn("p90_" + m + "_ms", d.p90);
    fn("p99_" + m + "_ms", d.p99);
    fn("min_" + m + "_ms", d.min);
    fn("max_" + m + "_ms", d.max);
    fn(m + "_samples", d.count);
  }
  fn("preemptions", s.preemptions);
  fn("steps", s.steps);
  fn("peak_kv_blocks", s.peak_kv_blocks);
  fn("peak_kv_tokens", s.peak_kv_tokens);
  fn("mean_kv_blocks", s.mean_kv_blocks);
  fn("mean_kv_tokens", s.mean_kv_tokens);
  fn("kv_capacity_blocks", s.kv_capacity_blocks);
  fn("kv_block_size", s.kv_block_size);
}

// The same for one phase's fields (time in s, MBU/MFU as fractions of the peak).
template <typename Phase, typename Fn>
void ForEachPhaseField(Phase& p, Fn&& fn) {
  fn("steps", p.steps);
  fn("time_s", p.time_s);
  fn("tokens", p.tokens);
  fn("bytes", p.bytes);
  fn("flops", p.flops);
  fn("mbu_spec", p.mbu_spec);
  fn("mbu_measured", p.mbu_measured);
  fn("mfu_spec", p.mfu_spec);
  fn("mfu_measured", p.mfu_measured);
}

template <typename Summary, typename Fn>
void ForEachPhase(Summary& s, Fn&& fn) {
  fn("prefill", s.prefill);
  fn("decode", s.decode);
  fn("mixed", s.mixed);
  fn("all", s.all);
}

// Reads |object|[|key|] into |out|; |path| names the key in errors ("phases.decode.tokens").
// Integer fields accept a JSON float only when it holds a whole number.
Status ReadNumber(const nlohmann::json& object, const std::string& key, const std::string& path,
                  double* out) {
  auto it = object.find(key);
  if (it == object.end()) return InvalidArgument("summary JSON is missing key \"" + path + "\"");
  if (!it->is_number()) {
    return InvalidArgument("summary JSON key \"" + path + "\" is not a number: " + it->dump());
  }
  *out = it->get<double>();
  return Status::Ok();
}

Status ReadNumber(const nlohmann::json& object, const std::string& key, const std::string& path,
                  int64_t* out) {
  auto it = object.find(key);
  if (it != object.end() && it->is_number_integer()) {
    *out = it->get<int64_t>();
    return Status::Ok();
  }
  double value = 0;
  HWINFER_RETURN_IF_ERROR(ReadNumber(object, key, path, &value));
  if (value != std::trunc(value)) {
    return InvalidArgument("summary JSON key \"" + path + "\" must be a whole number, got " +
                           it->dump());
  }
  *out = static_cast<int64_t>(value);
  return Status::Ok();
}

// Reads every field listed by |for_each| from |object|, keeping the first error in |status|.
template <typename Target, typename ForEach>
void ReadFields(const nlohmann::json& object, const std::string& prefix, Target& target,
                ForEach for_each, Status* status) {
  for_each(target, [&](const std::string& key, auto& field) {
    if (status->ok()) *status = ReadNumber(object, key, prefix + key, &field);
  });
}

}  // namespace

nlohmann::json SummaryToJson(const RunSummary& summary) {
  nlohmann::json json = nlohmann::json::object();
  ForEachField(summary, [&](const std::string& key, const auto& field) { json[key] = field; });
  nlohmann::json phases = nlohmann::json::object();
  ForEachPhase(summary, [&](const char* name, const PhaseMetrics& phase) {
    nlohmann::json object = nlohmann::json::object();
    ForEachPhaseField(phase,
                      [&](const std::string& key, const auto& field) { object[key] = field; });
    phases[name] = std::move(object);
  });
  json["phases"] = std::move(phases);
  return json;
}

StatusOr<RunSummary> SummaryFromJson(const nlohmann::json& json) {
  if (!json.is_object()) return InvalidArgument("summary JSON is not an object");
  RunSummary summary;
  Status status;
  ReadFields(
      json, "", summary, [](auto& s, auto&& fn) { ForEachField(s, fn); }, &status);
  HWINFER_RETURN_IF_ERROR(status);
  auto phases = json.find("phases");
  if (phases == json.end()) return InvalidArgument("summary JSON is missing key \"phases\"");
  if (!phases->is_object()) return InvalidArgument("summary JSON key \"phases\" is not an object");
  ForEachPhase(summary, [&](const char* name, PhaseMetrics& phase) {
    if (!status.ok()) return;
    const std::string path = std::string("phases.") + name;
    auto object = phases->find(name);
    if (object == phases->end() || !object->is_object()) {
      status = InvalidArgument("summary JSON is missing object \"" + path + "\"");
      return;
    }
    ReadFields(
        *object, path + ".", phase, [](auto& p, auto&& fn) { ForEachPhaseField(p, fn); }, &status);
  });
  HWINFER_RETURN_IF_ERROR(status);
  return summary;
}

}  // namespace hwinfer
