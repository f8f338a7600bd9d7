// dispatch.h — recording work on a stream (Recording) and launching the embedded compute shaders.
//
// THE DISPATCH CONVENTION (every kernel, now and later, follows it):
//   * Each tensor operand is one storage-buffer binding (set 0, binding = operand index in the
//     shader). The binding starts at the view's offset_bytes rounded DOWN to the device's
//     minStorageBufferOffsetAlignment and runs to the end of the buffer (capped at
//     maxStorageBufferRange). The remainder (offset_bytes - bound offset) is passed to the shader
//     in push constants, in ELEMENTS of the operand's dtype (views are element-aligned; byte
//     kernels such as the probe pass whole 32-bit words and touch the edges by other means).
//   * Shapes and strides go in push constants too, strides in elements, innermost first as the
//     shader needs them; at most 128 bytes of push constants (the Vulkan minimum).
//   * An optional operand that is absent is bound to another operand's buffer (any valid binding)
//     and a push-constant flag tells the shader to ignore it.
//   * Shaders need no optional device feature (device_requirements.h): 16-bit and 8-bit values
//     through 32-bit words, no subgroup operations, at most 16 KiB of shared memory (Vulkan's
//     guaranteed minimum), workgroups of 256 invocations (checked per device at plugin_init).
//   * Shaders walk rows with a stride of gl_NumWorkGroups, so the host may cap the workgroup count
//     at the device's maxComputeWorkGroupCount.
//   * Each enqueue records its own command buffer (so a failed enqueue leaves nothing behind); the
//     stream submits the ones waiting together in one vkQueueSubmit (flush) when the GPU has
//     nothing left to run, when kMaxPendingCommandBuffers wait, or when the host needs them run.
//   * Every command buffer begins with a full memory barrier (so work of earlier submissions on the
//     shared queue is complete and visible) and ends with one that makes device writes visible to
//     the host; within a command buffer, Recording::barrier() separates dependent commands.
//
// Must not submit anything itself except through Recording::submit().
#ifndef HWINFER_BACKENDS_VULKAN_DISPATCH_H_
#define HWINFER_BACKENDS_VULKAN_DISPATCH_H_

#include <cstdint>
#include <initializer_list>
#include <utility>
#include <vector>

#include "vk_internal.h"

namespace hwinfer::vulkan {

// The embedded shaders (shaders/*.comp).
enum class ShaderId : uint32_t {
  kProbeRead = 0,
  kRmsNorm = 1,
  kSiluMul = 2,
  kEmbedding = 3,
  kRope = 4,
  kGemm = 5,
  kKvAppend = 6,
  kQuantizeQ8 = 7,
  kMatmulQ = 8,
  kAttentionDecode = 9,
  kAttentionReduce = 10,
  kAttentionPrefill = 11,
  kGemv = 12,
  kMatmulQGemv = 13,
  kQuantizeX = 15,
};

// The shaders compiled once per weight type (weight_shader_families in CMakeLists.txt, same order).
enum class WeightShaderFamily : uint32_t {
  kMatmulQDequant = 0,  // shaders/matmul_q_dequant.comp
  kMatmulQfGemv = 1,    // shaders/matmul_qf_gemv.comp
  kMatmulQfRows = 2,    // shaders/matmul_qf_rows.comp
};

// The ShaderId of |family|'s variant for weight dtype |dtype| (HWINFER_DTYPE_*, < 64); a type the
// build has no variant for gets INTERNAL from dispatch().
constexpr ShaderId weight_shader(WeightShaderFamily family, uint32_t dtype) {
  return static_cast<ShaderId>(1000u + 64u * static_cast<uint32_t>(family) + dtype);
}

// One storage-buffer operand: |buffer| bound at |offset_bytes| rounded down; |extent_bytes| from
// offset_bytes is what the shader may touch (checked against maxStorageBufferRange).
struct Operand {
  const hwinfer_buffer* buffer = nullptr;
  uint64_t offset_bytes = 0;
  uint64_t extent_bytes = 0;
};

// The byte remainder Operand |o| is bound with (offset_bytes - the aligned-down offset).
uint64_t binding_remainder(const hwinfer_device* device, const Operand& o);

// One command buffer being recorded on a stream. Resources added to it (transient buffers,
// descriptor pools) live until the stream's timeline passes its submission; without submit()
// they are released at destruction.
class Recording {
 public:
  explicit Recording(hwinfer_stream* stream) : stream_(stream) {}
  ~Recording();
  Recording(const Recording&) = delete;
  Recording& operator=(const Recording&) = delete;

  // Allocates and begins the command buffer, with the leading barrier.
  hwinfer_error* begin(const char* what);
  VkCommandBuffer command_buffer() const { return submission_.command_buffer; }
  const DeviceFunctions& fn() const { return stream_->device->fn; }

  // A full memory barrier between the commands recorded so far and the next ones.
  void barrier();
  // A plugin-owned buffer that lives until this work has run (staging, scratch).
  hwinfer_error* transient(uint64_t size_bytes, uint32_t memory_kind, hwinfer_buffer** out);
  // A zeroed host-visible 4-byte word (barrier included) a shader sets non-zero when it finds bad
  // data; when this work retires a non-zero word becomes INVALID_ARGUMENT |message| (a string
  // literal) returned by the stream's next synchronize.
  hwinfer_error* error_word(const char* message, Operand* out);
  // Binds |shader| with |operands| (in binding order) and |push| constants, and dispatches
  // |groups_x| x |groups_y| workgroups (each capped at the device's limit).
  hwinfer_error* dispatch(ShaderId shader, std::initializer_list<Operand> operands,
                          const void* push, uint32_t push_bytes, uint64_t groups_x,
                          uint64_t groups_y = 1);
  // Ends the command buffer and queues it on the stream (stream->pending); flushes when due.
  hwinfer_error* submit();

 private:
  hwinfer_stream* stream_;
  const char* what_ = "";
  Submission submission_;
  bool submitted_ = false;
};

// Command buffers a stream holds before it submits them without being asked to.
constexpr size_t kMaxPendingCommandBuffers = 32;

// Submits every pending command buffer of |stream| in one vkQueueSubmit that waits for the
// stream's pending event waits and signals the stream's next timeline value (stream->submitted
// afterwards). A no-op with nothing pending.
hwinfer_error* flush(hwinfer_stream* stream);

// Frees the resources of a finished submission (stream.cpp's retire, and ~Recording).
void release_submission(hwinfer_stream* stream, Submission& submission);

// Destroys every pipeline of |device| (device_close).
void destroy_pipelines(hwinfer_device* device);

}  // namespace hwinfer::vulkan

#endif  // HWINFER_BACKENDS_VULKAN_DISPATCH_H_
