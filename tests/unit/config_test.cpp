// config_test.cpp — pins the runtime section of the YAML config: the shipped default loads, every
// key parses to the documented value, and every kind of mistake is an InvalidArgument (NotFound
// for a missing file) whose one-line message names file:line:column and the expected form.
// These tests must not load plugins or touch devices; they only parse.
#include "hwinfer/config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

namespace hwinfer {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

// A fresh folder per test, removed afterwards.
class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = fs::temp_directory_path() /
            ("hwinfer_config_test_" + std::to_string(::getpid()) + "_" + info->name());
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  const fs::path& path() const { return path_; }
  std::string Write(const std::string& relative, const std::string& text) const {
    const fs::path file = path_ / relative;
    fs::create_directories(file.parent_path());
    std::ofstream(file) << text;
    return file.string();
  }

 private:
  fs::path path_;
};

constexpr const char* kHardwareYaml =
    "name: Test GPU\n"
    "peak_bandwidth_gb_per_s: 1000\n"
    "peak_tflops: {f16: 100}\n";

// Asserts |result| failed with |code|, a one-line message, and |substring| in it.
template <typename T>
void ExpectError(const StatusOr<T>& result, StatusCode code, const std::string& substring) {
  ASSERT_FALSE(result.ok()) << "expected an error containing: " << substring;
  EXPECT_EQ(result.status().code(), code) << result.status().message();
  EXPECT_THAT(result.status().message(), HasSubstr(substring));
  EXPECT_EQ(result.status().message().find('\n'), std::string::npos)
      << "message spans lines: " << result.status().message();
}

void ExpectInvalid(const std::string& yaml, const std::string& substring) {
  ExpectError(ParseRuntimeConfig(yaml, "bad.yaml"), StatusCode::kInvalidArgument, substring);
}

TEST(SourceLocationTest, FormatsLikeACompiler) {
  EXPECT_EQ((SourceLocation{"a.yaml", 12, 7}.ToString()), "a.yaml:12:7");
  EXPECT_EQ((SourceLocation{"a.yaml", 12, 0}.ToString()), "a.yaml:12");
  EXPECT_EQ((SourceLocation{"a.yaml", 0, 0}.ToString()), "a.yaml");
}

TEST(RuntimeConfigTest, ShippedDefaultLoadsCpuWithAllDevices) {
  const std::string path = std::string(HWINFER_SOURCE_DIR) + "/configs/default.yaml";
  const StatusOr<RuntimeConfig> config = LoadRuntimeConfig(path);
  ASSERT_TRUE(config.ok()) << config.status().message();
  EXPECT_EQ(config->file, path);
  EXPECT_EQ(config->log_level, "warning");
  EXPECT_FALSE(config->allow_duplicate_devices);
  EXPECT_TRUE(config->plugin_paths.empty());
  ASSERT_EQ(config->backends.size(), 1u);
  const BackendConfig& cpu = config->backends[0];
  EXPECT_EQ(cpu.name, "cpu");
  EXPECT_FALSE(cpu.path.has_value());
  EXPECT_EQ(cpu.priority, 0);
  EXPECT_TRUE(cpu.options.empty());
  EXPECT_TRUE(cpu.all_devices);
  EXPECT_TRUE(cpu.devices.empty());
  EXPECT_EQ(cpu.name_location.file, path);
  EXPECT_GT(cpu.name_location.line, 0);
}

