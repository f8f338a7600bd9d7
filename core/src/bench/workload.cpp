// workload.cpp — draws a benchmark's requests (hwinfer/workload.h): arrival times, prompt and
// output lengths, prompt tokens, or lengths read from a JSONL file; a prompt dataset's requests
// (hwinfer/dataset.h) get their arrivals here too.
//
// Reproducible: every aspect has its own seeded stream (bench/workload_random.h), so changing
// e.g. the arrival process leaves the lengths and tokens unchanged. The exponential and gamma
// distributions are written here for the same reason as the others there.
// Must not know about schedulers or devices: it only produces the list of requests.
#include "hwinfer/workload.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "bench/workload_random.h"
#include "hwinfer/dataset.h"
#include "hwinfer/input_file.h"

namespace hwinfer {
namespace {

using bench_internal::DrawLength;
using bench_internal::MakeRng;
using bench_internal::RandomStream;
using bench_internal::StandardNormal;
using bench_internal::Uniform01;
using bench_internal::UniformInt;

// Exponential with mean 1 (inversion).
double StandardExponential(std::mt19937_64& rng) { return -std::log1p(-Uniform01(rng)); }

// Gamma(shape, scale = 1), Marsaglia & Tsang (2000); shape < 1 via the U^(1/shape) boost.
double StandardGamma(std::mt19937_64& rng, double shape) {
  if (shape < 1.0) {
    const double u = 1.0 - Uniform01(rng);  // (0, 1]
    return StandardGamma(rng, shape + 1.0) * std::pow(u, 1.0 / shape);
  }
  const double d = shape - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  while (true) {
    double x = 0, v = 0;
    do {
      x = StandardNormal(rng);
      v = 1.0 + c * x;
    } while (v <= 0);
    v = v * v * v;
    const double u = 1.0 - Uniform01(rng);
    if (u < 1.0 - 0.0331 * x * x * x * x) return d * v;
    if (std::log(u) < 0.5 * x * x + d * (1.0 - v + std::log(v))) return d * v;
  }
}

// Arrival times in seconds: the first request at 0, then inter-arrival gaps (vLLM's benchmark
// sends the first request at once and sleeps between requests).
std::vector<double> DrawArrivals(const WorkloadSpec& spec, int64_t count) {
  std::vector<double> arrivals(static_cast<size_t>(count), 0.0);
  if (spec.arrivals == WorkloadSpec::Arrivals::kOffline) return arrivals;
  std::mt19937_64 rng = MakeRng(spec.seed, RandomStream::kArrivals);
  double now_s = 0;
  for (int64_t i = 1; i < count; ++i) {
    double gap_s = 0;
    if (spec.arrivals == WorkloadSpec::Arrivals::kPoisson) {
      gap_s = StandardExponential(rng) / spec.rate;
    } else {  // gamma: shape = burstiness, scale = 1 / (rate * burstiness); mean 1 / rate
      gap_s = StandardGamma(rng, spec.burstiness) / (spec.rate * spec.burstiness);
    }
    now_s += gap_s;
    arrivals[static_cast<size_t>(i)] = now_s;
  }
  return arrivals;
}

// One JSONL line's request (lengths, priority, optional arrival).
struct FileRequest {
  int64_t input_len = 0, output_len = 0;
  int priority = 0;
  bool has_arrival = false;
  double arrival_s = 0;
  int64_t line = 0;  // 1-based line of the file
};

// A double as messages show it: up to 15 significant digits ("0.5", "86400", "1e+300").
std::string Number(double value) { return fmt::format("{:.15g}", value); }

Status LineError(const std::string& file, int64_t line, const std::string& message) {
  return InvalidArgument(file + ":" + std::to_string(line) + ": " + message);
}

// "an integer in [1, kMaxRequestTokens]" check of one key of a JSONL object; the value is quoted
// as written (a huge unsigned number is not "-1").
StatusOr<int64_t> ReadLength(const std::string& file, int64_t line, const nlohmann::json& object,
                             const std::string& key) {
  const nlohmann::json& value = object.at(key);
  const bool in_range = value.is_number_unsigned()
                            ? value.get<uint64_t>() >= 1 &&
                                  value.get<uint64_t>() <= static_cast<uint64_t>(kMaxRequestTokens)
                            : value.is_number_integer() && value.get<int64_t>() >= 1 &&
                                  value.get<int64_t>() <= kMaxRequestTokens;
  if (!in_range) {
    return LineError(file, line,
                     "'" + key + "' must be an integer in [1, " +
                         std::to_string(kMaxRequestTokens) + "] (tokens); got " + value.dump());
  }
  return value.get<int64_t>();
}

StatusOr<FileRequest> ParseLine(const std::string& file, int64_t line, const std::string& text) {
  const nlohmann::json object = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (object.is_discarded())
    return LineError(file, line,
                     "not valid JSON; expected an object like "
                     "{\"input_len\": 128, \"output_len\": 64}");
  if (!object.is_object()) {
    return LineError(file, line,
                     "expected a JSON object like {\"input_len\": 128, "
                     "\"output_len\": 64}; got " +
                         object.dump());
  }
  FileRequest request;
  const bool has_input = object.contains("input_len");
  const bool has_prompt = object.contains("prompt_len");
  if (has_input && has_prompt) {
    return LineError(file, line, "both 'input_len' and 'prompt_len' given; expected one of them");
  }
  if (!has_input && !has_prompt) {
    return LineError(file, line, "missing key 'input_len' (or 'prompt_len')");
  }
  HWINFER_ASSIGN_OR_RETURN(request.input_len,
                           ReadLength(file, line, object, has_input ? "input_len" : "prompt_len"));
  if (!object.contains("output_len")) return LineError(file, line, "missing key 'output_len'");
  HWINFER_ASSIGN_OR_RETURN(request.output_len, ReadLength(file, line, object, "output_len"));
  if (object.contains("priority")) {
    const nlohmann::json& value = object.at("priority");
    if (!value.is_number_integer() || value.get<int64_t>() < std::numeric_limits<int>::min() ||
        value.get<int64_t>() > std::numeric_limits<int>::max()) {
      return LineError(file, line, "'priority' must be an integer; got " + value.dump());
    }
    request.priority = value.get<int>();
  }
  if (object.contains("arrival_s")) {
    const nlohmann::json& value = object.at("arrival_s");
    if (!value.is_number() || !std::isfinite(value.get<double>()) || value.get<double>() < 0 ||
        value.get<double>() > kMaxArrivalSeconds) {
      return LineError(file, line,
                       "'arrival_s' must be a number in [0, " + Number(kMaxArrivalSeconds) +
                           "] (seconds; a benchmark's requests arrive within a day); got " +
                           value.dump());
    }
    request.has_arrival = true;
    request.arrival_s = value.get<double>();
  }
  // Other keys (e.g. a prompt text) are ignored.
  return request;
}

// Reads the requests of |file|: one JSON object per non-blank line (line numbers are 1-based and
// count blank lines). |limit| > 0 keeps the first |limit| requests and requires that many; at
// most kMaxWorkloadRequests are read either way.
StatusOr<std::vector<FileRequest>> ReadJsonl(const std::string& file, int64_t limit) {
  HWINFER_ASSIGN_OR_RETURN(InputFile in, InputFile::Open(file, "workload file"));
  if (in.size_bytes() > kMaxWorkloadFileBytes) {
    return InvalidArgument(fmt::format("workload file '{}' is {} bytes; at most {} are read", file,
                                       in.size_bytes(), kMaxWorkloadFileBytes));
  }
  std::vector<FileRequest> requests;
  std::string text;
  int64_t line = 0;
  while (limit == 0 || static_cast<int64_t>(requests.size()) < limit) {
    HWINFER_ASSIGN_OR_RETURN(const bool more, in.ReadLine(&text, kMaxWorkloadLineBytes));
    if (!more) break;
    ++line;
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (static_cast<int64_t>(requests.size()) == kMaxWorkloadRequests) {
      return LineError(file, line,
                       fmt::format("more than {} requests; a workload holds at most {} (set "
                                   "num_requests to send the first N)",
                                   kMaxWorkloadRequests, kMaxWorkloadRequests));
    }
    HWINFER_ASSIGN_OR_RETURN(FileRequest request, ParseLine(file, line, text));
    request.line = line;
    requests.push_back(request);
  }
  if (requests.empty()) {
    return InvalidArgument("workload file '" + file +
                           "' holds no requests; expected one JSON "
                           "object per line like {\"input_len\": 128, \"output_len\": 64}");
  }
  if (limit > 0 && static_cast<int64_t>(requests.size()) < limit) {
    return InvalidArgument("workload file '" + file + "' holds " + std::to_string(requests.size()) +
                           " requests but num_requests is " + std::to_string(limit) +
                           "; expected at most as many as the file has "
                           "(0 = every line)");
  }
  return requests;
}

// Every arrival within kMaxArrivalSeconds (a rate of 1e-300 would sleep for ever), and (with
// |count_prompts|) the prompts that will be built within kMaxWorkloadPromptTokens, checked before
// any is built.
Status CheckWorkloadBounds(const WorkloadSpec& spec, const std::vector<WorkloadRequest>& requests,
                           int64_t max_model_len, bool count_prompts) {
  int64_t prompt_tokens = 0;
  for (size_t i = 0; i < requests.size(); ++i) {
    const WorkloadRequest& r = requests[i];
    if (!(r.arrival_s <= kMaxArrivalSeconds)) {
      return InvalidArgument(fmt::format(
          "workload: request {} would arrive at {} s; arrivals are bounded to {} s (one day): "
          "raise 'rate' ({} requests/s) or send fewer requests",
          i, Number(r.arrival_s), Number(kMaxArrivalSeconds), Number(spec.rate)));
    }
    if (max_model_len > 0 && r.input_len > max_model_len) continue;  // gets no prompt
    prompt_tokens += r.input_len;  // <= 10^6 requests x 2^31 tokens: no overflow
  }
  if (count_prompts && prompt_tokens > kMaxWorkloadPromptTokens) {
    return InvalidArgument(
        fmt::format("workload: the prompts hold {} tokens in all; at most {} are generated (lower "
                    "num_requests or the input lengths)",
                    prompt_tokens, kMaxWorkloadPromptTokens));
  }
  return Status::Ok();
}

}  // namespace

Status LengthDistribution::Validate(const std::string& what) const {
  switch (kind) {
    case Kind::kFixed:
      if (value <= 0 || value > kMaxRequestTokens) {
        return InvalidArgument(what + " length must be in [1, " +
                               std::to_string(kMaxRequestTokens) + "] tokens; got " +
                               std::to_string(value));
      }
      return Status::Ok();
    case Kind::kUniform:
    case Kind::kNormal:
      if (min <= 0) {
        return InvalidArgument(what + ".min must be > 0 tokens; got " + std::to_string(min));
      }
      if (max < min || max > kMaxRequestTokens) {
        return InvalidArgument(what + ".max must be in [" + what + ".min (" + std::to_string(min) +
                               "), " + std::to_string(kMaxRequestTokens) + "]; got " +
                               std::to_string(max));
      }
      if (kind == Kind::kNormal) {
        if (!std::isfinite(mean)) {
          return InvalidArgument(what + ".mean must be a finite number; got " + Number(mean));
        }
        if (!std::isfinite(std) || std < 0) {
          return InvalidArgument(what + ".std must be a number >= 0; got " + Number(std));
        }
      }
      return Status::Ok();
  }
  return InvalidArgument(what + ": unknown length distribution");
}

Status WorkloadSpec::Validate() const {
  const bool from_dataset = dataset.kind != DatasetSpec::Kind::kRandom;
  if (num_requests < 0 || (num_requests == 0 && jsonl_file.empty() && !from_dataset) ||
      num_requests > kMaxWorkloadRequests) {
    return InvalidArgument("num_requests must be in [1, " + std::to_string(kMaxWorkloadRequests) +
                           "] (0 = every line or prompt is allowed only with a file or a "
                           "dataset); got " +
                           std::to_string(num_requests));
  }
  if (from_dataset && dataset.file.empty()) {
    return InvalidArgument(std::string("dataset ") + DatasetKindName(dataset.kind) +
                           " needs a file (" + DatasetKindName(dataset.kind) + ":FILE)");
  }
  if (from_dataset && !jsonl_file.empty()) {
    return InvalidArgument(
        "a workload file (lengths) and a dataset (prompts) exclude each other; got file '" +
        jsonl_file + "' and dataset " + DatasetKindName(dataset.kind) + ":" + dataset.file);
  }
  if (arrivals != Arrivals::kOffline && (!std::isfinite(rate) || rate <= 0)) {
    return InvalidArgument(std::string("rate must be > 0 requests/s for ") +
                           ArrivalsName(arrivals) + " arrivals; got " + Number(rate));
  }
  if (!std::isfinite(burstiness) || burstiness <= 0) {
    return InvalidArgument("burstiness must be > 0 (the gamma shape; 1 = Poisson); got " +
                           Number(burstiness));
  }
  if (max_concurrency < 0) {
    return InvalidArgument("max_concurrency must be >= 0 (0 = unlimited); got " +
                           std::to_string(max_concurrency));
  }
  if (jsonl_file.empty()) {
    HWINFER_RETURN_IF_ERROR(input.Validate("input"));
    HWINFER_RETURN_IF_ERROR(output.Validate("output"));
  }
  return Status::Ok();
}

namespace {

// Lengths, arrivals and ids (file / drawing order) of every request, checked against the bounds;
// no prompt token yet.
StatusOr<std::vector<WorkloadRequest>> DrawRequests(const WorkloadSpec& spec, int64_t max_model_len,
                                                    bool count_prompts) {
  HWINFER_RETURN_IF_ERROR(spec.Validate());
  std::vector<WorkloadRequest> requests;
  if (!spec.jsonl_file.empty()) {
    HWINFER_ASSIGN_OR_RETURN(const std::vector<FileRequest> lines,
                             ReadJsonl(spec.jsonl_file, spec.num_requests));
    const std::vector<double> arrivals = DrawArrivals(spec, static_cast<int64_t>(lines.size()));
    for (size_t i = 0; i < lines.size(); ++i) {
      WorkloadRequest request;
      request.line = lines[i].line;
      request.arrival_s = lines[i].has_arrival ? lines[i].arrival_s : arrivals[i];
      request.input_len = lines[i].input_len;
      request.output_len = lines[i].output_len;
      request.priority = lines[i].priority;
      requests.push_back(std::move(request));
    }
  } else {
    const std::vector<double> arrivals = DrawArrivals(spec, spec.num_requests);
    std::mt19937_64 rng = MakeRng(spec.seed, RandomStream::kLengths);
    for (int64_t i = 0; i < spec.num_requests; ++i) {
      WorkloadRequest request;
      request.arrival_s = arrivals[static_cast<size_t>(i)];
      request.input_len = DrawLength(spec.input, rng);
      request.output_len = DrawLength(spec.output, rng);
      requests.push_back(std::move(request));
    }
  }
  HWINFER_RETURN_IF_ERROR(CheckWorkloadBounds(spec, requests, max_model_len, count_prompts));
  for (size_t i = 0; i < requests.size(); ++i) requests[i].id = static_cast<int64_t>(i);
  return requests;
}

}  // namespace

Status CheckWorkload(const WorkloadSpec& spec, int64_t max_model_len) {
  if (spec.dataset.kind != DatasetSpec::Kind::kRandom) {
    // Which prompts are kept depends on the tokenizer: only the file and the arrivals here.
    HWINFER_RETURN_IF_ERROR(spec.Validate());
    HWINFER_ASSIGN_OR_RETURN(const DatasetFile file, ReadDataset(spec.dataset));
    const int64_t count =
        spec.num_requests > 0 ? spec.num_requests : static_cast<int64_t>(file.entries.size());
    std::vector<WorkloadRequest> requests(static_cast<size_t>(count));
    return ScheduleArrivals(spec, requests);
  }
  // Without the model's length, which prompts will be built is not known yet.
  return DrawRequests(spec, max_model_len, /*count_prompts=*/max_model_len > 0).status();
}

Status ScheduleArrivals(const WorkloadSpec& spec, std::vector<WorkloadRequest>& requests) {
  const std::vector<double> arrivals = DrawArrivals(spec, static_cast<int64_t>(requests.size()));
  for (size_t i = 0; i < requests.size(); ++i) requests[i].arrival_s = arrivals[i];
  // Arrivals ascend with the index: the list stays sorted by arrival.
  return CheckWorkloadBounds(spec, requests, 0, /*count_prompts=*/false);
}

StatusOr<std::vector<WorkloadRequest>> GenerateWorkload(const WorkloadSpec& spec,
                                                        int64_t vocab_size, int64_t max_model_len) {
  if (vocab_size < 2) {
    return InvalidArgument(
        "vocab_size must be >= 2 (prompt tokens are drawn from [1, vocab)); "
        "got " +
        std::to_string(vocab_size));
  }
  HWINFER_ASSIGN_OR_RETURN(std::vector<WorkloadRequest> requests,
                           DrawRequests(spec, max_model_len, /*count_prompts=*/true));
  // File order breaks ties, so offline requests keep their order.
  std::stable_sort(
      requests.begin(), requests.end(),
      [](const WorkloadRequest& a, const WorkloadRequest& b) { return a.arrival_s < b.arrival_s; });
  std::mt19937_64 token_rng = MakeRng(spec.seed, RandomStream::kTokens);
  for (WorkloadRequest& request : requests) {
    if (max_model_len > 0 && request.input_len > max_model_len) continue;  // can never run
    request.prompt.resize(static_cast<size_t>(request.input_len));
    for (int32_t& token : request.prompt) {
      token = static_cast<int32_t>(UniformInt(token_rng, 1, vocab_size - 1));
    }
  }
  return requests;
}

const char* ArrivalsName(WorkloadSpec::Arrivals arrivals) {
  switch (arrivals) {
    case WorkloadSpec::Arrivals::kOffline:
      return "offline";
    case WorkloadSpec::Arrivals::kPoisson:
      return "poisson";
    case WorkloadSpec::Arrivals::kGamma:
      return "gamma";
  }
  return "unknown";
}

const char* LengthKindName(LengthDistribution::Kind kind) {
  switch (kind) {
    case LengthDistribution::Kind::kFixed:
      return "fixed";
    case LengthDistribution::Kind::kUniform:
      return "uniform";
    case LengthDistribution::Kind::kNormal:
      return "normal";
  }
  return "unknown";
}

}  // namespace hwinfer
