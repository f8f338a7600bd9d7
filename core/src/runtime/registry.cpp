// registry.cpp — turns a RuntimeConfig (or the plugin search path) into loaded plugins and a
// priority-ordered list of selected devices, dropping devices two plugins both report. Errors
// point at the config file:line:column. A device without a declared hardware file or spec peaks of
// its own gets those of the known hardware file matching its name (hardware_spec.h). Opens
// devices only on request.
#include "hwinfer/registry.h"

#include <algorithm>
#include <optional>
#include <set>

#include "hwinfer/hardware_spec.h"
#include "hwinfer/log.h"

namespace hwinfer {
namespace {

struct Candidate {
  RegisteredDevice device;
  size_t backend_index = 0;  // config order, the tie-breaker after priority
};

std::string DescribeDevices(const Plugin& plugin, uint32_t count) {
  if (count == 0) return "the plugin reports no devices";
  std::string out = "available:";
  for (uint32_t i = 0; i < count; ++i) {
    auto info = plugin.GetDeviceInfo(i);
    out += " [" + std::to_string(i) + "] ";
    out += info.ok() ? "'" + info->name + "'" + (info->has_uuid() ? " " + info->uuid_string() : "")
                     : "(info failed)";
  }
  return out;
}

// The ordinals of |plugin| that |selector| picks (a name may pick several identical devices).
StatusOr<std::vector<uint32_t>> ResolveSelector(const Plugin& plugin, uint32_t count,
                                                const BackendConfig& backend,
                                                const DeviceSelector& selector) {
  std::vector<uint32_t> picked;
  for (uint32_t i = 0; i < count; ++i) {
    bool match = false;
    switch (selector.kind) {
      case DeviceSelector::Kind::kIndex:
        match = selector.index >= 0 && i == static_cast<uint32_t>(selector.index);
        break;
      case DeviceSelector::Kind::kName: {
        HWINFER_ASSIGN_OR_RETURN(DeviceInfo info, plugin.GetDeviceInfo(i));
        match = info.name == selector.text;
        break;
      }
      case DeviceSelector::Kind::kUuid: {
        HWINFER_ASSIGN_OR_RETURN(DeviceInfo info, plugin.GetDeviceInfo(i));
        match = info.uuid_string() == selector.text;
        break;
      }
    }
    if (match) picked.push_back(i);
  }
  if (picked.empty()) {
    return InvalidArgument(selector.location.ToString() + ": unknown device '" + selector.text +
                           "' for backend '" + backend.name +
                           "'; expected a device index, name or UUID the plugin reports (" +
                           DescribeDevices(plugin, count) + ")");
  }
  return picked;
}

// Orders candidates (priority desc, config order, ordinal) and drops same-UUID duplicates.
void SelectDevices(std::vector<Candidate> candidates, bool allow_duplicates,
                   std::vector<RegisteredDevice>& devices, std::vector<HiddenDuplicate>& hidden) {
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const Candidate& a, const Candidate& b) {
                     if (a.device.priority != b.device.priority)
                       return a.device.priority > b.device.priority;
                     if (a.backend_index != b.backend_index)
                       return a.backend_index < b.backend_index;
                     return a.device.ordinal < b.device.ordinal;
                   });
  std::map<std::string, std::string> shown_by_uuid;  // uuid -> id that shows it
  std::set<std::string> seen_ids;
  for (Candidate& candidate : candidates) {
    const std::string id = candidate.device.id();
    if (!seen_ids.insert(id).second) continue;  // selected twice by one backend's list
    const std::string uuid = candidate.device.info.uuid_string();
    if (!uuid.empty() && !allow_duplicates) {
      auto [it, inserted] = shown_by_uuid.emplace(uuid, id);
      if (!inserted) {
        Log(LogLevel::kInfo, "core",
            id + " is the same device as " + it->second + " (UUID " + uuid + "); showing it once");
        hidden.push_back(HiddenDuplicate{id, it->second, uuid});
        continue;
      }
    }
    devices.push_back(std::move(candidate.device));
  }
}

}  // namespace

std::string RegisteredDevice::id() const { return plugin->name() + ":" + std::to_string(ordinal); }

