// plugin_loader.cpp — dlopen, ABI negotiation and plugin_init, with an error naming the file and
// the reason for every way that can fail. Must not keep a half-initialised plugin: every failure
// path closes what it opened.
#include "hwinfer/plugin_loader.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>

#include "hwinfer/device.h"
#include "hwinfer/input_file.h"
#include "hwinfer/log.h"
#include "hwinfer/text_escape.h"

namespace hwinfer {
namespace fs = std::filesystem;

namespace {

bool HasElfHeader(const InputFile& file) {
  char magic[4] = {};
  return ::pread(file.fd(), magic, 4, 0) == 4 && magic[0] == 0x7f && magic[1] == 'E' &&
         magic[2] == 'L' && magic[3] == 'F';
}

std::vector<hwinfer_option> ToAbiOptions(const OptionMap& options) {
  std::vector<hwinfer_option> out;
  out.reserve(options.size());
  for (const auto& [key, value] : options) {
    out.push_back(hwinfer_option{sizeof(hwinfer_option), key.c_str(), value.c_str()});
  }
  return out;
}

// Copies the first min(src.struct_size, sizeof(T)) bytes of a plugin table into a zeroed T.
template <typename T>
T CopyTable(const T* src) {
  T out;
  std::memset(&out, 0, sizeof(out));
  if (src == nullptr) return out;
  size_t n = std::min<size_t>(src->struct_size, sizeof(T));
  std::memcpy(&out, src, n);
  return out;
}

// The slots every plugin must fill; the others are optional (NULL = not provided).
Status CheckRequiredSlots(const hwinfer_plugin_api& api, const std::string& path) {
  struct Slot {
    const char* name;
    bool present;
  };
  const Slot slots[] = {
      {"plugin_init", api.plugin_init != nullptr},
      {"plugin_destroy", api.plugin_destroy != nullptr},
      {"device_count", api.device_count != nullptr},
      {"device_get_info", api.device_get_info != nullptr},
      {"device_open", api.device_open != nullptr},
      {"device_close", api.device_close != nullptr},
      {"buffer_alloc", api.buffer_alloc != nullptr},
      {"buffer_free", api.buffer_free != nullptr},
      {"stream_create", api.stream_create != nullptr},
      {"stream_destroy", api.stream_destroy != nullptr},
      {"stream_synchronize", api.stream_synchronize != nullptr},
      {"copy_h2d", api.copy_h2d != nullptr},
      {"copy_d2h", api.copy_d2h != nullptr},
      {"copy_d2d", api.copy_d2d != nullptr},
  };
  for (const Slot& slot : slots) {
    if (!slot.present) {
      return InvalidArgument("plugin '" + path + "' does not provide the required function '" +
                             slot.name + "'");
    }
  }
  return Status::Ok();
}

}  // namespace

Status ConsumePluginError(hwinfer_error* error, const std::string& context) {
  if (error == nullptr) return Status::Ok();
  uint32_t code = error->code;
  std::string message = error->message != nullptr ? error->message : "(no message)";
  if (error->destroy != nullptr) error->destroy(error);
  StatusCode mapped = StatusCode::kInternal;
  if (code >= HWINFER_STATUS_INVALID_ARGUMENT && code <= HWINFER_STATUS_INTERNAL) {
    mapped = static_cast<StatusCode>(code);
  }
  return Status(mapped, context.empty() ? message : context + ": " + message);
}

std::string PluginFileName(const std::string& name) { return "hwinfer-" + name + ".so"; }

std::string DefaultPluginDir() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&DefaultPluginDir), &info) != 0 && info.dli_fname != nullptr) {
    std::error_code ec;
    fs::path library = fs::canonical(info.dli_fname, ec);
    if (ec) library = info.dli_fname;
    return (library.parent_path() / HWINFER_PLUGIN_SUBDIR).string();
  }
  return HWINFER_PLUGIN_SUBDIR;
}

