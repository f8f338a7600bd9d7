// stream.cpp — the GPU plugins' streams: one non-blocking runtime stream each, the asynchronous
// copies, the error word kernels set on bad data (device_errors.h) and the per-stream scratch area.
//
// stream_synchronize copies the error word to pinned host memory on the stream, waits, and reports
// (then clears) what a kernel recorded, after any runtime error. Must not synchronize the whole
// device: other streams keep running. While the stream is capturing (graph.cpp) the host copies
// and synchronize are refused, copy_d2d is recorded (a failed one spoils the capture) and scratch
// comes from the graph being captured, never from growing the stream's own.
#include <atomic>
#include <cinttypes>
#include <memory>

#include "device_errors.h"
#include "gpu_internal.h"

namespace hwinfer::gpu {

namespace {

hwinfer_error* check_buffer_range(const hwinfer_buffer* buffer, uint64_t offset, uint64_t size,
                                  const char* what) {
  return backend::check_byte_range(kPluginName, buffer->size_bytes, offset, size, what);
}

hwinfer_error* require_stream_device(const hwinfer_stream* stream, const hwinfer_buffer* buffer,
                                     const char* what) {
  if (buffer->device == stream->device) return nullptr;
  return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                            "%s %s: the buffer belongs to another device than the stream",
                            kPluginName, what);
}

std::atomic<uint64_t> g_next_stream_id{1};

// Frees what stream_create made so far (any member may still be NULL).
void release_stream(hwinfer_stream* stream) {
  if (stream->stream != nullptr) (void)GPU(StreamDestroy)(stream->stream);
  if (stream->error_word != nullptr) (void)GPU(Free)(stream->error_word);
  if (stream->error_word_host != nullptr) (void)host_free(stream->error_word_host);
  if (stream->scratch != nullptr) (void)GPU(Free)(stream->scratch);
}

}  // namespace

hwinfer_error* stream_create(hwinfer_device* device, hwinfer_stream** out) {
  return guarded("stream_create", [&]() -> hwinfer_error* {
    GPU_RETURN_IF_ERROR(require_non_null(device, "stream_create: device"));
    GPU_RETURN_IF_ERROR(require_non_null(out, "stream_create: out"));
    GPU_RETURN_IF_ERROR(use_device(device, "stream_create"));
    auto stream = std::make_unique<hwinfer_stream>();
    stream->device = device;
    stream->id = g_next_stream_id.fetch_add(1, std::memory_order_relaxed);
    hwinfer_error* error = [&]() -> hwinfer_error* {
      GPU_CHECK("stream_create",
                GPU(StreamCreateWithFlags)(&stream->stream, GPU(StreamNonBlocking)));
      void* word = nullptr;
      GPU_CHECK("stream_create", GPU(Malloc)(&word, sizeof(int32_t)));
      stream->error_word = static_cast<int32_t*>(word);
      GPU_CHECK("stream_create", GPU(MemsetAsync)(word, 0, sizeof(int32_t), stream->stream));
      void* host_word = nullptr;
      GPU_CHECK("stream_create", host_alloc(&host_word, sizeof(int32_t)));
      stream->error_word_host = static_cast<int32_t*>(host_word);
      *stream->error_word_host = 0;
      return nullptr;
    }();
    if (error != nullptr) {
      release_stream(stream.get());
      return error;
    }
    ++device->live_streams;
    *out = stream.release();
    return nullptr;
  });
}

void stream_destroy(hwinfer_stream* stream) {
  if (stream == nullptr) return;
  try {
    if (use_device(stream->device, "stream_destroy") == nullptr) {
      if (stream->capture != nullptr) abandon_capture(stream);
      (void)GPU(StreamSynchronize)(stream->stream);
      release_stream(stream);
    }
    --stream->device->live_streams;
    delete stream;
  } catch (...) {
    // Nothing may escape across the ABI.
  }
}

hwinfer_error* stream_synchronize(hwinfer_stream* stream) {
  return guarded("stream_synchronize", [&]() -> hwinfer_error* {
    GPU_RETURN_IF_ERROR(require_non_null(stream, "stream_synchronize: stream"));
    GPU_RETURN_IF_ERROR(refuse_while_capturing(stream, "stream_synchronize"));
    GPU_RETURN_IF_ERROR(use_device(stream->device, "stream_synchronize"));
    GPU_CHECK("stream_synchronize",
              GPU(MemcpyAsync)(stream->error_word_host, stream->error_word, sizeof(int32_t),
                               GPU(MemcpyDeviceToHost), stream->stream));
    GPU_CHECK("stream_synchronize", GPU(StreamSynchronize)(stream->stream));
    const int32_t code = *stream->error_word_host;
    if (code == kDeviceOk) return nullptr;
    *stream->error_word_host = 0;
    GPU_CHECK("stream_synchronize",
              GPU(MemsetAsync)(stream->error_word, 0, sizeof(int32_t), stream->stream));
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT, "%s %s", kPluginName,
                              device_error_message(code));
  });
}

