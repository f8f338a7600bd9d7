// stream.cpp — streams of the CPU device and the copies queued on them. Each stream is a
// StreamWorker (one thread of its own, in order, started with the stream); the kit checks a copy
// when it is queued (kit/host_memory.h), and it runs as memmove on the worker.
//
// Must not run queued work on the caller's thread, and must not block in an enqueue call beyond
// taking the queue's lock.
#include <cstdint>
#include <cstring>

#include "cpu_backend.h"

namespace hwinfer::cpu {

hwinfer_error* CpuBackend::init_stream(hwinfer_device& device, hwinfer_stream& stream) {
  stream.pool = device.plugin->pool.get();
  stream.gemm_isa = device.plugin->gemm_isa;
  return nullptr;
}

hwinfer_error* CpuBackend::synchronize(hwinfer_stream& stream) {
  return stream.worker.synchronize();
}

hwinfer_error* CpuBackend::submit_copy(hwinfer_stream& stream, uint8_t* dst, const uint8_t* src,
                                       size_t size) {
  return stream.worker.enqueue([dst, src, size]() -> hwinfer_error* {
    std::memmove(dst, src, size);
    return nullptr;
  });
}

}  // namespace hwinfer::cpu
