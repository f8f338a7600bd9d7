// compare_command.cpp — `hwinfer compare A.json B.json ... [-o OUT_DIR]`: reads bench results
// (the JSON `hwinfer bench --json` writes: vLLM's flat keys, "phases", "env", "hardware") and
// sweep files (`hwinfer sweep --json`: {"config", "points"}), prints them side by side (label,
// device, median TPOT ms, output tok/s, decode MBU % and prefill MFU % of the spec peaks; a
// `bench --endpoint` result shows its endpoint and its MBU from outside; a figure above 100% is
// followed by a warning naming the peak from the file's "hardware" section), and
// with -o runs tools/plot_results.py (with $HWINFER_PYTHON, else the first python3 that has
// matplotlib) to draw throughput_latency, roofline and mbu (.png, .svg).
// It only reads the few keys it shows; a file missing one is an error naming the file and key.
#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "commands.h"
#include "hwinfer/input_file.h"
#include "hwinfer/metrics.h"

extern char** environ;

namespace hwinfer::cli {
namespace {

namespace fs = std::filesystem;

struct Row {
  std::string label, device;
  double median_tpot_ms = 0, output_throughput = 0, decode_mbu_spec = 0, prefill_mfu_spec = 0;
  PeakRates peaks;  // from the file's "hardware" section, for naming them in warnings
};

// The "hardware" section of a bench result (or of a sweep's "config"); an empty object when the
// file has none.
nlohmann::json HardwareOf(const nlohmann::json& holder) {
  if (holder.contains("hardware") && holder["hardware"].is_object()) return holder["hardware"];
  return nlohmann::json::object();
}

// The number at |path| (keys separated by '.') in |json|; InvalidArgument naming |file| and the
// first missing key.
StatusOr<double> NumberAt(const nlohmann::json& json, const std::string& path,
                          const std::string& file) {
  const nlohmann::json* node = &json;
  size_t start = 0;
  while (true) {
    const size_t dot = path.find('.', start);
    const std::string key = path.substr(start, dot == std::string::npos ? dot : dot - start);
    if (!node->is_object() || !node->contains(key)) {
      return InvalidArgument(fmt::format(
          "{}: not a bench result or sweep: missing key '{}'; expected the JSON of `hwinfer "
          "bench --json` or `hwinfer sweep --json`",
          file, path.substr(0, dot)));
    }
    node = &(*node)[key];
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  if (!node->is_number()) {
    return InvalidArgument(
        fmt::format("{}: key '{}' must be a number; got {}", file, path, node->dump()));
  }
  return node->get<double>();
}

std::string DeviceOf(const nlohmann::json& env_holder) {
  if (env_holder.contains("env") && env_holder["env"].is_object() &&
      env_holder["env"].contains("device") && env_holder["env"]["device"].is_string()) {
    return env_holder["env"]["device"].get<std::string>();
  }
  if (env_holder.contains("device") && env_holder["device"].is_string()) {
    return env_holder["device"].get<std::string>();
  }
  return "?";
}

StatusOr<Row> ReadRow(const nlohmann::json& summary, const std::string& file, std::string label,
                      std::string device, const nlohmann::json& hardware) {
  Row row;
  row.label = std::move(label);
  row.device = std::move(device);
  row.peaks = PeakRatesFromJson(hardware);
  HWINFER_ASSIGN_OR_RETURN(row.median_tpot_ms, NumberAt(summary, "median_tpot_ms", file));
  HWINFER_ASSIGN_OR_RETURN(row.output_throughput, NumberAt(summary, "output_throughput", file));
  HWINFER_ASSIGN_OR_RETURN(row.decode_mbu_spec, NumberAt(summary, "phases.decode.mbu_spec", file));
  HWINFER_ASSIGN_OR_RETURN(row.prefill_mfu_spec,
                           NumberAt(summary, "phases.prefill.mfu_spec", file));
  // A result measured from outside a server (bench --endpoint) has no steps: its MBU is the
  // article's, from TPOT.
  if (summary.contains("mbu_outside")) {
    HWINFER_ASSIGN_OR_RETURN(row.decode_mbu_spec, NumberAt(summary, "mbu_outside.mbu", file));
    HWINFER_ASSIGN_OR_RETURN(row.peaks.spec_bandwidth_bytes_per_s,
                             NumberAt(summary, "mbu_outside.peak_bandwidth_bytes_per_s", file));
  }
  return row;
}

// One row for a bench result, one per point for a sweep.
Status ReadFileRows(const std::string& file, std::vector<Row>& rows) {
  HWINFER_ASSIGN_OR_RETURN(const std::string text,
                           ReadInputFile(file, "result file", kMaxResultFileBytes));
  const nlohmann::json json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return InvalidArgument(file + ": not valid JSON");
  if (!json.is_object()) {
    return InvalidArgument(file + ": not a bench result or sweep: expected a JSON object");
  }
  const std::string stem = fs::path(file).stem().string();
  if (json.contains("points")) {
    if (!json["points"].is_array() || json["points"].empty()) {
      return InvalidArgument(file + ": 'points' must be a non-empty list of sweep points");
    }
    const nlohmann::json config =
        json.contains("config") ? json["config"] : nlohmann::json::object();
    const std::string device = DeviceOf(config);
    for (const nlohmann::json& point : json["points"]) {
      HWINFER_ASSIGN_OR_RETURN(const double batch, NumberAt(point, "batch", file));
      HWINFER_ASSIGN_OR_RETURN(Row row, ReadRow(point, file, fmt::format("{} b={}", stem, batch),
                                                device, HardwareOf(config)));
      rows.push_back(std::move(row));
    }
    return Status::Ok();
  }
  HWINFER_ASSIGN_OR_RETURN(Row row, ReadRow(json, file, stem, DeviceOf(json), HardwareOf(json)));
  rows.push_back(std::move(row));
  return Status::Ok();
}

// HWINFER_TOOLS_DIR, then the source tree's tools/, then <prefix>/share/hwinfer/tools.
StatusOr<std::string> FindPlotScript() {
  std::vector<fs::path> folders;
  if (const char* env = std::getenv("HWINFER_TOOLS_DIR"); env != nullptr && *env != '\0') {
    folders.emplace_back(env);
  }
  folders.push_back(fs::path(HWINFER_CLI_SOURCE_DIR) / "tools");
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) folders.push_back(exe.parent_path() / ".." / "share" / "hwinfer" / "tools");
  std::string tried;
  for (const fs::path& folder : folders) {
    const fs::path script = (folder / "plot_results.py").lexically_normal();
    if (fs::is_regular_file(script, ec)) return script.string();
    tried += (tried.empty() ? "" : ", ") + script.string();
  }
  return NotFound("plot_results.py not found; tried " + tried + " (set HWINFER_TOOLS_DIR)");
}

// Runs |args| (args[0] looked up on PATH) and waits; its stderr is collected into |err|. Returns
// the exit status, or -1 when it could not be started.
int RunAndWait(std::vector<std::string> args, std::string* err) {
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) return -1;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDERR_FILENO);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipe_fds[1]);
  if (spawned != 0) {
    ::close(pipe_fds[0]);
    return -1;
  }
  char buffer[4096];
  for (ssize_t n; (n = ::read(pipe_fds[0], buffer, sizeof(buffer))) > 0;) {
    err->append(buffer, static_cast<size_t>(n));
  }
  ::close(pipe_fds[0]);
  int wait_status = 0;
  ::waitpid(pid, &wait_status, 0);
  return WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : -1;
}

