// bench_config.cpp — parses the benchmark sections of a config file (schema in bench_config.h):
// model, workload, scheduler, metrics, output, backend and device, into a BenchConfig.
//
// Strict like the runtime parser and built on the same helpers (config/yaml_checks.h): unknown
// keys, wrong types, out-of-range values and unknown names are one-line InvalidArgument errors
// starting with file:line:column and naming the key and the expected form. The runtime keys
// (plugin_paths, backends, ...) are accepted and left to runtime_config.cpp. It must not open
// models, load plugins or touch devices; it only checks that a named model shape file exists.
#include "hwinfer/bench_config.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <optional>
#include <string_view>
#include <vector>

#include "config/yaml_checks.h"
#include "hwinfer/config.h"
#include "hwinfer/dataset.h"
#include "hwinfer/llama_executor.h"

namespace hwinfer {
namespace {

namespace fs = std::filesystem;
using config_internal::Describe;
using config_internal::ErrorAt;
using config_internal::LocationOf;
using config_internal::MapEntry;
using config_internal::Quote;
using config_internal::ValueLocation;

const std::vector<std::string_view> kModelKeys = {"path", "shape", "type", "weights", "cache_dir"};
const std::vector<std::string_view> kWorkloadKeys = {
    "num_requests", "arrivals", "rate",    "burstiness", "max_concurrency", "input", "output",
    "file",         "dataset",  "shuffle", "seed"};
const std::vector<std::string_view> kSchedulerKeys = {
    "mode",          "kv_reservation", "max_batch_tokens", "max_sequences",   "batch_timeout_ms",
    "ageing_s",      "kv_block_size",  "kv_dtype",         "kv_cache_tokens", "memory_utilization",
    "decode_graphs", "devices",        "routing",          "split",           "layer_split",
    "tp_collectives"};
const std::vector<std::string_view> kMetricsKeys = {"slo"};
const std::vector<std::string_view> kSloKeys = {"ttft_ms", "tpot_ms", "e2el_ms"};
const std::vector<std::string_view> kOutputKeys = {"json", "csv", "markdown", "tokens",
                                                   "save_texts"};
const std::vector<std::string_view> kLengthKeys = {"dist", "value", "min", "max", "mean", "std"};

const std::vector<std::string_view> kWeightTypes = {"f32", "f16", "bf16", "q8_0", "q4_0"};
const std::vector<std::string_view> kWeightSources = {"synthesize", "dummy"};
const std::vector<std::string_view> kArrivals = {"offline", "poisson", "gamma"};
const std::vector<std::string_view> kLengthKinds = {"fixed", "uniform", "normal"};
// Same names and order as BatchingMode (hwinfer/scheduler.h).
const std::vector<std::string_view> kModes = {"continuous", "dynamic", "static"};
// Same names and order as KvReservation (hwinfer/scheduler.h).
const std::vector<std::string_view> kKvReservations = {"paged", "max_length"};
const std::vector<std::string_view> kKvDtypes = {"f16", "i8"};
// Same names and order as ReplicaRouting (hwinfer/replica_routing.h).
const std::vector<std::string_view> kRoutings = {"least_tokens", "round_robin"};
const std::vector<std::string_view> kSplits = {"replicas", "layers"};
const std::vector<std::string_view> kTpCollectives = {"auto", "host", "device"};

constexpr double kSecondsPerMs = 1e-3;
constexpr double kMaxBatchTimeoutMs = 86400e3;

struct ParseContext {
  std::string file;
  std::string base_dir;
};

// One of |names| at |entry|; its index. "'mode' must be one of: a, b; got 'x'; did you mean 'a'?"
StatusOr<size_t> GetChoice(const ParseContext& ctx, const MapEntry& entry,
                           const std::vector<std::string_view>& names) {
  if (entry.value.IsScalar()) {
    const auto it = std::find(names.begin(), names.end(), entry.value.Scalar());
    if (it != names.end()) return static_cast<size_t>(it - names.begin());
  }
  std::string hint =
      entry.value.IsScalar() ? config_internal::SuggestionFor(entry.value.Scalar(), names) : "";
  while (!hint.empty() && hint.back() == ' ') hint.pop_back();
  return ErrorAt(ValueLocation(ctx.file, entry),
                 Quote(entry.key) + " must be one of: " + config_internal::JoinKeys(names) +
                     "; got " + Describe(entry.value) + (hint.empty() ? "" : "; " + hint));
}

// An integer in [|min|, |max|]; |form| says what it counts ("tokens per step").
StatusOr<int64_t> GetIntegerInRange(const ParseContext& ctx, const MapEntry& entry, int64_t min,
                                    int64_t max, const std::string& form) {
  const std::optional<int64_t> value =
      entry.value.IsScalar() ? config_internal::ParseInteger(entry.value.Scalar()) : std::nullopt;
  if (!value || *value < min || *value > max) {
    const std::string range = max == std::numeric_limits<int64_t>::max()
                                  ? ">= " + std::to_string(min)
                                  : "in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
    return ErrorAt(ValueLocation(ctx.file, entry), Quote(entry.key) + " must be an integer " +
                                                       range + " (" + form + "); got " +
                                                       Describe(entry.value));
  }
  return *value;
}

StatusOr<int64_t> GetIntegerAtLeast(const ParseContext& ctx, const MapEntry& entry, int64_t min,
                                    const std::string& form) {
  return GetIntegerInRange(ctx, entry, min, std::numeric_limits<int64_t>::max(), form);
}

// A finite number, > 0 when |positive| else >= 0.
StatusOr<double> GetNonNegative(const ParseContext& ctx, const MapEntry& entry, bool positive,
                                const std::string& form) {
  const std::optional<double> value =
      entry.value.IsScalar() ? config_internal::ParseNumber(entry.value.Scalar()) : std::nullopt;
  if (!value || *value < 0 || (positive && *value == 0)) {
    return ErrorAt(ValueLocation(ctx.file, entry), Quote(entry.key) + " must be a number " +
                                                       (positive ? "> 0" : ">= 0") + " (" + form +
                                                       "); got " + Describe(entry.value));
  }
  return *value;
}

// A path relative to the config file's folder; "~/" is the home folder.
StatusOr<std::string> GetPath(const ParseContext& ctx, const MapEntry& entry) {
  StatusOr<std::string> text = config_internal::GetString(ctx.file, entry);
  if (!text.ok()) return text.status();
  const std::string& path = text.value();
  if (path.rfind('~', 0) == 0 && (path.size() == 1 || path[1] == '/')) {
    const char* home = std::getenv("HOME");
    if (home == nullptr || *home == '\0') {
      return ErrorAt(ValueLocation(ctx.file, entry),
                     Quote(entry.key) + " starts with '~' but HOME is not set; give a full path");
    }
    return (fs::path(home) / path.substr(std::min<size_t>(path.size(), 2)))
        .lexically_normal()
        .string();
  }
  return config_internal::ResolvePath(ctx.base_dir, path);
}

// <libdir>/../share/hwinfer/models next to the loaded libhwinfer, when it can be found.
std::optional<fs::path> InstalledModelsDir() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&InstalledModelsDir), &info) == 0 ||
      info.dli_fname == nullptr) {
    return std::nullopt;
  }
  std::error_code ec;
  const fs::path library = fs::canonical(info.dli_fname, ec);
  if (ec) return std::nullopt;
  return library.parent_path().parent_path() / "share" / "hwinfer" / "models";
}

