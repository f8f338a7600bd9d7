// stream.cpp — the GPU plugins' streams: one non-blocking runtime stream each, the asynchronous
// copies, the error word kernels set on bad data (device_errors.h) and the per-stream scratch area.
//
// stream_synchronize copies the error word to pinned host memory on the stream, waits, and reports
// (then clears) what a kernel recorded, after any runtime error. Must not synchronize the whole
// device: other streams keep running. It also reports an aborted communicator whose all-reduces
// the stream ran (vendor_comm.h). While the stream is capturing (graph.cpp) the host copies
// and synchronize are refused, copy_d2d is recorded (a failed one spoils the capture) and scratch
// comes from the graph being captured, never from growing the stream's own.
#include <atomic>
#include <cinttypes>
#include <memory>

#include "device_errors.h"
#include "gpu_internal.h"
#include "vendor_comm.h"

namespace hwinfer::gpu {

namespace {

std::atomic<uint64_t> g_next_stream_id{1};

// Frees what stream_create made so far (any member may still be NULL).
void release_stream(hwinfer_stream* stream) {
  if (stream->stream != nullptr) (void)GPU(StreamDestroy)(stream->stream);
  if (stream->error_word != nullptr) (void)GPU(Free)(stream->error_word);
  if (stream->error_word_host != nullptr) (void)host_free(stream->error_word_host);
  if (stream->scratch != nullptr) (void)GPU(Free)(stream->scratch);
}

}  // namespace

hwinfer_error* GpuBackend::init_stream(hwinfer_device& device, hwinfer_stream& stream) {
  GPU_RETURN_IF_ERROR(use_device(&device, "stream_create"));
  stream.id = g_next_stream_id.fetch_add(1, std::memory_order_relaxed);
  hwinfer_error* error = [&]() -> hwinfer_error* {
    GPU_CHECK("stream_create", GPU(StreamCreateWithFlags)(&stream.stream, GPU(StreamNonBlocking)));
    void* word = nullptr;
    GPU_CHECK("stream_create", GPU(Malloc)(&word, sizeof(int32_t)));
    stream.error_word = static_cast<int32_t*>(word);
    GPU_CHECK("stream_create", GPU(MemsetAsync)(word, 0, sizeof(int32_t), stream.stream));
    void* host_word = nullptr;
    GPU_CHECK("stream_create", host_alloc(&host_word, sizeof(int32_t)));
    stream.error_word_host = static_cast<int32_t*>(host_word);
    *stream.error_word_host = 0;
    return nullptr;
  }();
  if (error != nullptr) release_stream(&stream);
  return error;
}

void GpuBackend::destroy_stream(hwinfer_stream& stream) {
  if (!use_device_quietly(stream.device, "stream_destroy")) return;
  if (stream.capture != nullptr) abandon_capture(&stream);
  (void)GPU(StreamSynchronize)(stream.stream);
  release_stream(&stream);
}

hwinfer_error* GpuBackend::synchronize(hwinfer_stream& stream) {
  GPU_RETURN_IF_ERROR(refuse_while_capturing(&stream, "stream_synchronize"));
  GPU_RETURN_IF_ERROR(use_device(stream.device, "stream_synchronize"));
  GPU_CHECK("stream_synchronize",
            GPU(MemcpyAsync)(stream.error_word_host, stream.error_word, sizeof(int32_t),
                             GPU(MemcpyDeviceToHost), stream.stream));
  GPU_CHECK("stream_synchronize", GPU(StreamSynchronize)(stream.stream));
  const int32_t code = *stream.error_word_host;
  if (code == kDeviceOk) return comm_error_after_sync(&stream);  // a kernel's error goes first
  *stream.error_word_host = 0;
  GPU_CHECK("stream_synchronize",
            GPU(MemsetAsync)(stream.error_word, 0, sizeof(int32_t), stream.stream));
  return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT, "%s %s", kPluginName,
                            device_error_message(code));
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

hwinfer_error* GpuBackend::copy_h2d(hwinfer_stream& stream, const void* src, hwinfer_buffer& dst,
                                    uint64_t dst_offset, uint64_t size_bytes) {
  GPU_RETURN_IF_ERROR(refuse_while_capturing(&stream, "copy_h2d"));
  GPU_RETURN_IF_ERROR(use_device(stream.device, "copy_h2d"));
  GPU_CHECK("copy_h2d", GPU(MemcpyAsync)(dst.device_ptr + dst_offset, src, size_bytes,
                                         GPU(MemcpyHostToDevice), stream.stream));
  return nullptr;
}

hwinfer_error* GpuBackend::copy_d2h(hwinfer_stream& stream, hwinfer_buffer& src,
                                    uint64_t src_offset, void* dst, uint64_t size_bytes) {
  GPU_RETURN_IF_ERROR(refuse_while_capturing(&stream, "copy_d2h"));
  GPU_RETURN_IF_ERROR(use_device(stream.device, "copy_d2h"));
  GPU_CHECK("copy_d2h", GPU(MemcpyAsync)(dst, src.device_ptr + src_offset, size_bytes,
                                         GPU(MemcpyDeviceToHost), stream.stream));
  return nullptr;
}

// Recorded while capturing; the kit passes a failure to after_enqueue, which spoils the capture.
hwinfer_error* GpuBackend::copy_d2d(hwinfer_stream& stream, hwinfer_buffer& src,
                                    uint64_t src_offset, hwinfer_buffer& dst, uint64_t dst_offset,
                                    uint64_t size_bytes) {
  GPU_RETURN_IF_ERROR(use_device(stream.device, "copy_d2d"));
  GPU_CHECK("copy_d2d", GPU(MemcpyAsync)(dst.device_ptr + dst_offset, src.device_ptr + src_offset,
                                         size_bytes, GPU(MemcpyDeviceToDevice), stream.stream));
  return nullptr;
}

}  // namespace hwinfer::gpu