// The Python that plots: $HWINFER_PYTHON when set, else the first of python3 on PATH and Debian's
// /usr/bin/python3 that can import matplotlib (the python3 first on PATH may be a separate install
// without Debian's python3-matplotlib).
StatusOr<std::string> PlotPython() {
  const char* env_python = std::getenv("HWINFER_PYTHON");
  if (env_python != nullptr && *env_python != '\0') return std::string(env_python);
  for (const char* candidate : {"python3", "/usr/bin/python3"}) {
    std::string ignored;
    if (RunAndWait({candidate, "-c", "import matplotlib"}, &ignored) == 0)
      return std::string(candidate);
  }
  return NotFound(
      "no Python that can import matplotlib (tried python3, /usr/bin/python3); install "
      "python3-matplotlib or set HWINFER_PYTHON");
}

// Runs PYTHON SCRIPT --out DIR FILES...; a failure is one line (the script's last line).
Status RunPlotScript(const std::string& script, const CompareOptions& options) {
  HWINFER_ASSIGN_OR_RETURN(const std::string python, PlotPython());
  std::vector<std::string> args = {python, script, "--out", options.out_dir};
  args.insert(args.end(), options.files.begin(), options.files.end());
  std::string err;
  const int status = RunAndWait(args, &err);
  if (status == 0) return Status::Ok();
  if (status < 0 && err.empty()) {
    return NotFound("cannot run '" + python + "' (needed to plot; set HWINFER_PYTHON)");
  }
  // The script's last non-empty line says why.
  while (!err.empty() && (err.back() == '\n' || err.back() == '\r')) err.pop_back();
  const size_t last = err.rfind('\n');
  const std::string reason = last == std::string::npos ? err : err.substr(last + 1);
  return InvalidArgument(
      fmt::format("{} failed: {}", script, reason.empty() ? "no message" : reason));
}

}  // namespace

int RunCompare(const CompareOptions& options) {
  std::vector<Row> rows;
  for (const std::string& file : options.files) {
    if (Status s = ReadFileRows(file, rows); !s.ok()) return ReportError(s);
  }
  size_t label_width = 5, device_width = 6;
  for (const Row& row : rows) {
    label_width = std::max(label_width, row.label.size());
    device_width = std::max(device_width, row.device.size());
  }
  fmt::print("{:<{}}  {:<{}}  {:>14}  {:>12}  {:>14}  {:>15}\n", "label", label_width, "device",
             device_width, "median TPOT ms", "output tok/s", "decode MBU %", "prefill MFU %");
  for (const Row& row : rows) {
    fmt::print("{:<{}}  {:<{}}  {:>14.2f}  {:>12.1f}  {:>14.1f}  {:>15.1f}\n", row.label,
               label_width, row.device, device_width, row.median_tpot_ms, row.output_throughput,
               100.0 * row.decode_mbu_spec, 100.0 * row.prefill_mfu_spec);
  }
  for (const Row& row : rows) {
    PrintWarnings(
        UtilisationWarnings({{"decode MBU", PeakKind::kSpecBandwidth, row.decode_mbu_spec},
                             {"prefill MFU", PeakKind::kSpecFlops, row.prefill_mfu_spec}},
                            row.peaks),
        row.label + ": ");
  }
  if (options.out_dir.empty()) return 0;
  auto script = FindPlotScript();
  if (!script.ok()) return ReportError(script.status());
  if (Status s = RunPlotScript(*script, options); !s.ok()) return ReportError(s);
  fmt::print("wrote throughput_latency, roofline and mbu (.png, .svg) to {}\n", options.out_dir);
  return 0;
}

}  // namespace hwinfer::cli
