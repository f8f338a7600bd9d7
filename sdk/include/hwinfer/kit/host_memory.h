// host_memory.h — the memory half of a plugin whose device memory is this process's memory (the
// cpu plugin, the template): buffers are 64-byte aligned host allocations (both memory kinds; both
// map), host memory can be imported, and a copy is a memmove the backend runs in stream order.
// A backend struct derives from HostMemory<Backend> (its buffers from kit::HostBuffer) and adds
//   static hwinfer_error* submit_copy(hwinfer_stream&, uint8_t* dst, const uint8_t* src,
//                                     size_t size);    // run memmove(dst, src, size) in order
// Memmove, not memcpy: an imported host pointer may alias a buffer of the same device.
#ifndef HWINFER_SDK_KIT_HOST_MEMORY_H_
#define HWINFER_SDK_KIT_HOST_MEMORY_H_

#include <cinttypes>
#include <cstdint>
#include <cstdlib>

#include "hwinfer/kit/check_context.h"
#include "hwinfer/kit/object_slots.h"
#include "hwinfer/plugin.h"
#include "hwinfer/plugin_support.h"

namespace hwinfer::kit {

// The check context (check_context.h) of a plugin whose buffers derive from HostBuffer.
template <typename Buffer = hwinfer_buffer>
backend::CheckContext host_check_context(const char* plugin_name, const hwinfer_device& device,
                                         bool require_buffers,
                                         uint64_t weight_dtypes = backend::kWeightDtypesAll) {
  static const backend::BufferInfoFn kBuffers = {
      [](const hwinfer_buffer* buffer) -> uint64_t {
        return static_cast<const Buffer*>(buffer)->size_bytes;
      },
      [](const hwinfer_buffer* buffer) -> const hwinfer_device* {
        return static_cast<const Buffer*>(buffer)->device;
      },
      [](const hwinfer_buffer* buffer) {
        return reinterpret_cast<uintptr_t>(static_cast<const Buffer*>(buffer)->data);
      }};
  return {plugin_name, &kBuffers, &device, require_buffers, nullptr, weight_dtypes};
}

template <typename Backend>
struct HostMemory {
  static constexpr size_t kHostAlignmentBytes = 64;

  static hwinfer_error* allocate(DeviceOf<Backend>&, BufferOf<Backend>& buffer) {
    void* data = nullptr;
    if (buffer.size_bytes > SIZE_MAX - kHostAlignmentBytes ||
        posix_memalign(&data, kHostAlignmentBytes, static_cast<size_t>(buffer.size_bytes)) != 0) {
      return hwinfer_make_error(HWINFER_STATUS_OUT_OF_MEMORY,
                                "%s buffer_alloc: cannot allocate %" PRIu64 " bytes",
                                Backend::kName, buffer.size_bytes);
    }
    buffer.data = static_cast<uint8_t*>(data);
    buffer.owns_data = true;
    return nullptr;
  }

  static void release(BufferOf<Backend>& buffer) {
    if (buffer.owns_data) std::free(buffer.data);
  }

  static hwinfer_error* map(BufferOf<Backend>& buffer, void** out_host_ptr) {
    *out_host_ptr = buffer.data;
    return nullptr;
  }

  static hwinfer_error* import_host(DeviceOf<Backend>&, BufferOf<Backend>& buffer, void* host_ptr) {
    buffer.data = static_cast<uint8_t*>(host_ptr);
    buffer.owns_data = false;
    return nullptr;
  }

  static hwinfer_error* copy_h2d(StreamOf<Backend>& stream, const void* src, BufferOf<Backend>& dst,
                                 uint64_t dst_offset, uint64_t size_bytes) {
    return Backend::submit_copy(stream, dst.data + dst_offset, static_cast<const uint8_t*>(src),
                                static_cast<size_t>(size_bytes));
  }

  static hwinfer_error* copy_d2h(StreamOf<Backend>& stream, BufferOf<Backend>& src,
                                 uint64_t src_offset, void* dst, uint64_t size_bytes) {
    return Backend::submit_copy(stream, static_cast<uint8_t*>(dst), src.data + src_offset,
                                static_cast<size_t>(size_bytes));
  }

  // Two buffers may alias one host range (two imports of it): overlap is checked by address.
  static hwinfer_error* copy_d2d(StreamOf<Backend>& stream, BufferOf<Backend>& src,
                                 uint64_t src_offset, BufferOf<Backend>& dst, uint64_t dst_offset,
                                 uint64_t size_bytes) {
    const auto src_begin = reinterpret_cast<uintptr_t>(src.data + src_offset);
    const auto dst_begin = reinterpret_cast<uintptr_t>(dst.data + dst_offset);
    if (src_begin < dst_begin + size_bytes && dst_begin < src_begin + size_bytes) {
      return slots::overlap_error<Backend>(src_offset, dst_offset, size_bytes);
    }
    return Backend::submit_copy(stream, dst.data + dst_offset, src.data + src_offset,
                                static_cast<size_t>(size_bytes));
  }
};

}  // namespace hwinfer::kit

#endif  // HWINFER_SDK_KIT_HOST_MEMORY_H_