// `shape:` — a *.yaml path (relative to the config), or a name looked up as
// <config dir>/models/NAME.yaml, <config dir>/../configs/models/NAME.yaml, then the installed
// <prefix>/share/hwinfer/models/NAME.yaml. NotFound lists every path tried.
StatusOr<std::string> ResolveShape(const ParseContext& ctx, const MapEntry& entry) {
  HWINFER_ASSIGN_OR_RETURN(const std::string shape, config_internal::GetString(ctx.file, entry));
  std::error_code ec;
  const bool is_path =
      shape.ends_with(".yaml") || shape.ends_with(".yml") || shape.find('/') != std::string::npos;
  if (is_path) {
    const std::string path = config_internal::ResolvePath(ctx.base_dir, shape);
    if (fs::is_regular_file(path, ec)) return path;
    return Status(StatusCode::kNotFound,
                  ValueLocation(ctx.file, entry).ToString() + ": model shape file " + Quote(path) +
                      " does not exist; expected a configs/models name or a *.yaml path");
  }
  const fs::path base(ctx.base_dir.empty() ? "." : ctx.base_dir);
  std::vector<fs::path> candidates = {base / "models" / (shape + ".yaml"),
                                      base / ".." / "configs" / "models" / (shape + ".yaml")};
  if (const std::optional<fs::path> installed = InstalledModelsDir()) {
    candidates.push_back(*installed / (shape + ".yaml"));
  }
  std::string tried;
  for (const fs::path& candidate : candidates) {
    const std::string path = candidate.lexically_normal().string();
    if (fs::is_regular_file(path, ec)) return path;
    tried += (tried.empty() ? "" : ", ") + path;
  }
  return Status(StatusCode::kNotFound, ValueLocation(ctx.file, entry).ToString() +
                                           ": unknown model shape " + Quote(shape) + "; tried " +
                                           tried);
}

