// template_kernels.cpp — the kernel table, kernel_query, and the one kernel the template has: the
// bandwidth probe.
//
// TEMPLATE: replace `template` with your backend's name. Add kernels one at a time: fill the slot
// in kernel_table(), answer SUPPORTED for exactly the descriptors it handles in kernel_query, and
// run `hwinfer conformance --plugin ...` after each; the conformance suite compares every kernel
// against the CPU reference. A slot left NULL is reported UNSUPPORTED by the host, which never
// calls it. Never claim a kernel you cannot run: the core does not fall back to another device.
//
// One validation function per kernel serves both kernel_query (descriptor only; its views'
// buffers may be NULL at query time) and the launch (buffers present, ranges checked), so the two
// cannot disagree about what is supported.
#include <cstring>

#include "template_internal.h"

namespace hwinfer_template {
namespace {

constexpr uint64_t kSinkBytes = 64;  // the probe writes its read checksum here (plugin.h: >= 64)

// Checks one I8 operand of the probe: 1-D, contiguous, covering at least |bytes| bytes. With
// |stream| (launch time) also checks that the view has a buffer of the stream's device and that the
// bytes lie inside it. |name| is "src", "dst" or "sink" for the message.
hwinfer_error* check_probe_view(const hwinfer_tensor_view& view, uint64_t bytes, const char* name,
                                const hwinfer_stream* stream) {
  if (view.dtype != HWINFER_DTYPE_I8) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "bandwidth_probe: %s must have dtype I8 (%u), got %u", name,
                              HWINFER_DTYPE_I8, view.dtype);
  }
  if (view.rank != 1 || view.shape[0] < 0 || static_cast<uint64_t>(view.shape[0]) < bytes) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "bandwidth_probe: %s must be a 1-D view of at least %llu bytes", name,
                              static_cast<unsigned long long>(bytes));
  }
  if (view.strides_bytes[0] != 1) {
    return hwinfer_make_error(HWINFER_STATUS_UNSUPPORTED,
                              "bandwidth_probe: the template only handles contiguous %s views "
                              "(stride 1), got stride %lld",
                              name, static_cast<long long>(view.strides_bytes[0]));
  }
  if (stream == nullptr) return nullptr;  // kernel_query: no buffers to look at yet
  if (view.buffer == nullptr) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT, "bandwidth_probe: %s has no buffer",
                              name);
  }
  if (view.buffer->device != stream->device) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "bandwidth_probe: %s belongs to another device than the stream",
                              name);
  }
  return check_buffer_range(view.buffer, view.offset_bytes, bytes, "bandwidth_probe");
}

// NULL when the template can run |desc|; otherwise an error saying why: UNSUPPORTED for what the
// template cannot do, INVALID_ARGUMENT for a malformed descriptor, OUT_OF_RANGE for a view outside
// its buffer. |stream| is NULL for kernel_query and the launch stream otherwise.
hwinfer_error* check_probe(const hwinfer_bandwidth_probe_desc* desc, const hwinfer_stream* stream) {
  // A descriptor from a host built against an OLDER header may be shorter than ours. Every field
  // the probe needs exists since ABI 1.0, so anything shorter than our struct is malformed.
  // (When you need a field appended in a later minor, treat its absence as its default instead.)
  if (desc->struct_size < sizeof(hwinfer_bandwidth_probe_desc)) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "bandwidth_probe: descriptor struct_size %u < %zu", desc->struct_size,
                              sizeof(hwinfer_bandwidth_probe_desc));
  }
  const bool reads = desc->mode == HWINFER_PROBE_READ || desc->mode == HWINFER_PROBE_COPY;
  const bool writes = desc->mode == HWINFER_PROBE_COPY || desc->mode == HWINFER_PROBE_WRITE;
  if (!reads && !writes) {
    return hwinfer_make_error(HWINFER_STATUS_UNSUPPORTED, "bandwidth_probe: unknown mode %u",
                              desc->mode);
  }
  if (reads) {
    if (hwinfer_error* error = check_probe_view(desc->src, desc->size_bytes, "src", stream)) {
      return error;
    }
  }
  if (writes) {
    if (hwinfer_error* error = check_probe_view(desc->dst, desc->size_bytes, "dst", stream)) {
      return error;
    }
  }
  if (desc->mode == HWINFER_PROBE_READ) {
    if (hwinfer_error* error = check_probe_view(desc->sink, kSinkBytes, "sink", stream)) {
      return error;
    }
  }
  if (stream != nullptr && desc->mode == HWINFER_PROBE_COPY && desc->size_bytes > 0 &&
      desc->src.buffer == desc->dst.buffer &&
      desc->src.offset_bytes < desc->dst.offset_bytes + desc->size_bytes &&
      desc->dst.offset_bytes < desc->src.offset_bytes + desc->size_bytes) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "bandwidth_probe: COPY source and destination overlap");
  }
  return nullptr;
}

// One READ pass: touches every byte of |src| and folds them into a checksum, 8 bytes at a time.
uint64_t read_pass(const unsigned char* src, uint64_t size_bytes) {
  uint64_t sum = 0;
  uint64_t i = 0;
  for (; i + 8 <= size_bytes; i += 8) {
    uint64_t word;
    std::memcpy(&word, src + i, sizeof(word));  // memcpy: no alignment assumption, no aliasing UB
    sum += word;
  }
  for (; i < size_bytes; ++i) sum += src[i];
  return sum;
}