StatusOr<Registry> Registry::FromConfig(const RuntimeConfig& config) {
  Registry registry;
  const std::vector<std::string> search_paths = PluginSearchPaths(config.plugin_paths);
  const std::vector<std::string> hardware_dirs = KnownHardwareDirs(config.file);
  std::vector<Candidate> candidates;
  for (size_t b = 0; b < config.backends.size(); ++b) {
    const BackendConfig& backend = config.backends[b];
    std::string path;
    if (backend.path) {
      path = *backend.path;
    } else {
      auto found = FindPluginFile(backend.name, search_paths);
      if (!found.ok()) {
        return InvalidArgument(backend.name_location.ToString() + ": unknown backend '" +
                               backend.name + "': " + found.status().message());
      }
      path = *found;
    }
    auto loaded = Plugin::Load(path, backend.options);
    if (!loaded.ok()) {
      return Status(loaded.status().code(), backend.location.ToString() + ": backend '" +
                                                backend.name + "': " + loaded.status().message());
    }
    std::shared_ptr<Plugin> plugin = *loaded;
    registry.plugins_.push_back(plugin);
    HWINFER_ASSIGN_OR_RETURN(uint32_t count, plugin->DeviceCount());

    auto add = [&](uint32_t ordinal, const DeviceConfig* device_config) -> Status {
      HWINFER_ASSIGN_OR_RETURN(DeviceInfo info, plugin->GetDeviceInfo(ordinal));
      Candidate candidate;
      candidate.device.plugin = plugin;
      candidate.device.ordinal = ordinal;
      candidate.device.priority = backend.priority;
      if (device_config != nullptr) candidate.device.options = device_config->options;
      if (device_config != nullptr && device_config->hardware) {
        info.ApplyHardwareSpec(*device_config->hardware);
      } else if (info.spec_peak_bandwidth_bytes_per_s == 0) {
        // A known device (e.g. an H200 through Vulkan) gets its datasheet's peaks.
        HWINFER_ASSIGN_OR_RETURN(std::optional<HardwareSpec> known,
                                 FindKnownHardware(info.name, hardware_dirs));
        if (known) info.ApplyHardwareSpec(*known);
      }
      candidate.device.info = std::move(info);
      candidate.backend_index = b;
      candidates.push_back(std::move(candidate));
      return Status::Ok();
    };
    if (backend.all_devices) {
      for (uint32_t i = 0; i < count; ++i) HWINFER_RETURN_IF_ERROR(add(i, nullptr));
    } else {
      for (const DeviceConfig& device_config : backend.devices) {
        HWINFER_ASSIGN_OR_RETURN(std::vector<uint32_t> ordinals,
                                 ResolveSelector(*plugin, count, backend, device_config.select));
        for (uint32_t ordinal : ordinals) HWINFER_RETURN_IF_ERROR(add(ordinal, &device_config));
      }
    }
  }
  SelectDevices(std::move(candidates), config.allow_duplicate_devices, registry.devices_,
                registry.hidden_);
  return registry;
}

namespace {

// The devices of one plugin found by searching, or why it is skipped.
StatusOr<std::vector<Candidate>> SearchedPluginDevices(const std::shared_ptr<Plugin>& plugin,
                                                       size_t index) {
  HWINFER_ASSIGN_OR_RETURN(const uint32_t count, plugin->DeviceCount());
  std::vector<Candidate> candidates;
  for (uint32_t i = 0; i < count; ++i) {
    HWINFER_ASSIGN_OR_RETURN(DeviceInfo info, plugin->GetDeviceInfo(i));
    Candidate candidate;
    candidate.device.plugin = plugin;
    candidate.device.ordinal = i;
    candidate.device.info = std::move(info);
    candidate.backend_index = index;
    candidates.push_back(std::move(candidate));
  }
  return candidates;
}

}  // namespace

StatusOr<Registry> Registry::FromSearchPaths(const std::vector<std::string>& search_paths) {
  // Found, not asked for: a plugin that fails is skipped with a warning naming it, so one broken
  // file on the path cannot stop every command (a plugin named in a config stays an error).
  Registry registry;
  std::vector<Candidate> candidates;
  const std::vector<std::string> files = DiscoverPluginFiles(search_paths);
  for (size_t p = 0; p < files.size(); ++p) {
    auto loaded = Plugin::Load(files[p]);
    if (!loaded.ok()) {
      // UNAVAILABLE: e.g. a GPU plugin on a machine without its driver; nothing to list.
      const bool expected = loaded.status().code() == StatusCode::kUnavailable;
      Log(expected ? LogLevel::kInfo : LogLevel::kWarning, "core",
          "skipping " + files[p] + ": " + loaded.status().message());
      continue;
    }
    StatusOr<std::vector<Candidate>> found = SearchedPluginDevices(*loaded, p);
    if (!found.ok()) {
      Log(LogLevel::kWarning, "core", "skipping " + files[p] + ": " + found.status().message());
      continue;
    }
    registry.plugins_.push_back(*loaded);
    for (Candidate& candidate : *found) candidates.push_back(std::move(candidate));
  }
  SelectDevices(std::move(candidates), false, registry.devices_, registry.hidden_);
  return registry;
}

StatusOr<const RegisteredDevice*> Registry::Find(const std::string& selector) const {
  for (const RegisteredDevice& device : devices_) {
    if (device.id() == selector || device.info.name == selector ||
        (!selector.empty() && device.info.uuid_string() == selector)) {
      return &device;
    }
  }
  if (!selector.empty() && selector.find_first_not_of("0123456789") == std::string::npos &&
      selector.size() < 9) {
    size_t index = std::stoul(selector);
    if (index < devices_.size()) return &devices_[index];
  }
  std::string available;
  for (const RegisteredDevice& device : devices_) {
    available += (available.empty() ? "" : ", ") + device.id() + " ('" + device.info.name + "')";
  }
  return NotFound("no device matches '" + selector +
                  "'; expected an index, backend:ordinal, "
                  "name or UUID; available: " +
                  (available.empty() ? "none" : available));
}

StatusOr<std::shared_ptr<Device>> Registry::Open(const RegisteredDevice& device) {
  const std::string id = device.id();
  if (auto it = opened_.find(id); it != opened_.end()) return it->second;
  HWINFER_ASSIGN_OR_RETURN(std::shared_ptr<Device> opened,
                           device.plugin->OpenDevice(device.ordinal, device.options));
  opened->mutable_info() = device.info;  // keep the declared hardware spec
  opened_[id] = opened;
  return opened;
}

}  // namespace hwinfer