Status ReadModel(const ParseContext& ctx, const MapEntry& section, ModelSource& model) {
  HWINFER_ASSIGN_OR_RETURN(
      const std::vector<MapEntry> entries,
      config_internal::ReadMap(ctx.file, section.value, ValueLocation(ctx.file, section), "'model'",
                               kModelKeys));
  const MapEntry* path = nullptr;
  const MapEntry* shape = nullptr;
  const MapEntry* shape_only = nullptr;  // type / weights / cache_dir
  for (const MapEntry& entry : entries) {
    if (entry.key == "path") {
      path = &entry;
      HWINFER_ASSIGN_OR_RETURN(model.path, GetPath(ctx, entry));
    } else if (entry.key == "shape") {
      shape = &entry;
      HWINFER_ASSIGN_OR_RETURN(model.shape, ResolveShape(ctx, entry));
    } else if (entry.key == "type") {
      shape_only = &entry;
      HWINFER_ASSIGN_OR_RETURN(const size_t index, GetChoice(ctx, entry, kWeightTypes));
      model.type = std::string(kWeightTypes[index]);
    } else if (entry.key == "weights") {
      shape_only = &entry;
      HWINFER_ASSIGN_OR_RETURN(const size_t index, GetChoice(ctx, entry, kWeightSources));
      model.weights = index == 0 ? ModelSource::Weights::kSynthesize : ModelSource::Weights::kDummy;
    } else if (entry.key == "cache_dir") {
      shape_only = &entry;
      HWINFER_ASSIGN_OR_RETURN(model.cache_dir, GetPath(ctx, entry));
    }
  }
  if (path != nullptr && shape != nullptr) {
    return ErrorAt(LocationOf(ctx.file, shape->key_node),
                   "'model' has both 'path' and 'shape'; expected exactly one (a GGUF file, or a "
                   "shape to synthesise)");
  }
  if (path == nullptr && shape == nullptr) {
    return ErrorAt(ValueLocation(ctx.file, section),
                   "'model' needs 'path' (a GGUF file) or 'shape' (a configs/models name or "
                   "*.yaml path); got neither");
  }
  if (path != nullptr && shape_only != nullptr) {
    return ErrorAt(LocationOf(ctx.file, shape_only->key_node),
                   Quote(shape_only->key) +
                       " applies only with 'shape'; a GGUF 'path' brings "
                       "its own weights");
  }
  return Status::Ok();
}