// The kernel itself, single-threaded. DRIVER: launch a device kernel that streams through memory
// with wide, coalesced accesses and enough parallelism to saturate the memory system; the host
// times it between two events and divides the bytes it counted by the elapsed time.
hwinfer_error* bandwidth_probe(hwinfer_stream* stream, const hwinfer_bandwidth_probe_desc* desc) {
  if (stream == nullptr || desc == nullptr) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "bandwidth_probe: stream and desc must not be NULL");
  }
  if (hwinfer_error* error = check_probe(desc, stream)) return error;
  const size_t size = static_cast<size_t>(desc->size_bytes);
  switch (desc->mode) {
    case HWINFER_PROBE_READ: {
      const auto* src =
          static_cast<const unsigned char*>(desc->src.buffer->data) + desc->src.offset_bytes;
      uint64_t checksum = 0;
      for (uint32_t pass = 0; pass < desc->iterations; ++pass) {
        // Rotating between passes makes each pass's result depend on the previous one, so the
        // compiler cannot fold the passes into one.
        checksum = ((checksum << 1) | (checksum >> 63)) + read_pass(src, size);
      }
      // Writing the checksum out is what makes the reads observable.
      auto* sink = static_cast<unsigned char*>(desc->sink.buffer->data) + desc->sink.offset_bytes;
      for (uint64_t at = 0; at < kSinkBytes; at += sizeof(checksum)) {
        std::memcpy(sink + at, &checksum, sizeof(checksum));
      }
      break;
    }
    case HWINFER_PROBE_COPY: {
      const auto* src =
          static_cast<const unsigned char*>(desc->src.buffer->data) + desc->src.offset_bytes;
      auto* dst = static_cast<unsigned char*>(desc->dst.buffer->data) + desc->dst.offset_bytes;
      for (uint32_t pass = 0; pass < desc->iterations; ++pass) std::memcpy(dst, src, size);
      break;
    }
    case HWINFER_PROBE_WRITE: {
      auto* dst = static_cast<unsigned char*>(desc->dst.buffer->data) + desc->dst.offset_bytes;
      for (uint32_t pass = 0; pass < desc->iterations; ++pass) {
        std::memset(dst, static_cast<int>(pass & 0xffu), size);
      }
      break;
    }
    default:
      break;  // unreachable: check_probe rejected unknown modes
  }
  return nullptr;
}

}  // namespace

hwinfer_error* kernel_query(hwinfer_device* device, const hwinfer_kernel_desc* desc,
                            hwinfer_kernel_support* out) {
  if (device == nullptr || desc == nullptr || out == nullptr) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "kernel_query: device, desc and out must not be NULL");
  }
  if (desc->struct_size < sizeof(hwinfer_kernel_desc)) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "kernel_query: descriptor struct_size %u is too small",
                              desc->struct_size);
  }
  // hwinfer_set_support respects out->struct_size and fills the reason printf-style.
  switch (desc->kind) {
    case HWINFER_KERNEL_BANDWIDTH_PROBE: {
      // The common prefix tells us the kind; only then is it safe to view the full descriptor.
      const auto* probe = reinterpret_cast<const hwinfer_bandwidth_probe_desc*>(desc);
      hwinfer_error* why_not = check_probe(probe, nullptr);
      if (why_not == nullptr) {
        hwinfer_set_support(out, HWINFER_KERNEL_SUPPORTED, "%s", "");
      } else {
        // A descriptor we cannot run is an answer, not a failed call.
        hwinfer_set_support(out, HWINFER_KERNEL_UNSUPPORTED, "%s", why_not->message);
        why_not->destroy(why_not);
      }
      return nullptr;
    }
    case HWINFER_KERNEL_GEMM:
    case HWINFER_KERNEL_MATMUL_QUANTIZED:
    case HWINFER_KERNEL_ATTENTION_PREFILL:
    case HWINFER_KERNEL_ATTENTION_DECODE_PAGED:
    case HWINFER_KERNEL_KV_APPEND:
    case HWINFER_KERNEL_RMS_NORM:
    case HWINFER_KERNEL_ROPE:
    case HWINFER_KERNEL_SILU_MUL:
    case HWINFER_KERNEL_EMBEDDING:
      hwinfer_set_support(out, HWINFER_KERNEL_UNSUPPORTED, "%s",
                          "the template implements no kernels yet");
      return nullptr;
    default:
      // A kind newer than this plugin: UNSUPPORTED, never an error.
      hwinfer_set_support(out, HWINFER_KERNEL_UNSUPPORTED, "unknown kernel kind %u", desc->kind);
      return nullptr;
  }
}

const hwinfer_kernel_table* kernel_table() {
  // Filled once (thread-safe static initialisation); every slot not set here stays NULL.
  static const hwinfer_kernel_table table = [] {
    hwinfer_kernel_table t;
    std::memset(&t, 0, sizeof(t));
    t.struct_size = sizeof(t);
    t.bandwidth_probe = bandwidth_probe;
    // DRIVER: t.gemm = gemm; t.rms_norm = rms_norm; ... as you implement them.
    return t;
  }();
  return &table;
}

}  // namespace hwinfer_template