TEST(RuntimeConfigTest, FullExampleParsesEveryKey) {
  TempDir dir;
  dir.Write("hw/gpu.yaml", kHardwareYaml);
  const std::string yaml =
      "plugin_paths: [plugins, /opt/hwinfer/plugins]\n"                      // 1
      "allow_duplicate_devices: true\n"                                      // 2
      "log_level: debug\n"                                                   // 3
      "backends:\n"                                                          // 4
      "  - name: cuda\n"                                                     // 5
      "    path: lib/hwinfer-cuda.so\n"                                      // 6
      "    priority: 10\n"                                                   // 7
      "    options: {streams: 2, fast: true, mode: \"x y\", ratio: 0.50}\n"  // 8
      "    devices:\n"                                                       // 9
      "      - select: 0\n"                                                  // 10
      "        options: {pinned: false}\n"                                   // 11
      "        hardware: hw/gpu.yaml\n"                                      // 12
      "      - select: NVIDIA H200\n"                                        // 13
      "      - select: 3B5F1C2A-0D4E-4F6A-8B9C-0123456789AB\n"               // 14
      "      - select: GPU-11111111-2222-3333-4444-555555555555\n"           // 15
      "      - select: \"1\"\n"                                              // 16
      "  - name: cpu\n"                                                      // 17
      "    priority: -1\n";                                                  // 18
  const std::string base = dir.path().string();
  const StatusOr<RuntimeConfig> config = ParseRuntimeConfig(yaml, "full.yaml", base);
  ASSERT_TRUE(config.ok()) << config.status().message();

  EXPECT_EQ(config->file, "full.yaml");
  EXPECT_EQ(config->plugin_paths,
            (std::vector<std::string>{(dir.path() / "plugins").string(), "/opt/hwinfer/plugins"}));
  EXPECT_TRUE(config->allow_duplicate_devices);
  EXPECT_EQ(config->log_level, "debug");
  ASSERT_EQ(config->backends.size(), 2u);

  const BackendConfig& cuda = config->backends[0];
  EXPECT_EQ(cuda.name, "cuda");
  EXPECT_EQ(cuda.path, (dir.path() / "lib/hwinfer-cuda.so").string());
  EXPECT_EQ(cuda.priority, 10);
  EXPECT_EQ(cuda.options,
            (OptionMap{{"streams", "2"}, {"fast", "true"}, {"mode", "x y"}, {"ratio", "0.50"}}));
  EXPECT_EQ(cuda.location.ToString(), "full.yaml:5:5");
  EXPECT_EQ(cuda.name_location.ToString(), "full.yaml:5:11");
  EXPECT_FALSE(cuda.all_devices);
  ASSERT_EQ(cuda.devices.size(), 5u);

  const DeviceConfig& first = cuda.devices[0];
  EXPECT_EQ(first.select.kind, DeviceSelector::Kind::kIndex);
  EXPECT_EQ(first.select.index, 0);
  EXPECT_EQ(first.select.location.ToString(), "full.yaml:10:17");
  EXPECT_EQ(first.location.ToString(), "full.yaml:10:9");
  EXPECT_EQ(first.options, (OptionMap{{"pinned", "false"}}));
  ASSERT_TRUE(first.hardware.has_value());
  EXPECT_EQ(first.hardware->name, "Test GPU");
  EXPECT_DOUBLE_EQ(first.hardware->peak_bandwidth_bytes_per_s, 1000e9);
  EXPECT_EQ(first.hardware->file, (dir.path() / "hw/gpu.yaml").string());

  EXPECT_EQ(cuda.devices[1].select.kind, DeviceSelector::Kind::kName);
  EXPECT_EQ(cuda.devices[1].select.text, "NVIDIA H200");
  EXPECT_FALSE(cuda.devices[1].hardware.has_value());
  EXPECT_EQ(cuda.devices[2].select.kind, DeviceSelector::Kind::kUuid);
  EXPECT_EQ(cuda.devices[2].select.text, "3b5f1c2a-0d4e-4f6a-8b9c-0123456789ab");
  EXPECT_EQ(cuda.devices[3].select.kind, DeviceSelector::Kind::kUuid);
  EXPECT_EQ(cuda.devices[3].select.text, "11111111-2222-3333-4444-555555555555");
  // A quoted number is a YAML string, so it names a device.
  EXPECT_EQ(cuda.devices[4].select.kind, DeviceSelector::Kind::kName);
  EXPECT_EQ(cuda.devices[4].select.text, "1");

  const BackendConfig& cpu = config->backends[1];
  EXPECT_EQ(cpu.name, "cpu");
  EXPECT_EQ(cpu.priority, -1);
  EXPECT_TRUE(cpu.all_devices);
  EXPECT_FALSE(cpu.path.has_value());
}

TEST(RuntimeConfigTest, OmittedKeysTakeDocumentedDefaults) {
  const StatusOr<RuntimeConfig> config = ParseRuntimeConfig("backends: [{name: cpu}]\n", "x.yaml");
  ASSERT_TRUE(config.ok()) << config.status().message();
  EXPECT_EQ(config->log_level, "warning");
  EXPECT_FALSE(config->allow_duplicate_devices);
  ASSERT_EQ(config->backends.size(), 1u);
  EXPECT_EQ(config->backends[0].priority, 0);
  EXPECT_TRUE(config->backends[0].all_devices);
}

