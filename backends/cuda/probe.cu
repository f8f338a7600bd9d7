// probe.cu — the bandwidth probe kernels (plugin.h's HWINFER_PROBE_*): grid-stride loops over
// 16-byte words with a byte tail, enough blocks to fill every multiprocessor several times, so the
// measured rate is the memory's, not the launch's. READ folds every word into an XOR written to
// the sink (so no read can be dropped); COPY and WRITE store every byte.
#include "gpu_device.h"
#include "launch.h"

namespace hwinfer::gpu {

namespace {

constexpr int kThreads = 256;

__global__ void probe_read(const uint4* __restrict__ src, uint64_t words, const uint8_t* tail,
                           uint64_t tail_bytes, uint32_t iterations, uint32_t* sink) {
  const uint64_t start = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
  const uint64_t step = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  uint32_t acc = 0;
  for (uint32_t it = 0; it < iterations; ++it) {
    for (uint64_t i = start; i < words; i += step) {
      const uint4 v = src[i];
      acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    for (uint64_t i = start; i < tail_bytes; i += step) acc ^= tail[i];
  }
  // Almost never true; the compiler cannot know, so every load above must happen.
  if (acc == 0x9e3779b9u) sink[threadIdx.x % 16] = acc;
}

__global__ void probe_copy(const uint4* __restrict__ src, uint4* __restrict__ dst, uint64_t words,
                           const uint8_t* src_tail, uint8_t* dst_tail, uint64_t tail_bytes,
                           uint32_t iterations) {
  const uint64_t start = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
  const uint64_t step = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  for (uint32_t it = 0; it < iterations; ++it) {
    for (uint64_t i = start; i < words; i += step) dst[i] = src[i];
    for (uint64_t i = start; i < tail_bytes; i += step) dst_tail[i] = src_tail[i];
  }
}

__global__ void probe_write(uint4* __restrict__ dst, uint64_t words, uint8_t* tail,
                            uint64_t tail_bytes, uint32_t iterations) {
  const uint64_t start = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
  const uint64_t step = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  for (uint32_t it = 0; it < iterations; ++it) {
    const uint32_t value = it * 0x01010101u;
    for (uint64_t i = start; i < words; i += step) dst[i] = make_uint4(value, value, value, value);
    for (uint64_t i = start; i < tail_bytes; i += step) tail[i] = static_cast<uint8_t>(it);
  }
}

bool aligned16(const void* pointer) { return reinterpret_cast<uintptr_t>(pointer) % 16 == 0; }

}  // namespace

gpuError_t launch_bandwidth_probe(uint32_t mode, uint32_t iterations, uint64_t size_bytes,
                                  const uint8_t* src, uint8_t* dst, uint8_t* sink,
                                  uint32_t compute_units, gpuStream_t stream) {
  // Byte accesses when an address is not 16-byte aligned (the conformance suite's odd offsets);
  // the device's own allocations always are.
  const bool vector = (src == nullptr || aligned16(src)) && (dst == nullptr || aligned16(dst));
  const uint64_t words = vector ? size_bytes / 16 : 0;
  const uint64_t tail_offset = words * 16;
  const uint64_t tail_bytes = size_bytes - tail_offset;
  const uint64_t work = words > tail_bytes ? words : tail_bytes;
  uint64_t blocks = (work + kThreads - 1) / kThreads;
  const uint64_t max_blocks = 8ull * (compute_units > 0 ? compute_units : 16);
  if (blocks > max_blocks) blocks = max_blocks;
  if (blocks == 0) blocks = 1;
  const dim3 grid(static_cast<unsigned>(blocks));
  switch (mode) {
    case 0:  // HWINFER_PROBE_READ
      GPU_LAUNCH(probe_read, grid, kThreads, 0, stream, reinterpret_cast<const uint4*>(src), words,
                 src + tail_offset, tail_bytes, iterations, reinterpret_cast<uint32_t*>(sink));
      break;
    case 1:  // HWINFER_PROBE_COPY
      GPU_LAUNCH(probe_copy, grid, kThreads, 0, stream, reinterpret_cast<const uint4*>(src),
                 reinterpret_cast<uint4*>(dst), words, src + tail_offset, dst + tail_offset,
                 tail_bytes, iterations);
      break;
    default:  // HWINFER_PROBE_WRITE
      GPU_LAUNCH(probe_write, grid, kThreads, 0, stream, reinterpret_cast<uint4*>(dst), words,
                 dst + tail_offset, tail_bytes, iterations);
      break;
  }
  return GPU(GetLastError)();
}

}  // namespace hwinfer::gpu