std::vector<std::string> PluginSearchPaths(const std::vector<std::string>& config_paths) {
  std::vector<std::string> paths = config_paths;
  if (const char* env = std::getenv("HWINFER_PLUGIN_PATH"); env != nullptr) {
    std::string list = env;
    size_t start = 0;
    while (start <= list.size()) {
      size_t end = list.find(':', start);
      if (end == std::string::npos) end = list.size();
      if (end > start) paths.push_back(list.substr(start, end - start));
      start = end + 1;
    }
  }
  paths.push_back(DefaultPluginDir());
  return paths;
}

StatusOr<std::string> FindPluginFile(const std::string& name,
                                     const std::vector<std::string>& search_paths) {
  const std::string file = PluginFileName(name);
  std::string searched;
  for (const std::string& dir : search_paths) {
    fs::path candidate = fs::path(dir) / file;
    std::error_code ec;
    if (fs::is_regular_file(candidate, ec)) return candidate.string();
    searched += (searched.empty() ? "" : ", ") + dir;
  }
  return NotFound("backend '" + name + "': no plugin file " + file + " in " +
                  (searched.empty() ? "(no search folders)" : searched) +
                  " (set plugin_paths in the config, HWINFER_PLUGIN_PATH, or the backend's path)");
}

std::vector<std::string> DiscoverPluginFiles(const std::vector<std::string>& search_paths) {
  std::vector<std::string> found;
  std::set<std::string> names;
  for (const std::string& dir : search_paths) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) continue;
    std::vector<fs::path> here;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      const std::string file = entry.path().filename().string();
      if (file.rfind("hwinfer-", 0) == 0 && entry.path().extension() == ".so" &&
          entry.is_regular_file(ec)) {
        here.push_back(entry.path());
      }
    }
    std::sort(here.begin(), here.end());
    for (const fs::path& path : here) {
      if (names.insert(path.filename().string()).second) found.push_back(path.string());
    }
  }
  return found;
}

StatusOr<std::shared_ptr<Plugin>> Plugin::Load(const std::string& path, const OptionMap& options,
                                               const std::function<void(const char*)>& on_phase) {
  const auto phase = [&on_phase](const char* name) {
    if (on_phase) on_phase(name);
  };
  {
    // A FIFO or a device named like a plugin is refused before anything opens it for reading.
    HWINFER_ASSIGN_OR_RETURN(const InputFile file, InputFile::Open(path, "plugin file"));
    if (!HasElfHeader(file)) {
      return InvalidArgument("plugin file '" + path + "' is not a shared library (no ELF header)");
    }
  }
  phase("dlopen (the library's constructors)");
  void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* why = dlerror();
    return InvalidArgument("plugin file '" + path + "' could not be loaded as a shared library: " +
                           (why != nullptr ? why : "unknown dlopen error"));
  }
  std::shared_ptr<Plugin> plugin(new Plugin());
  plugin->library_ = library;  // closed by ~Plugin on every path below
  plugin->identity_.path = path;

  dlerror();
  void* symbol = dlsym(library, HWINFER_PLUGIN_QUERY_SYMBOL);
  if (symbol == nullptr) {
    return NotFound("plugin file '" + path +
                    "' has no symbol '" HWINFER_PLUGIN_QUERY_SYMBOL
                    "'; it is a shared library but not an hwinfer plugin");
  }
  auto query = reinterpret_cast<hwinfer_plugin_query_fn>(symbol);
  const hwinfer_plugin_api* raw = nullptr;
  phase("hwinfer_plugin_query");
  HWINFER_RETURN_IF_ERROR(ConsumePluginError(
      query(HWINFER_ABI_MAJOR, HWINFER_ABI_MINOR, HostApi(), &raw),
      "plugin '" + path + "' refused ABI major " + std::to_string(HWINFER_ABI_MAJOR)));
  if (raw == nullptr) {
    return Internal("plugin '" + path + "': hwinfer_plugin_query succeeded but returned no table");
  }
  if (raw->struct_size < offsetof(hwinfer_plugin_api, name)) {
    return InvalidArgument("plugin '" + path + "': API table struct_size " +
                           std::to_string(raw->struct_size) + " is too small to be valid");
  }
  if (raw->abi_major != HWINFER_ABI_MAJOR) {
    return Unsupported("plugin '" + path + "' implements ABI major " +
                       std::to_string(raw->abi_major) + " but this hwinfer implements major " +
                       std::to_string(HWINFER_ABI_MAJOR) + "; rebuild the plugin against this SDK");
  }
  plugin->api_ = CopyTable(raw);
  plugin->kernels_ = CopyTable(plugin->api_.kernels);
  HWINFER_RETURN_IF_ERROR(CheckRequiredSlots(plugin->api_, path));

  // Printed everywhere (device ids are "<name>:<ordinal>"): escaped once, here.
  plugin->identity_.name =
      EscapeControlCharacters(plugin->api_.name != nullptr ? plugin->api_.name : "(unnamed)");
  plugin->identity_.version =
      EscapeControlCharacters(plugin->api_.version != nullptr ? plugin->api_.version : "");
  plugin->identity_.abi_major = plugin->api_.abi_major;
  plugin->identity_.abi_minor = plugin->api_.abi_minor;

  std::vector<hwinfer_option> abi_options = ToAbiOptions(options);
  hwinfer_plugin* instance = nullptr;
  phase("plugin_init");
  HWINFER_RETURN_IF_ERROR(ConsumePluginError(
      plugin->api_.plugin_init(HostApi(), abi_options.data(), abi_options.size(), &instance),
      "plugin '" + path + "' failed to initialise"));
  if (instance == nullptr) {
    return Internal("plugin '" + path + "': plugin_init succeeded but returned no instance");
  }
  plugin->instance_ = instance;
  Log(LogLevel::kDebug, "core",
      "loaded plugin " + plugin->identity_.name + " " + plugin->identity_.version + " from " +
          path);
  return plugin;
}