// `input:` / `output:` — N, or {dist: fixed, value: N} | {dist: uniform, min, max} |
// {dist: normal, mean, std, min, max}.
StatusOr<LengthDistribution> ReadLength(const ParseContext& ctx, const MapEntry& section) {
  const std::string form = "an integer in [1, " + std::to_string(kMaxRequestTokens) +
                           "] (tokens), {dist: uniform, min: A, max: B} or "
                           "{dist: normal, mean: M, std: S, min: A, max: B}";
  LengthDistribution dist;
  if (section.value.IsScalar()) {
    const std::optional<int64_t> value = config_internal::ParseInteger(section.value.Scalar());
    if (!value || *value <= 0 || *value > kMaxRequestTokens) {
      return ErrorAt(ValueLocation(ctx.file, section),
                     Quote(section.key) + " must be " + form + "; got " + Describe(section.value));
    }
    dist.kind = LengthDistribution::Kind::kFixed;
    dist.value = *value;
    return dist;
  }
  if (!section.value.IsMap()) {
    return ErrorAt(ValueLocation(ctx.file, section),
                   Quote(section.key) + " must be " + form + "; got " + Describe(section.value));
  }
  const std::string what = "'" + section.key + "'";
  HWINFER_ASSIGN_OR_RETURN(
      const std::vector<MapEntry> entries,
      config_internal::ReadMap(ctx.file, section.value, ValueLocation(ctx.file, section), what,
                               kLengthKeys));
  HWINFER_RETURN_IF_ERROR(
      config_internal::RequireKey(ctx.file, section.value, what, entries, "dist"));
  for (const MapEntry& entry : entries) {
    if (entry.key != "dist") continue;
    HWINFER_ASSIGN_OR_RETURN(const size_t index, GetChoice(ctx, entry, kLengthKinds));
    dist.kind = static_cast<LengthDistribution::Kind>(index);
  }
  std::vector<std::string_view> wanted;
  switch (dist.kind) {
    case LengthDistribution::Kind::kFixed:
      wanted = {"value"};
      break;
    case LengthDistribution::Kind::kUniform:
      wanted = {"min", "max"};
      break;
    case LengthDistribution::Kind::kNormal:
      wanted = {"mean", "std", "min", "max"};
      break;
  }
  for (std::string_view key : wanted) {
    HWINFER_RETURN_IF_ERROR(
        config_internal::RequireKey(ctx.file, section.value, what, entries, key));
  }
  for (const MapEntry& entry : entries) {
    if (entry.key == "dist") continue;
    if (std::find(wanted.begin(), wanted.end(), entry.key) == wanted.end()) {
      return ErrorAt(LocationOf(ctx.file, entry.key_node),
                     Quote(entry.key) + " does not apply to dist " + LengthKindName(dist.kind) +
                         "; expected only: " + config_internal::JoinKeys(wanted));
    }
    if (entry.key == "value") {
      HWINFER_ASSIGN_OR_RETURN(dist.value,
                               GetIntegerInRange(ctx, entry, 1, kMaxRequestTokens, "tokens"));
    } else if (entry.key == "min") {
      HWINFER_ASSIGN_OR_RETURN(dist.min,
                               GetIntegerInRange(ctx, entry, 1, kMaxRequestTokens, "tokens"));
    } else if (entry.key == "max") {
      HWINFER_ASSIGN_OR_RETURN(dist.max,
                               GetIntegerInRange(ctx, entry, 1, kMaxRequestTokens, "tokens"));
    } else if (entry.key == "mean") {
      HWINFER_ASSIGN_OR_RETURN(dist.mean, config_internal::GetNumber(ctx.file, entry));
    } else if (entry.key == "std") {
      HWINFER_ASSIGN_OR_RETURN(dist.std, GetNonNegative(ctx, entry, false, "tokens"));
    }
  }
  if (const Status status = dist.Validate(section.key); !status.ok()) {
    return ErrorAt(ValueLocation(ctx.file, section), status.message());
  }
  return dist;
}

// `dataset: sharegpt:FILE | jsonl:FILE | random`, FILE relative to the config's folder.
StatusOr<DatasetSpec> ReadDatasetKey(const ParseContext& ctx, const MapEntry& entry) {
  HWINFER_ASSIGN_OR_RETURN(const std::string text, config_internal::GetString(ctx.file, entry));
  StatusOr<DatasetSpec> spec = ParseDatasetSpec(text);
  if (!spec.ok()) return ErrorAt(ValueLocation(ctx.file, entry), spec.status().message());
  if (!spec->file.empty()) spec->file = config_internal::ResolvePath(ctx.base_dir, spec->file);
  return spec;
}

