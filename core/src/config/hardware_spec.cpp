// hardware_spec.cpp — reads configs/hardware/*.yaml into a HardwareSpec (SI units: bytes, bytes/s,
// FLOP/s, seconds). The schema is in hardware_spec.h.
//
// Strict like the runtime config: unknown keys, wrong types, non-positive peaks and missing
// required keys are one-line errors naming file:line:column. It must not measure or guess
// anything: a value absent from the file stays 0 ("not given"). FindKnownHardware maps a device
// name to a file through the files' `match:` lists.
#include "hwinfer/hardware_spec.h"

#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <string_view>
#include <vector>

#include "config/yaml_checks.h"

namespace hwinfer {
namespace {

using config_internal::MapEntry;

const std::vector<std::string_view> kSpecKeys = {
    "name",        "vendor", "memory_gib",         "peak_bandwidth_gb_per_s",
    "peak_tflops", "match",  "launch_overhead_us", "interconnect"};
const std::vector<std::string_view> kInterconnectKeys = {"kind", "bandwidth_gb_per_s",
                                                         "latency_us"};
const std::vector<std::string_view> kInterconnectKinds = {"nvlink", "pcie", "infinity_fabric",
                                                          "other"};
const std::vector<std::string_view> kDtypeKeys = {"f32", "f16", "bf16", "int8"};

constexpr double kBytesPerGB = 1e9;
constexpr double kBytesPerGiB = 1024.0 * 1024.0 * 1024.0;
constexpr double kFlopsPerTflops = 1e12;
constexpr double kSecondsPerUs = 1e-6;

// The physical range of every spec: a value outside it is a typo or a unit slip (1e300 GB/s,
// 0.001 GB/s), and would give an infinite or meaningless MBU, or stall the simulator's clock.
struct SpecRange {
  double min, max;
};
constexpr SpecRange kMemoryGiB{0.001, 1048576};     // 1 MiB .. 1 PiB
constexpr SpecRange kBandwidthGBps{0.1, 100000};    // .. 100 TB/s
constexpr SpecRange kTflops{0.001, 100000};         // 1 GFLOP/s .. 100 PFLOP/s
constexpr SpecRange kLaunchOverheadUs{0, 1000000};  // .. one second

std::string RangeText(const SpecRange& range) {
  return "[" + config_internal::FormatNumber(range.min) + ", " +
         config_internal::FormatNumber(range.max) + "]";
}

// A number in |range|; |form| says what the number means ("GB/s, 1 GB = 1e9 bytes").
StatusOr<double> GetInRange(const std::string& file, const MapEntry& entry, const SpecRange& range,
                            const std::string& form) {
  const std::optional<double> value =
      entry.value.IsScalar() ? config_internal::ParseNumber(entry.value.Scalar()) : std::nullopt;
  if (!value || *value < range.min || *value > range.max || (range.min == 0 && *value < 0)) {
    return config_internal::ErrorAt(config_internal::ValueLocation(file, entry),
                                    "'" + entry.key + "' must be a number in " + RangeText(range) +
                                        " (" + form + "); got " +
                                        config_internal::Describe(entry.value));
  }
  return *value;
}

Status ReadPeakTflops(const std::string& file, const MapEntry& entry, HardwareSpec& spec) {
  HWINFER_ASSIGN_OR_RETURN(
      const std::vector<MapEntry> dtypes,
      config_internal::ReadMap(file, entry.value, config_internal::ValueLocation(file, entry),
                               "'peak_tflops'", kDtypeKeys));
  if (dtypes.empty()) {
    return config_internal::ErrorAt(
        config_internal::ValueLocation(file, entry),
        "'peak_tflops' must list at least one of: " + config_internal::JoinKeys(kDtypeKeys));
  }
  for (MapEntry dtype : dtypes) {
    dtype.key = "peak_tflops." + dtype.key;
    HWINFER_ASSIGN_OR_RETURN(
        const double tflops,
        GetInRange(file, dtype, kTflops, "dense TFLOPS, or tera-ops/s for int8"));
    const double flops = tflops * kFlopsPerTflops;
    if (dtype.key == "peak_tflops.f32") spec.peak_flops_f32 = flops;
    if (dtype.key == "peak_tflops.f16") spec.peak_flops_f16 = flops;
    if (dtype.key == "peak_tflops.bf16") spec.peak_flops_bf16 = flops;
    if (dtype.key == "peak_tflops.int8") spec.peak_flops_int8 = flops;
  }
  return Status::Ok();
}

// `interconnect:` — kind, bandwidth_gb_per_s (both required) and latency_us.
Status ReadInterconnect(const std::string& file, const MapEntry& entry, HardwareSpec& spec) {
  HWINFER_ASSIGN_OR_RETURN(
      const std::vector<MapEntry> keys,
      config_internal::ReadMap(file, entry.value, config_internal::ValueLocation(file, entry),
                               "'interconnect'", kInterconnectKeys));
  for (std::string_view required : {"kind", "bandwidth_gb_per_s"}) {
    HWINFER_RETURN_IF_ERROR(
        config_internal::RequireKey(file, entry.value, "'interconnect'", keys, required));
  }
  InterconnectSpec& link = spec.interconnect;
  for (MapEntry key : keys) {
    key.key = "interconnect." + key.key;
    if (key.key == "interconnect.kind") {
      HWINFER_ASSIGN_OR_RETURN(link.kind, config_internal::GetString(file, key));
      if (std::find(kInterconnectKinds.begin(), kInterconnectKinds.end(), link.kind) ==
          kInterconnectKinds.end()) {
        return config_internal::ErrorAt(config_internal::ValueLocation(file, key),
                                        "'interconnect.kind' must be one of " +
                                            config_internal::JoinKeys(kInterconnectKinds) +
                                            "; got '" + link.kind + "'");
      }
    } else if (key.key == "interconnect.bandwidth_gb_per_s") {
      HWINFER_ASSIGN_OR_RETURN(
          const double gb_per_s,
          GetInRange(file, key, kBandwidthGBps, "GB/s per direction, 1 GB = 1e9 bytes"));
      link.bandwidth_bytes_per_s = gb_per_s * kBytesPerGB;
    } else {
      HWINFER_ASSIGN_OR_RETURN(const double us,
                               GetInRange(file, key, kLaunchOverheadUs, "microseconds per hop"));
      link.latency_s = us * kSecondsPerUs;
    }
  }
  return Status::Ok();
}

// `match:` — a non-empty list of non-empty strings.
StatusOr<std::vector<std::string>> ReadMatch(const std::string& path, const MapEntry& entry) {
  const std::string form = "a non-empty list of device-name substrings, e.g. [\"H200\"]";
  if (!entry.value.IsSequence() || entry.value.size() == 0) {
    return config_internal::ErrorAt(
        config_internal::ValueLocation(path, entry),
        "'match' must be " + form + "; got " + config_internal::Describe(entry.value));
  }
  std::vector<std::string> match;
  for (const YAML::Node& item : entry.value) {
    if (!item.IsScalar() || item.Scalar().empty()) {
      return config_internal::ErrorAt(config_internal::LocationOf(path, item),
                                      "'match' entries must be non-empty strings (" + form +
                                          "); got " + config_internal::Describe(item));
    }
    match.push_back(item.Scalar());
  }
  return match;
}

std::string Lowercase(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

StatusOr<HardwareSpec> ParseHardwareSpec(const std::string& text, const std::string& path) {
  HWINFER_ASSIGN_OR_RETURN(
      const YAML::Node root,
      config_internal::ParseSingleDocument(
          text, path, "a map with 'name', 'peak_bandwidth_gb_per_s' and 'peak_tflops'"));
  HWINFER_ASSIGN_OR_RETURN(
      const std::vector<MapEntry> entries,
      config_internal::ReadMap(path, root, config_internal::LocationOf(path, root), "hardware spec",
                               kSpecKeys));
  for (std::string_view required : {"name", "peak_bandwidth_gb_per_s", "peak_tflops"}) {
    HWINFER_RETURN_IF_ERROR(
        config_internal::RequireKey(path, root, "hardware spec", entries, required));
  }

  HardwareSpec spec;
  spec.file = path;
  for (const MapEntry& entry : entries) {
    if (entry.key == "name") {
      HWINFER_ASSIGN_OR_RETURN(spec.name, config_internal::GetString(path, entry));
    } else if (entry.key == "vendor") {
      HWINFER_ASSIGN_OR_RETURN(spec.vendor, config_internal::GetString(path, entry));
    } else if (entry.key == "memory_gib") {
      HWINFER_ASSIGN_OR_RETURN(const double gib,
                               GetInRange(path, entry, kMemoryGiB, "GiB, 1 GiB = 2^30 bytes"));
      spec.memory_bytes = gib * kBytesPerGiB;
    } else if (entry.key == "peak_bandwidth_gb_per_s") {
      HWINFER_ASSIGN_OR_RETURN(const double gb_per_s,
                               GetInRange(path, entry, kBandwidthGBps, "GB/s, 1 GB = 1e9 bytes"));
      spec.peak_bandwidth_bytes_per_s = gb_per_s * kBytesPerGB;
    } else if (entry.key == "peak_tflops") {
      HWINFER_RETURN_IF_ERROR(ReadPeakTflops(path, entry, spec));
    } else if (entry.key == "match") {
      HWINFER_ASSIGN_OR_RETURN(spec.match, ReadMatch(path, entry));
    } else if (entry.key == "launch_overhead_us") {
      HWINFER_ASSIGN_OR_RETURN(const double us,
                               GetInRange(path, entry, kLaunchOverheadUs, "microseconds"));
      spec.launch_overhead_s = us * kSecondsPerUs;
    } else if (entry.key == "interconnect") {
      HWINFER_RETURN_IF_ERROR(ReadInterconnect(path, entry, spec));
    }
  }
  return spec;
}

}  // namespace

StatusOr<HardwareSpec> LoadHardwareSpec(const std::string& path) {
  HWINFER_ASSIGN_OR_RETURN(const std::string text,
                           config_internal::ReadTextFile(path, "hardware file"));
  try {
    return ParseHardwareSpec(text, path);
  } catch (const YAML::Exception& e) {
    // Not expected (types are checked before use); keeps the no-throw contract.
    return InvalidArgument(path + ": unexpected YAML error: " + e.msg);
  }
}

double InterconnectSpec::AllReduceSeconds(int ranks, double bytes) const {
  if (ranks <= 1 || bandwidth_bytes_per_s <= 0) return 0;
  const double n = ranks;
  return 2.0 * (n - 1.0) / n * bytes / bandwidth_bytes_per_s + 2.0 * (n - 1.0) * latency_s;
}

bool HardwareMatchesDevice(const HardwareSpec& spec, const std::string& device_name) {
  const std::string name = Lowercase(device_name);
  return std::any_of(spec.match.begin(), spec.match.end(), [&](const std::string& pattern) {
    return name.find(Lowercase(pattern)) != std::string::npos;
  });
}

std::vector<std::string> KnownHardwareDirs(const std::string& config_file) {
  namespace fs = std::filesystem;
  std::vector<fs::path> candidates;
  if (!config_file.empty()) {
    const fs::path base = fs::path(config_file).parent_path();
    candidates.push_back(base / "hardware");
    candidates.push_back(base / ".." / "configs" / "hardware");
  }
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&KnownHardwareDirs), &info) != 0 &&
      info.dli_fname != nullptr) {
    std::error_code ec;
    const fs::path library = fs::canonical(info.dli_fname, ec);
    if (!ec) candidates.push_back(library.parent_path().parent_path() / "share/hwinfer/hardware");
  }
  std::vector<std::string> dirs;
  for (const fs::path& candidate : candidates) {
    std::error_code ec;
    if (!fs::is_directory(candidate, ec)) continue;
    const std::string dir = fs::weakly_canonical(candidate, ec).string();
    if (std::find(dirs.begin(), dirs.end(), dir) == dirs.end()) dirs.push_back(dir);
  }
  return dirs;
}

StatusOr<std::optional<HardwareSpec>> FindKnownHardware(const std::string& device_name,
                                                        const std::vector<std::string>& dirs) {
  namespace fs = std::filesystem;
  for (const std::string& dir : dirs) {
    std::vector<fs::path> files;
    std::error_code ec;
    for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
      if (entry.path().extension() == ".yaml") files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    for (const fs::path& file : files) {
      HWINFER_ASSIGN_OR_RETURN(HardwareSpec spec, LoadHardwareSpec(file.string()));
      if (HardwareMatchesDevice(spec, device_name)) return std::optional<HardwareSpec>(spec);
    }
  }
  return std::optional<HardwareSpec>();
}

}  // namespace hwinfer