hwinfer_error* stream_scratch(hwinfer_stream* stream, uint64_t bytes, uint8_t** out) {
  if (stream->capture != nullptr) return capture_scratch(stream, bytes, out);
  if (bytes > stream->scratch_bytes) {
    GPU_CHECK("stream scratch", GPU(StreamSynchronize)(stream->stream));
    if (stream->scratch != nullptr) (void)GPU(Free)(stream->scratch);
    stream->scratch = nullptr;
    stream->scratch_bytes = 0;
    const uint64_t grown = bytes < (1u << 20) ? (1u << 20) : bytes;
    void* pointer = nullptr;
    GPU_CHECK("stream scratch", GPU(Malloc)(&pointer, grown));
    stream->scratch = static_cast<uint8_t*>(pointer);
    stream->scratch_bytes = grown;
  }
  *out = stream->scratch;
  return nullptr;
}

hwinfer_error* copy_h2d(hwinfer_stream* stream, const void* src, hwinfer_buffer* dst,
                        uint64_t dst_offset, uint64_t size_bytes) {
  return guarded("copy_h2d", [&]() -> hwinfer_error* {
    GPU_RETURN_IF_ERROR(require_non_null(stream, "copy_h2d: stream"));
    GPU_RETURN_IF_ERROR(refuse_while_capturing(stream, "copy_h2d"));
    GPU_RETURN_IF_ERROR(require_non_null(dst, "copy_h2d: dst"));
    GPU_RETURN_IF_ERROR(check_buffer_range(dst, dst_offset, size_bytes, "copy_h2d (dst)"));
    if (size_bytes == 0) return nullptr;
    GPU_RETURN_IF_ERROR(require_non_null(src, "copy_h2d: src"));
    GPU_RETURN_IF_ERROR(require_stream_device(stream, dst, "copy_h2d"));
    GPU_RETURN_IF_ERROR(use_device(stream->device, "copy_h2d"));
    GPU_CHECK("copy_h2d", GPU(MemcpyAsync)(dst->device_ptr + dst_offset, src, size_bytes,
                                           GPU(MemcpyHostToDevice), stream->stream));
    return nullptr;
  });
}

hwinfer_error* copy_d2h(hwinfer_stream* stream, hwinfer_buffer* src, uint64_t src_offset, void* dst,
                        uint64_t size_bytes) {
  return guarded("copy_d2h", [&]() -> hwinfer_error* {
    GPU_RETURN_IF_ERROR(require_non_null(stream, "copy_d2h: stream"));
    GPU_RETURN_IF_ERROR(refuse_while_capturing(stream, "copy_d2h"));
    GPU_RETURN_IF_ERROR(require_non_null(src, "copy_d2h: src"));
    GPU_RETURN_IF_ERROR(check_buffer_range(src, src_offset, size_bytes, "copy_d2h (src)"));
    if (size_bytes == 0) return nullptr;
    GPU_RETURN_IF_ERROR(require_non_null(dst, "copy_d2h: dst"));
    GPU_RETURN_IF_ERROR(require_stream_device(stream, src, "copy_d2h"));
    GPU_RETURN_IF_ERROR(use_device(stream->device, "copy_d2h"));
    GPU_CHECK("copy_d2h", GPU(MemcpyAsync)(dst, src->device_ptr + src_offset, size_bytes,
                                           GPU(MemcpyDeviceToHost), stream->stream));
    return nullptr;
  });
}

namespace {

// copy_d2d's checks and enqueue (copy_d2d adds the spoiling of a capture).
hwinfer_error* enqueue_copy_d2d(hwinfer_stream* stream, hwinfer_buffer* src, uint64_t src_offset,
                                hwinfer_buffer* dst, uint64_t dst_offset, uint64_t size_bytes) {
  return guarded("copy_d2d", [&]() -> hwinfer_error* {
    GPU_RETURN_IF_ERROR(require_non_null(stream, "copy_d2d: stream"));
    GPU_RETURN_IF_ERROR(require_non_null(src, "copy_d2d: src"));
    GPU_RETURN_IF_ERROR(require_non_null(dst, "copy_d2d: dst"));
    GPU_RETURN_IF_ERROR(check_buffer_range(src, src_offset, size_bytes, "copy_d2d (src)"));
    GPU_RETURN_IF_ERROR(check_buffer_range(dst, dst_offset, size_bytes, "copy_d2d (dst)"));
    if (size_bytes == 0) return nullptr;
    if (src == dst && src_offset < dst_offset + size_bytes &&
        dst_offset < src_offset + size_bytes) {
      return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                                "%s copy_d2d: source [%" PRIu64 ", +%" PRIu64
                                ") and destination [%" PRIu64 ", ...) overlap within one buffer",
                                kPluginName, src_offset, size_bytes, dst_offset);
    }
    GPU_RETURN_IF_ERROR(require_stream_device(stream, src, "copy_d2d"));
    GPU_RETURN_IF_ERROR(require_stream_device(stream, dst, "copy_d2d"));
    GPU_RETURN_IF_ERROR(use_device(stream->device, "copy_d2d"));
    GPU_CHECK("copy_d2d",
              GPU(MemcpyAsync)(dst->device_ptr + dst_offset, src->device_ptr + src_offset,
                               size_bytes, GPU(MemcpyDeviceToDevice), stream->stream));
    return nullptr;
  });
}

}  // namespace

hwinfer_error* copy_d2d(hwinfer_stream* stream, hwinfer_buffer* src, uint64_t src_offset,
                        hwinfer_buffer* dst, uint64_t dst_offset, uint64_t size_bytes) {
  return spoil_capture_on_error(
      stream, enqueue_copy_d2d(stream, src, src_offset, dst, dst_offset, size_bytes));
}

}  // namespace hwinfer::gpu
