// template_kernels.cpp — the one kernel the template runs: the bandwidth probe.
//
// TEMPLATE: add kernels one at a time, each an `enqueue` overload declared in template_backend.h
// (the kit fills its slot in the kernel table and answers kernel_query for it), and run
// `hwinfer conformance --plugin ...` after each: the suite compares every kernel with the CPU
// reference. The kit has run the kind's shared check when enqueue is called (views well-formed, on
// this device, inside their buffers). For a well-formed request your kernel cannot run (a dtype,
// a layout), add a kernel_limits hook to check_context: kernel_query then says UNSUPPORTED with
// your reason. Never claim a kernel you cannot run: the core does not fall back to another device.
//
//   src: [size_bytes] I8 (READ, COPY);  dst: [size_bytes] I8 (COPY, WRITE);  sink: [>= 64] I8
//   (READ)
#include <cstring>

#include "template_backend.h"

namespace hwinfer_template {
namespace {

constexpr uint64_t kSinkBytes = 64;  // the probe writes its read checksum here (plugin.h)

// One READ pass: touches every byte of |src| and folds them into a checksum, 8 bytes at a time.
uint64_t read_pass(const uint8_t* src, size_t size) {
  uint64_t sum = 0;
  size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    uint64_t word;
    std::memcpy(&word, src + i, sizeof(word));  // no alignment assumption, no aliasing UB
    sum += word;
  }
  for (; i < size; ++i) sum += src[i];
  return sum;
}

uint8_t* bytes(const hwinfer_tensor_view& view) { return view.buffer->data + view.offset_bytes; }

}  // namespace

// DRIVER: launch a kernel that streams through memory with wide, coalesced accesses and enough
// parallelism to saturate it; the host times it between two events and divides the bytes.
hwinfer_error* TemplateBackend::enqueue(hwinfer_stream&, const hwinfer_bandwidth_probe_desc& desc) {
  const auto size = static_cast<size_t>(desc.size_bytes);
  if (desc.mode == HWINFER_PROBE_READ) {
    uint64_t checksum = 0;
    for (uint32_t pass = 0; pass < desc.iterations; ++pass) {
      // Each pass depends on the previous one, so the compiler cannot fold them into one.
      checksum = ((checksum << 1) | (checksum >> 63)) + read_pass(bytes(desc.src), size);
    }
    for (uint64_t at = 0; at < kSinkBytes; at += sizeof(checksum)) {
      std::memcpy(bytes(desc.sink) + at, &checksum,
                  sizeof(checksum));  // makes the reads observable
    }
  } else if (desc.mode == HWINFER_PROBE_COPY) {
    for (uint32_t pass = 0; pass < desc.iterations; ++pass) {
      std::memcpy(bytes(desc.dst), bytes(desc.src), size);
    }
  } else {
    for (uint32_t pass = 0; pass < desc.iterations; ++pass) {
      std::memset(bytes(desc.dst), static_cast<int>(pass & 0xffu), size);
    }
  }
  return nullptr;
}

}  // namespace hwinfer_template