TEST(RuntimeConfigTest, LaterSectionKeysAreKnownAndIgnored) {
  const std::vector<std::string>& keys = KnownTopLevelConfigKeys();
  for (const char* key :
       {"plugin_paths", "allow_duplicate_devices", "log_level", "backends", "model", "workload",
        "scheduler", "metrics", "output", "backend", "device"}) {
    EXPECT_NE(std::find(keys.begin(), keys.end(), key), keys.end()) << key;
  }
  const StatusOr<RuntimeConfig> config = ParseRuntimeConfig(
      "model: {path: m.gguf, anything: [1, 2]}\nworkload: {rate: 3}\nbackend: cpu\ndevice: cpu:0\n"
      "backends: [{name: cpu}]\n",
      "x.yaml");
  ASSERT_TRUE(config.ok()) << config.status().message();
  EXPECT_EQ(config->backends.size(), 1u);
}

TEST(RuntimeConfigTest, LoadResolvesRelativePathsAgainstTheConfigFolder) {
  TempDir dir;
  dir.Write("etc/hw.yaml", kHardwareYaml);
  const std::string path = dir.Write("etc/run.yaml",
                                     "plugin_paths: [../plugins]\n"
                                     "backends:\n"
                                     "  - name: cpu\n"
                                     "    path: ./hwinfer-cpu.so\n"
                                     "    devices:\n"
                                     "      - select: 0\n"
                                     "        hardware: hw.yaml\n");
  const StatusOr<RuntimeConfig> config = LoadRuntimeConfig(path);
  ASSERT_TRUE(config.ok()) << config.status().message();
  EXPECT_EQ(config->plugin_paths, (std::vector<std::string>{(dir.path() / "plugins").string()}));
  EXPECT_EQ(config->backends[0].path, (dir.path() / "etc/hwinfer-cpu.so").string());
  ASSERT_TRUE(config->backends[0].devices[0].hardware.has_value());
  EXPECT_EQ(config->backends[0].devices[0].hardware->name, "Test GPU");
}

TEST(RuntimeConfigErrorTest, UnknownKeySuggestsTheClosestKnownKey) {
  ExpectInvalid(
      "backends:\n"
      "  - name: cpu\n"
      "    priority: 1\n"
      "    devies: all\n",
      "bad.yaml:4:5: unknown key 'devies' in backend entry; did you mean 'devices'? expected one "
      "of: name, path, priority, options, devices");
}

TEST(RuntimeConfigErrorTest, UnknownKeyFarFromAnyKnownKeyHasNoSuggestion) {
  const StatusOr<RuntimeConfig> config =
      ParseRuntimeConfig("backends: [{name: cpu}]\ncolour: blue\n", "bad.yaml");
  ExpectError(config, StatusCode::kInvalidArgument,
              "bad.yaml:2:1: unknown key 'colour' in top-level config; expected one of:");
  EXPECT_THAT(config.status().message(), Not(HasSubstr("did you mean")));
}

TEST(RuntimeConfigErrorTest, MisspelledTopLevelKeyIsRejected) {
  ExpectInvalid("backend:\n  - name: cpu\n",
                "bad.yaml:1:1: unknown key 'backend' in top-level "
                "config; did you mean 'backends'?");
}

TEST(RuntimeConfigErrorTest, PriorityMustBeAnInteger) {
  ExpectInvalid("backends:\n  - name: cpu\n    priority: high\n",
                "bad.yaml:3:15: 'priority' must be an integer; got 'high'");
  ExpectInvalid("backends:\n  - name: cpu\n    priority: 1.5\n",
                "bad.yaml:3:15: 'priority' must be an integer; got '1.5'");
}

TEST(RuntimeConfigErrorTest, EmptyValueIsReportedAtItsKey) {
  ExpectInvalid("backends:\n  - name: cpu\n    priority:\n\n\n",
                "bad.yaml:3:5: 'priority' must be an integer; got nothing");
}

TEST(RuntimeConfigErrorTest, BackendWithoutNameIsReportedAtTheEntry) {
  ExpectInvalid("backends:\n  - name: cpu\n  - priority: 2\n    devices: all\n",
                "bad.yaml:3:5: backend entry is missing required key 'name'");
}

TEST(RuntimeConfigErrorTest, BackendNameMustBeAPluginName) {
  ExpectInvalid("backends:\n  - name: my/cpu\n",
                "bad.yaml:2:11: 'name' must be a backend name of letters, digits, '-' or '_'");
  ExpectInvalid("backends:\n  - name: [a]\n", "bad.yaml:2:11: 'name' must be a string; got a list");
}