// With a dataset, the prompts come from it: `input` and a lengths `file` do not apply, and an
// `output` given overrides the dataset's output lengths.
Status CheckDatasetKeys(const ParseContext& ctx, const std::vector<MapEntry>& entries,
                        WorkloadSpec& spec) {
  if (spec.dataset.kind == DatasetSpec::Kind::kRandom) return Status::Ok();
  for (const MapEntry& entry : entries) {
    if (entry.key == "input" || entry.key == "file") {
      return ErrorAt(LocationOf(ctx.file, entry.key_node),
                     Quote(entry.key) + " does not apply with dataset " +
                         DatasetSpecText(spec.dataset) +
                         ": the prompts and their lengths come from the dataset");
    }
    if (entry.key == "output") spec.dataset.override_output = true;
  }
  return Status::Ok();
}

Status ReadWorkload(const ParseContext& ctx, const MapEntry& section, WorkloadSpec& spec) {
  HWINFER_ASSIGN_OR_RETURN(
      const std::vector<MapEntry> entries,
      config_internal::ReadMap(ctx.file, section.value, ValueLocation(ctx.file, section),
                               "'workload'", kWorkloadKeys));
  const MapEntry* num_requests = nullptr;
  bool shuffle = true;
  for (const MapEntry& entry : entries) {
    if (entry.key == "num_requests") {
      num_requests = &entry;
      HWINFER_ASSIGN_OR_RETURN(
          spec.num_requests,
          GetIntegerInRange(ctx, entry, 0, kMaxWorkloadRequests, "requests; 0 = every file line"));
    } else if (entry.key == "arrivals") {
      HWINFER_ASSIGN_OR_RETURN(const size_t index, GetChoice(ctx, entry, kArrivals));
      spec.arrivals = static_cast<WorkloadSpec::Arrivals>(index);
    } else if (entry.key == "rate") {
      HWINFER_ASSIGN_OR_RETURN(spec.rate, GetNonNegative(ctx, entry, true, "requests/s"));
    } else if (entry.key == "burstiness") {
      HWINFER_ASSIGN_OR_RETURN(spec.burstiness,
                               GetNonNegative(ctx, entry, true, "gamma shape; 1 = Poisson"));
    } else if (entry.key == "max_concurrency") {
      HWINFER_ASSIGN_OR_RETURN(
          spec.max_concurrency,
          GetIntegerInRange(ctx, entry, 0, kMaxWorkloadRequests, "requests; 0 = unlimited"));
    } else if (entry.key == "input") {
      HWINFER_ASSIGN_OR_RETURN(spec.input, ReadLength(ctx, entry));
    } else if (entry.key == "output") {
      HWINFER_ASSIGN_OR_RETURN(spec.output, ReadLength(ctx, entry));
    } else if (entry.key == "file") {
      HWINFER_ASSIGN_OR_RETURN(spec.jsonl_file, GetPath(ctx, entry));
    } else if (entry.key == "dataset") {
      HWINFER_ASSIGN_OR_RETURN(spec.dataset, ReadDatasetKey(ctx, entry));
    } else if (entry.key == "shuffle") {
      HWINFER_ASSIGN_OR_RETURN(shuffle, config_internal::GetBool(ctx.file, entry));
    } else if (entry.key == "seed") {
      HWINFER_ASSIGN_OR_RETURN(const int64_t seed, GetIntegerAtLeast(ctx, entry, 0, "seed"));
      spec.seed = static_cast<uint64_t>(seed);
    }
  }
  spec.dataset.shuffle = shuffle;
  HWINFER_RETURN_IF_ERROR(CheckDatasetKeys(ctx, entries, spec));
  // A workload file or a dataset without num_requests sends every line or prompt.
  const bool from_file =
      !spec.jsonl_file.empty() || spec.dataset.kind != DatasetSpec::Kind::kRandom;
  if (num_requests == nullptr && from_file) spec.num_requests = 0;
  if (num_requests != nullptr && spec.num_requests == 0 && !from_file) {
    return ErrorAt(ValueLocation(ctx.file, *num_requests),
                   "'num_requests' must be an integer > 0 (0 = every line or prompt needs a "
                   "workload 'file' or a 'dataset'); got '0'");
  }
  if (spec.arrivals != WorkloadSpec::Arrivals::kOffline && spec.rate <= 0) {
    return ErrorAt(ValueLocation(ctx.file, section),
                   std::string("'workload' has arrivals: ") + ArrivalsName(spec.arrivals) +
                       " but no 'rate'; expected rate: R (requests/s, > 0)");
  }
  if (const Status status = spec.Validate(); !status.ok()) {
    return ErrorAt(ValueLocation(ctx.file, section), "'workload': " + status.message());
  }
  return Status::Ok();
}

