// abi_test_util.h — what the ABI tests share: where the test plugins are, and reading the call
// counter a test plugin exports (abi_test_call_count, see plugins/minimal_backend.h).
//
// The test plugins live in HWINFER_ABI_TEST_PLUGIN_DIR (<build>/tests/plugins), never in the real
// plugin folder, so `hwinfer devices` and the conformance runner do not pick them up.
#pragma once

#include <dlfcn.h>

#include <cstdint>
#include <optional>
#include <string>

namespace hwinfer::abi_test {

// "<build>/tests/plugins/<file>"
inline std::string TestPlugin(const std::string& file) {
  return std::string(HWINFER_ABI_TEST_PLUGIN_DIR) + "/" + file;
}

// Calls abi_test_call_count(|kind|) in the ALREADY LOADED library |path| (RTLD_NOLOAD: this never
// loads a second copy, so it reads the counters of the instance the host is using). nullopt when
// the library is not loaded or has no counter.
inline std::optional<uint64_t> PluginCallCount(const std::string& path, uint32_t kind) {
  void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (library == nullptr) return std::nullopt;
  using CountFn = uint64_t (*)(uint32_t);
  auto count = reinterpret_cast<CountFn>(dlsym(library, "abi_test_call_count"));
  std::optional<uint64_t> result;
  if (count != nullptr) result = count(kind);
  dlclose(library);  // drops only the reference RTLD_NOLOAD added
  return result;
}

// True while |path| is mapped into this process.
inline bool IsLoaded(const std::string& path) {
  void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (library == nullptr) return false;
  dlclose(library);
  return true;
}

}  // namespace hwinfer::abi_test