TEST(RuntimeConfigErrorTest, BackendsMustBeANonEmptyList) {
  ExpectInvalid("log_level: info\nbackends: []\n",
                "bad.yaml:2:11: 'backends' must be a non-empty list of backend entries");
  ExpectInvalid("backends: cpu\n", "bad.yaml:1:11: 'backends' must be a non-empty list");
  ExpectInvalid("log_level: info\n",
                "bad.yaml:1:1: top-level config is missing required key "
                "'backends'");
}

TEST(RuntimeConfigErrorTest, DuplicateBackendNamesNameBothLines) {
  ExpectInvalid("backends:\n  - name: cpu\n  - name: vulkan\n  - name: cpu\n",
                "bad.yaml:4:11: backend 'cpu' is listed twice (first at bad.yaml:2:11)");
}

TEST(RuntimeConfigErrorTest, RepeatedKeyInOneMapIsAnError) {
  ExpectInvalid("backends:\n  - name: cpu\n    priority: 1\n    priority: 2\n",
                "bad.yaml:4:5: key 'priority' appears twice in backend entry (first at "
                "bad.yaml:3:5)");
}

TEST(RuntimeConfigErrorTest, LogLevelMustBeAKnownLevel) {
  ExpectInvalid("log_level: verbose\nbackends: [{name: cpu}]\n",
                "bad.yaml:1:12: 'log_level' must be one of: debug, info, warning, error; got "
                "'verbose'");
  ExpectInvalid("log_level: debg\nbackends: [{name: cpu}]\n", "did you mean 'debug'?");
}

TEST(RuntimeConfigErrorTest, LogLevelPrefixGetsASuggestion) {
  ExpectInvalid("log_level: warn\nbackends: [{name: cpu}]\n",
                "bad.yaml:1:12: 'log_level' must be one of: debug, info, warning, error; got "
                "'warn' (did you mean 'warning'?)");
}

TEST(RuntimeConfigErrorTest, EmptyListItemIsReportedAtItsList) {
  ExpectInvalid("backends:\n  -\n  - name: cpu\n",
                "bad.yaml:2:3: item 1 of 'backends' is empty; expected a map with 'name'");
  ExpectInvalid("backends:\n  - name: cpu\n    devices:\n      - select: 0\n      -\n",
                "bad.yaml:4:7: item 2 of 'devices' is empty; expected a map with 'select'");
}

TEST(RuntimeConfigErrorTest, FlagsMustBeTrueOrFalse) {
  ExpectInvalid("allow_duplicate_devices: maybe\nbackends: [{name: cpu}]\n",
                "bad.yaml:1:26: 'allow_duplicate_devices' must be true or false; got 'maybe'");
}

TEST(RuntimeConfigErrorTest, PluginPathsMustBeAListOfStrings) {
  ExpectInvalid("plugin_paths: /opt/x\nbackends: [{name: cpu}]\n",
                "bad.yaml:1:15: 'plugin_paths' must be a list of folders; got '/opt/x'");
  ExpectInvalid("plugin_paths: [a, {b: c}]\nbackends: [{name: cpu}]\n",
                "bad.yaml:1:19: 'plugin_paths[1]' must be a string; got a map");
}

TEST(RuntimeConfigErrorTest, OptionValuesMustBeScalars) {
  ExpectInvalid(
      "backends:\n"
      "  - name: cpu\n"
      "    options:\n"
      "      threads: 2\n"
      "      affinity: [0, 1]\n",
      "bad.yaml:5:17: option 'affinity' must be a scalar (string, number or true/false); got a "
      "list");
  ExpectInvalid("backends:\n  - name: cpu\n    options: 2\n",
                "bad.yaml:3:14: 'options' must be a map; got '2'");
}

TEST(RuntimeConfigErrorTest, DevicesMustBeAllOrAList) {
  ExpectInvalid("backends:\n  - name: cpu\n    devices: some\n",
                "bad.yaml:3:14: 'devices' must be 'all' or a non-empty list of device entries; "
                "got 'some'");
  ExpectInvalid("backends:\n  - name: cpu\n    devices: []\n",
                "bad.yaml:3:14: 'devices' must be 'all' or a non-empty list");
  ExpectInvalid("backends:\n  - name: cpu\n    devices:\n      - 0\n",
                "bad.yaml:4:9: device entry must be a map like '- select: <index, name or UUID>'; "
                "got '0'");
}