// scheduler.devices: a non-empty list of device selectors, none twice.
StatusOr<std::vector<std::string>> ReadDeviceList(const ParseContext& ctx, const MapEntry& entry) {
  const std::string expected =
      "'devices' must be a non-empty list of devices, e.g. [cpu:0, vulkan:0]; got ";
  if (!entry.value.IsSequence() || entry.value.size() == 0) {
    return ErrorAt(ValueLocation(ctx.file, entry), expected + Describe(entry.value));
  }
  std::vector<std::string> devices;
  for (const YAML::Node& item : entry.value) {
    if (!item.IsScalar() || item.Scalar().empty()) {
      return ErrorAt(LocationOf(ctx.file, item), expected + "an item " + Describe(item));
    }
    if (std::find(devices.begin(), devices.end(), item.Scalar()) != devices.end()) {
      return ErrorAt(LocationOf(ctx.file, item), "'devices' names " + Quote(item.Scalar()) +
                                                     " twice; each device runs one replica");
    }
    devices.push_back(item.Scalar());
  }
  return devices;
}

// scheduler.layer_split: a non-empty list of layer counts, each >= 1.
StatusOr<std::vector<int64_t>> ReadLayerSplit(const ParseContext& ctx, const MapEntry& entry) {
  const std::string expected =
      "'layer_split' must be a non-empty list of layer counts (integers >= 1), one per device, "
      "e.g. [11, 11]; got ";
  if (!entry.value.IsSequence() || entry.value.size() == 0) {
    return ErrorAt(ValueLocation(ctx.file, entry), expected + Describe(entry.value));
  }
  std::vector<int64_t> counts;
  for (const YAML::Node& item : entry.value) {
    const std::optional<int64_t> count =
        item.IsScalar() ? config_internal::ParseInteger(item.Scalar()) : std::nullopt;
    if (!count || *count < 1 || *count > 1000000) {
      return ErrorAt(LocationOf(ctx.file, item), expected + "an item " + Describe(item));
    }
    counts.push_back(*count);
  }
  return counts;
}

