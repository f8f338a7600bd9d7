// memory.cpp — buffers of a simulated device. A buffer of at most backed_limit_bytes is backed by
// zero-initialised, page-aligned host memory from an anonymous mapping (copies and kernels really
// move its bytes, and it maps); pages are only materialised when touched, and the kernels touch
// one element per row, so a multi-GiB activation or KV buffer costs little host memory. A bigger
// one is VIRTUAL: only its size exists, so a model far larger than this machine's memory can be
// "placed"; copies into it are accepted and ignored, reads from it give zeros, kernels skip it, and
// it does not map (UNSUPPORTED).
//
// Every buffer counts against the device's memory_total (OUT_OF_MEMORY past it), backed or not.
#include <sys/mman.h>

#include <cinttypes>
#include <cstdint>

#include "hwinfer/kit/host_memory.h"
#include "sim_internal.h"

namespace hwinfer::sim {

hwinfer_error* SimBackend::allocate(hwinfer_device& device, hwinfer_buffer& buffer) {
  hwinfer_plugin& plugin = *device.plugin;
  const uint64_t size_bytes = buffer.size_bytes;
  const uint64_t total = plugin.memory_total_bytes[device.ordinal];
  // Reserve the bytes first, so two threads cannot both pass the check.
  {
    std::lock_guard<std::mutex> lock(plugin.mutex);
    uint64_t& allocated = plugin.allocated[device.ordinal];
    if (size_bytes > total - allocated) {
      return hwinfer_make_error(HWINFER_STATUS_OUT_OF_MEMORY,
                                "sim buffer_alloc: %" PRIu64 " bytes requested, but %" PRIu64
                                " of the device's %" PRIu64 " bytes are allocated (%" PRIu64
                                " free; memory_gib of %s)",
                                size_bytes, allocated, total, total - allocated,
                                plugin.spec(device.ordinal).file.c_str());
    }
    allocated += size_bytes;
  }
  if (size_bytes > plugin.backed_limit_bytes) return nullptr;  // virtual
  void* data = mmap(nullptr, static_cast<size_t>(size_bytes), PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (data == MAP_FAILED) {
    std::lock_guard<std::mutex> lock(plugin.mutex);
    plugin.allocated[device.ordinal] -= size_bytes;
    return hwinfer_make_error(HWINFER_STATUS_OUT_OF_MEMORY,
                              "sim buffer_alloc: cannot allocate %" PRIu64
                              " bytes of host memory to back the buffer",
                              size_bytes);
  }
  buffer.data = static_cast<uint8_t*>(data);
  return nullptr;
}

void SimBackend::release(hwinfer_buffer& buffer) {
  hwinfer_device& device = *buffer.device;
  {
    std::lock_guard<std::mutex> lock(device.plugin->mutex);
    device.plugin->allocated[device.ordinal] -= buffer.size_bytes;
  }
  if (buffer.data != nullptr) munmap(buffer.data, static_cast<size_t>(buffer.size_bytes));
}

hwinfer_error* SimBackend::map(hwinfer_buffer& buffer, void** out_host_ptr) {
  if (!buffer.backed()) {
    return hwinfer_make_error(HWINFER_STATUS_UNSUPPORTED,
                              "sim buffer_map: the %" PRIu64
                              "-byte buffer is virtual (larger than backed_limit_mib = %" PRIu64
                              " MiB): it has no memory to map",
                              buffer.size_bytes, buffer.device->plugin->backed_limit_bytes >> 20);
  }
  *out_host_ptr = buffer.data;
  return nullptr;
}

// "sim" messages, buffers read as kit::HostBuffer (data is the host address, NULL for a virtual
// buffer). No kernel_limits hook: the sim accepts exactly what the shared checks accept, as a
// real backend does.
backend::CheckContext SimBackend::check_context(const hwinfer_device& device,
                                                bool require_buffers) {
  return kit::host_check_context(kPluginName, device, require_buffers);
}

}  // namespace hwinfer::sim