Plugin::~Plugin() {
  if (instance_ != nullptr && api_.plugin_destroy != nullptr) api_.plugin_destroy(instance_);
  instance_ = nullptr;
  if (library_ != nullptr) dlclose(library_);
  library_ = nullptr;
}

StatusOr<uint32_t> Plugin::DeviceCount() const {
  uint32_t count = 0;
  HWINFER_RETURN_IF_ERROR(
      ConsumePluginError(api_.device_count(instance_, &count), name() + ": device_count"));
  if (count > kMaxDevicesPerPlugin) {
    return InvalidArgument("plugin '" + path() + "' reports " + std::to_string(count) +
                           " devices; at most " + std::to_string(kMaxDevicesPerPlugin) +
                           " per plugin are supported (a broken device_count?)");
  }
  return count;
}

StatusOr<DeviceInfo> Plugin::GetDeviceInfo(uint32_t ordinal) const {
  hwinfer_device_info info;
  std::memset(&info, 0, sizeof(info));
  info.struct_size = sizeof(info);
  HWINFER_RETURN_IF_ERROR(
      ConsumePluginError(api_.device_get_info(instance_, ordinal, &info),
                         name() + ": device_get_info(" + std::to_string(ordinal) + ")"));
  return DeviceInfo::FromAbi(info);
}

StatusOr<std::shared_ptr<Device>> Plugin::OpenDevice(uint32_t ordinal, const OptionMap& options) {
  HWINFER_ASSIGN_OR_RETURN(DeviceInfo info, GetDeviceInfo(ordinal));
  std::vector<hwinfer_option> abi_options = ToAbiOptions(options);
  hwinfer_device* handle = nullptr;
  HWINFER_RETURN_IF_ERROR(ConsumePluginError(
      api_.device_open(instance_, ordinal, abi_options.data(), abi_options.size(), &handle),
      name() + ": device_open(" + std::to_string(ordinal) + ")"));
  if (handle == nullptr) {
    return Internal(name() + ": device_open succeeded but returned no device");
  }
  return std::make_shared<Device>(shared_from_this(), ordinal, handle, std::move(info));
}

}  // namespace hwinfer