Status ReadScheduler(const ParseContext& ctx, const MapEntry& section, BenchConfig& config) {
  HWINFER_ASSIGN_OR_RETURN(
      const std::vector<MapEntry> entries,
      config_internal::ReadMap(ctx.file, section.value, ValueLocation(ctx.file, section),
                               "'scheduler'", kSchedulerKeys));
  SchedulerOptions& options = config.scheduler;
  for (const MapEntry& entry : entries) {
    if (entry.key == "mode") {
      HWINFER_ASSIGN_OR_RETURN(const size_t index, GetChoice(ctx, entry, kModes));
      options.mode = static_cast<BatchingMode>(index);
    } else if (entry.key == "kv_reservation") {
      HWINFER_ASSIGN_OR_RETURN(const size_t index, GetChoice(ctx, entry, kKvReservations));
      options.kv_reservation = static_cast<KvReservation>(index);
    } else if (entry.key == "max_batch_tokens") {
      HWINFER_ASSIGN_OR_RETURN(
          options.max_batch_tokens,
          GetIntegerInRange(ctx, entry, 1, kMaxBatchTokens, "tokens per step"));
    } else if (entry.key == "max_sequences") {
      HWINFER_ASSIGN_OR_RETURN(
          options.max_sequences,
          GetIntegerInRange(ctx, entry, 1, kMaxSequences, "sequences per step"));
    } else if (entry.key == "batch_timeout_ms") {
      HWINFER_ASSIGN_OR_RETURN(const double ms, GetNonNegative(ctx, entry, false, "milliseconds"));
      if (ms > kMaxBatchTimeoutMs) {  // a wait of its own: bounded like arrivals
        return ErrorAt(ValueLocation(ctx.file, entry),
                       "'batch_timeout_ms' must be a number in [0, 86400000] (milliseconds, at "
                       "most a day); got " +
                           Describe(entry.value));
      }
      options.batch_timeout_s = ms * kSecondsPerMs;
    } else if (entry.key == "ageing_s") {
      HWINFER_ASSIGN_OR_RETURN(
          options.ageing_s,
          GetNonNegative(ctx, entry, true, "seconds per priority level gained while waiting"));
    } else if (entry.key == "kv_block_size") {
      HWINFER_ASSIGN_OR_RETURN(const int64_t size, GetIntegerInRange(ctx, entry, 1, kMaxKvBlockSize,
                                                                     "tokens per KV block"));
      config.kv_block_size = static_cast<int32_t>(size);
    } else if (entry.key == "kv_dtype") {
      HWINFER_ASSIGN_OR_RETURN(const size_t index, GetChoice(ctx, entry, kKvDtypes));
      config.kv_dtype = std::string(kKvDtypes[index]);
    } else if (entry.key == "kv_cache_tokens") {
      HWINFER_ASSIGN_OR_RETURN(config.kv_cache_tokens,
                               GetIntegerInRange(ctx, entry, 0, kMaxKvCacheTokens,
                                                 "tokens; 0 = fit memory_utilization"));
    } else if (entry.key == "decode_graphs") {
      HWINFER_ASSIGN_OR_RETURN(config.decode_graphs, config_internal::GetBool(ctx.file, entry));
    } else if (entry.key == "tp_collectives") {
      HWINFER_ASSIGN_OR_RETURN(const size_t index, GetChoice(ctx, entry, kTpCollectives));
      HWINFER_ASSIGN_OR_RETURN(config.tp_collectives,
                               ParseTpCollectives(std::string(kTpCollectives[index])));
    } else if (entry.key == "devices") {
      HWINFER_ASSIGN_OR_RETURN(config.devices, ReadDeviceList(ctx, entry));
    } else if (entry.key == "split") {
      HWINFER_ASSIGN_OR_RETURN(const size_t index, GetChoice(ctx, entry, kSplits));
      config.split_layers = index == 1;
    } else if (entry.key == "layer_split") {
      HWINFER_ASSIGN_OR_RETURN(config.layer_split, ReadLayerSplit(ctx, entry));
    } else if (entry.key == "routing") {
      HWINFER_ASSIGN_OR_RETURN(const size_t index, GetChoice(ctx, entry, kRoutings));
      config.routing = static_cast<ReplicaRouting>(index);
    } else if (entry.key == "memory_utilization") {
      const std::optional<double> value = entry.value.IsScalar()
                                              ? config_internal::ParseNumber(entry.value.Scalar())
                                              : std::nullopt;
      if (!value || *value <= 0 || *value > 1) {
        return ErrorAt(ValueLocation(ctx.file, entry),
                       "'memory_utilization' must be a number in (0, 1] (fraction of device "
                       "memory); got " +
                           Describe(entry.value));
      }
      config.memory_utilization = *value;
    }
  }
  return Status::Ok();
}

Status ReadMetrics(const ParseContext& ctx, const MapEntry& section, SloTargets& slo) {
  HWINFER_ASSIGN_OR_RETURN(
      const std::vector<MapEntry> entries,
      config_internal::ReadMap(ctx.file, section.value, ValueLocation(ctx.file, section),
                               "'metrics'", kMetricsKeys));
  for (const MapEntry& entry : entries) {
    HWINFER_ASSIGN_OR_RETURN(
        const std::vector<MapEntry> targets,
        config_internal::ReadMap(ctx.file, entry.value, ValueLocation(ctx.file, entry), "'slo'",
                                 kSloKeys));
    for (const MapEntry& target : targets) {
      HWINFER_ASSIGN_OR_RETURN(const double ms,
                               GetNonNegative(ctx, target, false, "milliseconds; 0 = no limit"));
      if (target.key == "ttft_ms") slo.ttft_ms = ms;
      if (target.key == "tpot_ms") slo.tpot_ms = ms;
      if (target.key == "e2el_ms") slo.e2el_ms = ms;
    }
  }
  return Status::Ok();
}