TEST(RuntimeConfigErrorTest, DeviceEntryNeedsSelectAndKnownKeys) {
  ExpectInvalid("backends:\n  - name: cpu\n    devices:\n      - options: {a: 1}\n",
                "bad.yaml:4:9: device entry is missing required key 'select'");
  ExpectInvalid("backends:\n  - name: cpu\n    devices:\n      - select: 0\n        hardwre: x\n",
                "bad.yaml:5:9: unknown key 'hardwre' in device entry; did you mean 'hardware'? "
                "expected one of: select, options, hardware");
}

TEST(RuntimeConfigErrorTest, NegativeDeviceIndexIsRejected) {
  ExpectInvalid("backends:\n  - name: cpu\n    devices:\n      - select: -1\n",
                "bad.yaml:4:17: device index must be an integer >= 0; got '-1'");
}

TEST(RuntimeConfigErrorTest, SameDeviceSelectedTwiceNamesBothLines) {
  ExpectInvalid(
      "backends:\n  - name: cpu\n    devices:\n      - select: 1\n      - select: 1\n",
      "bad.yaml:5:17: device '1' is selected twice in backend 'cpu' (first at bad.yaml:4:17)");
}

TEST(RuntimeConfigErrorTest, MalformedYamlGivesItsLocation) {
  ExpectInvalid("backends:\n  - name: cpu\n   priority: 1\n", "bad.yaml:3:");
  ExpectInvalid("backends:\n  - name: cpu\n   priority: 1\n", ": malformed YAML: ");
  ExpectInvalid("backends: [{name: cpu}\n", ": malformed YAML: end of sequence flow not found");
}

TEST(RuntimeConfigErrorTest, EmptyOrMultiDocumentOrNonMapTextIsRejected) {
  ExpectInvalid("", "bad.yaml: the file holds no YAML content; expected a map with a 'backends'");
  ExpectInvalid("# only a comment\n", "bad.yaml: the file holds no YAML content");
  ExpectInvalid("backends: [{name: cpu}]\n---\nbackends: [{name: cpu}]\n",
                "bad.yaml:3:1: a second YAML document starts here; expected exactly one");
  ExpectInvalid("- name: cpu\n", "bad.yaml:1:1: top-level config must be a map; got a list");
}

TEST(RuntimeConfigErrorTest, MissingFileIsNotFound) {
  TempDir dir;
  const std::string path = (dir.path() / "nope.yaml").string();
  ExpectError(LoadRuntimeConfig(path), StatusCode::kNotFound,
              "config file '" + path + "' does not exist");
}

TEST(RuntimeConfigErrorTest, DirectoryIsNotAConfigFile) {
  TempDir dir;
  ExpectError(LoadRuntimeConfig(dir.path().string()), StatusCode::kInvalidArgument,
              "config file '" + dir.path().string() + "' is a directory");
}

TEST(RuntimeConfigErrorTest, MissingHardwareFileSaysWhereItWasNamed) {
  TempDir dir;
  const std::string yaml =
      "backends:\n  - name: cpu\n    devices:\n      - select: 0\n        hardware: none.yaml\n";
  const StatusOr<RuntimeConfig> config = ParseRuntimeConfig(yaml, "run.yaml", dir.path().string());
  ExpectError(config, StatusCode::kNotFound,
              "hardware file '" + (dir.path() / "none.yaml").string() + "' does not exist");
  EXPECT_THAT(config.status().message(), HasSubstr("(hardware file named at run.yaml:5:19)"));
}

TEST(RuntimeConfigErrorTest, BadHardwareFileErrorNamesThatFileFirst) {
  TempDir dir;
  const std::string hw =
      dir.Write("hw.yaml", "name: X\npeak_bandwidth_gb_per_s: -1\npeak_tflops: {f32: 1}\n");
  const std::string yaml =
      "backends:\n  - name: cpu\n    devices:\n      - select: 0\n        hardware: hw.yaml\n";
  const StatusOr<RuntimeConfig> config = ParseRuntimeConfig(yaml, "run.yaml", dir.path().string());
  ExpectError(config, StatusCode::kInvalidArgument,
              hw + ":2:26: 'peak_bandwidth_gb_per_s' must be a number in [0.1, 100000]");
  EXPECT_THAT(config.status().message(), HasSubstr("(hardware file named at run.yaml:5:19)"));
}

}  // namespace
}  // namespace hwinfer