Status ReadOutput(const ParseContext& ctx, const MapEntry& section, BenchConfig& config) {
  HWINFER_ASSIGN_OR_RETURN(
      const std::vector<MapEntry> entries,
      config_internal::ReadMap(ctx.file, section.value, ValueLocation(ctx.file, section),
                               "'output'", kOutputKeys));
  for (const MapEntry& entry : entries) {
    if (entry.key == "save_texts") {
      HWINFER_ASSIGN_OR_RETURN(config.save_texts, config_internal::GetBool(ctx.file, entry));
      continue;
    }
    HWINFER_ASSIGN_OR_RETURN(const std::string path, GetPath(ctx, entry));
    if (entry.key == "json") config.json_out = path;
    if (entry.key == "csv") config.csv_prefix = path;
    if (entry.key == "markdown") config.markdown_out = path;
    if (entry.key == "tokens") config.tokens_out = path;
  }
  return Status::Ok();
}

StatusOr<BenchConfig> ReadBenchConfig(const ParseContext& ctx, const YAML::Node& root) {
  BenchConfig config;
  config.file = ctx.file;
  const std::vector<std::string_view> known(KnownTopLevelConfigKeys().begin(),
                                            KnownTopLevelConfigKeys().end());
  HWINFER_ASSIGN_OR_RETURN(const std::vector<MapEntry> entries,
                           config_internal::ReadMap(ctx.file, root, LocationOf(ctx.file, root),
                                                    "top-level config", known));
  for (const MapEntry& entry : entries) {
    if (entry.key == "model") {
      HWINFER_RETURN_IF_ERROR(ReadModel(ctx, entry, config.model));
    } else if (entry.key == "workload") {
      HWINFER_RETURN_IF_ERROR(ReadWorkload(ctx, entry, config.workload));
    } else if (entry.key == "scheduler") {
      HWINFER_RETURN_IF_ERROR(ReadScheduler(ctx, entry, config));
    } else if (entry.key == "metrics") {
      HWINFER_RETURN_IF_ERROR(ReadMetrics(ctx, entry, config.slo));
    } else if (entry.key == "output") {
      HWINFER_RETURN_IF_ERROR(ReadOutput(ctx, entry, config));
    } else if (entry.key == "backend") {
      HWINFER_ASSIGN_OR_RETURN(config.backend, config_internal::GetString(ctx.file, entry));
    } else if (entry.key == "device") {
      HWINFER_ASSIGN_OR_RETURN(config.device, config_internal::GetString(ctx.file, entry));
    }
    // Anything else is a runtime key (plugin_paths, backends, ...): runtime_config.cpp reads it.
  }
  return config;
}

}  // namespace

StatusOr<BenchConfig> ParseBenchConfig(const std::string& yaml_text,
                                       const std::string& display_name,
                                       const std::string& base_dir) {
  const ParseContext ctx{display_name, base_dir.empty() ? "." : base_dir};
  try {
    HWINFER_ASSIGN_OR_RETURN(
        const YAML::Node root,
        config_internal::ParseSingleDocument(yaml_text, display_name,
                                             "a map with 'model', 'workload', 'scheduler', ..."));
    return ReadBenchConfig(ctx, root);
  } catch (const YAML::Exception& e) {
    // Not expected (types are checked before use); keeps the no-throw contract.
    return InvalidArgument(display_name + ": unexpected YAML error: " + e.msg);
  }
}

StatusOr<BenchConfig> LoadBenchConfig(const std::string& path) {
  HWINFER_ASSIGN_OR_RETURN(const std::string text,
                           config_internal::ReadTextFile(path, "config file"));
  const std::string base_dir = fs::path(path).parent_path().string();
  return ParseBenchConfig(text, path, base_dir.empty() ? "." : base_dir);
}

}  // namespace hwinfer
