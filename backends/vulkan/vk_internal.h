// vk_internal.h — the Vulkan backend's handle types (on the plugin kit's bases), the functions its
// files share, and its backend struct for the kit.
//
// plugin.h only declares the opaque handle structs; this header defines them. Nothing here crosses
// the ABI or is exported: the kit makes the C table and the one visible symbol,
// hwinfer_plugin_query (plugin_entry.cpp), and guards every slot.
//
// Object model:
//   hwinfer_plugin  the dlopen()ed loader, one VkInstance, and the physical devices that qualify
//                   (Vulkan 1.1+, a compute queue, timeline semaphores); or none, with the reason.
//   hwinfer_device  one VkDevice with one compute queue (shared by all streams, under a mutex),
//                   the sub-allocator (memory.cpp) and the compute pipelines (dispatch.cpp).
//   hwinfer_buffer  one VkBuffer bound at an offset inside a large VkDeviceMemory block.
//   hwinfer_stream  a command pool, a timeline semaphore and the submissions still in flight;
//                   every enqueue records one command buffer and submits it (stream.cpp).
//   hwinfer_event   a (stream timeline, value) pair plus one timestamp query (event.cpp).
#ifndef HWINFER_BACKENDS_VULKAN_VK_INTERNAL_H_
#define HWINFER_BACKENDS_VULKAN_VK_INTERNAL_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "hwinfer/kit/check_context.h"
#include "hwinfer/kit/handles.h"
#include "hwinfer/kit/plugin_errors.h"
#include "hwinfer/plugin.h"
#include "hwinfer/plugin_support.h"
#include "vk_loader.h"

#ifndef HWINFER_VULKAN_PLUGIN_VERSION
#define HWINFER_VULKAN_PLUGIN_VERSION "0.0.0-unknown"
#endif

namespace hwinfer::vulkan {

inline constexpr const char* kPluginName = "vulkan";

// What plugin_init learnt about one physical device that qualifies.
struct PhysicalDevice {
  VkPhysicalDevice handle = VK_NULL_HANDLE;
  hwinfer_device_info info{};  // the static part; memory_free_bytes is filled per query
  uint32_t api_version = 0;
  uint32_t queue_family = 0;            // a family with VK_QUEUE_COMPUTE_BIT
  bool timeline_via_extension = false;  // Vulkan 1.1: enable VK_KHR_timeline_semaphore
  bool has_memory_budget = false;       // VK_EXT_memory_budget
  uint64_t min_storage_offset_alignment = 1;
  uint64_t max_storage_buffer_range = 0;
  uint64_t max_memory_allocation = 0;
  uint32_t max_workgroup_count[3] = {};
  float timestamp_period_ns = 0;      // ns per timestamp tick
  uint32_t timestamp_valid_bits = 0;  // of the queue family; 0 = no timestamps
  // VkDeviceMemory this plugin holds on the device (every open handle, every memory type): the
  // free-memory estimate without VK_EXT_memory_budget. Shared so PhysicalDevice stays copyable.
  std::shared_ptr<std::atomic<uint64_t>> allocated_bytes =
      std::make_shared<std::atomic<uint64_t>>(0);
};

// One block of VkDeviceMemory that buffers are sub-allocated from (first fit).
struct MemoryBlock {
  VkDeviceMemory memory = VK_NULL_HANDLE;
  uint64_t size_bytes = 0;
  uint8_t* mapped = nullptr;          // persistently mapped when the type is host-visible
  std::map<uint64_t, uint64_t> free;  // offset -> size of each free range (coalesced)
  uint64_t used_bytes = 0;
};

// The blocks of one memory type.
struct MemoryPool {
  uint32_t type_index = 0;
  bool mappable = false;  // HOST_VISIBLE | HOST_COHERENT
  std::vector<std::unique_ptr<MemoryBlock>> blocks;
};

// A timeline semaphore shared by a stream and the events recorded on it, so an event stays valid
// after its stream is destroyed. Destroyed with the last reference (never while work may still
// signal it: stream_destroy synchronizes first).
struct Timeline {
  hwinfer_device* device = nullptr;
  VkSemaphore semaphore = VK_NULL_HANDLE;
  ~Timeline();
};

// The last leg of an asynchronous D2H copy: once |timeline| reaches |value|, the staging bytes go
// to the caller's host pointer and the staging buffer is freed (finish_host_copies, stream.cpp).
struct HostCopy {
  std::shared_ptr<Timeline> timeline;
  uint64_t value = 0;
  hwinfer_buffer* staging = nullptr;  // owned
  void* dst = nullptr;
  uint64_t size_bytes = 0;
};

struct Pipeline {
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkPipeline pipeline = VK_NULL_HANDLE;
  uint32_t n_bindings = 0;
};

}  // namespace hwinfer::vulkan

struct hwinfer_plugin : hwinfer::kit::PluginBase {  // device_count = devices.size()
  hwinfer::vulkan::InstanceFunctions vk;
  VkInstance instance = VK_NULL_HANDLE;
  std::string unavailable_reason;  // why there are no devices ("" when there are)
  std::vector<hwinfer::vulkan::PhysicalDevice> devices;
  hwinfer_plugin() = default;
  hwinfer_plugin(const hwinfer_plugin&) = delete;
  hwinfer_plugin& operator=(const hwinfer_plugin&) = delete;
  ~hwinfer_plugin();  // destroys the instance, closes the loader (plugin_entry.cpp)
};

// max_allocation_bytes: the physical device's maxStorageBufferRange.
struct hwinfer_device : hwinfer::kit::DeviceBase {
  const hwinfer::vulkan::PhysicalDevice* physical = nullptr;
  VkDevice device = VK_NULL_HANDLE;
  hwinfer::vulkan::DeviceFunctions fn;
  VkQueue queue = VK_NULL_HANDLE;
  std::mutex queue_mutex;           // vkQueueSubmit on the one queue every stream shares
  uint64_t alignment_bytes = 256;   // max(minStorageBufferOffsetAlignment, 256)
  int32_t device_memory_type = -1;  // DEVICE_LOCAL preferred
  int32_t host_memory_type = -1;    // HOST_VISIBLE | HOST_COHERENT
  std::mutex memory_mutex;          // guards |pools|
  std::map<uint32_t, hwinfer::vulkan::MemoryPool> pools;    // by memory type index
  std::mutex pipeline_mutex;                                // guards |pipelines|
  std::map<uint32_t, hwinfer::vulkan::Pipeline> pipelines;  // by ShaderId
  std::mutex host_copy_mutex;                               // guards |host_copies|
  std::deque<hwinfer::vulkan::HostCopy> host_copies;        // pending D2H last legs, any stream
};

struct hwinfer_buffer : hwinfer::kit::BufferBase {
  VkBuffer buffer = VK_NULL_HANDLE;
  uint64_t vk_size_bytes = 0;  // the VkBuffer's size (size_bytes rounded up to 4)
  hwinfer::vulkan::MemoryBlock* block = nullptr;
  uint32_t memory_type = 0;
  uint64_t block_offset = 0;
  uint64_t block_bytes = 0;   // bytes taken from the block
  uint8_t* mapped = nullptr;  // host pointer when the memory is mappable, else NULL
};

namespace hwinfer::vulkan {

// A submitted command buffer and what must live until the GPU has passed it.
struct Submission {
  uint64_t value = 0;  // the stream's timeline value it signals
  VkCommandBuffer command_buffer = VK_NULL_HANDLE;
  std::vector<hwinfer_buffer*> transients;  // staging and scratch buffers, freed at retire
  std::vector<VkDescriptorPool> descriptor_pools;
  // Host-visible words a shader sets non-zero on a data error found while running (an embedding
  // id outside the vocab); checked when the submission retires, each with its error message.
  std::vector<std::pair<hwinfer_buffer*, const char*>> error_words;
};

}  // namespace hwinfer::vulkan

struct hwinfer_stream : hwinfer::kit::StreamBase {
  VkCommandPool command_pool = VK_NULL_HANDLE;
  std::shared_ptr<hwinfer::vulkan::Timeline> timeline;
  uint64_t submitted = 0;  // the last value a submission signals
  // Recorded command buffers not submitted yet (dispatch.h, flush): submitted together, in order,
  // as one vkQueueSubmit when the GPU is idle, when kMaxPendingCommandBuffers wait, or when the
  // host needs the work to run (synchronize, event record or wait, D2H).
  std::vector<hwinfer::vulkan::Submission> pending;
  std::deque<hwinfer::vulkan::Submission> in_flight;
  // Event waits for the next submission (kept alive until it is submitted).
  std::vector<std::pair<std::shared_ptr<hwinfer::vulkan::Timeline>, uint64_t>> pending_waits;
  hwinfer_error* pending_error = nullptr;  // first error found while running
};

struct hwinfer_event : hwinfer::kit::EventBase {
  // The timeline of the stream it was last recorded on; complete when it reaches |value|.
  std::shared_ptr<hwinfer::vulkan::Timeline> timeline;
  VkQueryPool query_pool = VK_NULL_HANDLE;  // one timestamp; NULL without timestamp support
  uint64_t value = 0;                       // 0 = never recorded
};

namespace hwinfer::vulkan {

// Sends one printf-style message to the host's log callback, if there is one. Never prints.
void log_message(const hwinfer_host_api* host, uint32_t level, const char* format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

// INTERNAL (or OUT_OF_MEMORY for the two out-of-memory results) "vulkan <what>: <call> failed:
// <VkResult>".
hwinfer_error* vk_error(VkResult result, const char* what, const char* call);

// device.cpp
// Fills plugin->devices from the instance (logging why a device is left out).
void enumerate_devices(hwinfer_plugin* plugin);

// memory.cpp
// A buffer of the plugin's own (staging, scratch): no ABI checks, not counted as live.
hwinfer_error* allocate_buffer(hwinfer_device* device, uint64_t size_bytes, uint32_t memory_kind,
                               hwinfer_buffer** out);
void release_buffer(hwinfer_buffer* buffer);
// Frees every block of |device| (device_close, after every buffer is gone).
void release_memory_pools(hwinfer_device* device);

// stream.cpp
// Completes every pending D2H copy of |device| whose submission has run (any stream): staging bytes
// to the host pointer, staging freed. Runs wherever the host may look at memory next (every
// synchronize, a completed event query, every enqueue). With |discard|, frees them all without
// copying (device_close after a failed wait).
void finish_host_copies(hwinfer_device* device, bool discard = false);
// Blocks until |semaphore| reaches |value|; a failed wait (device lost) is an error naming |what|.
hwinfer_error* wait_timeline(hwinfer_device* device, VkSemaphore semaphore, uint64_t value,
                             const char* what);

// kernels.cpp: the shared checks' context for |device|, with VulkanBackend::limits as the hook
// (kit::limits_hook).
backend::CheckContext check_context(const hwinfer_device* device, bool require_buffers);

// The Vulkan plugin for the plugin kit (hwinfer/kit/plugin_api.h says what each member is for):
// the kit checks every argument, counts live objects and guards every slot; these run on valid
// handles. Each is defined in the file named.
struct VulkanBackend {
  static constexpr const char* kName = kPluginName;
  static constexpr const char* kVersion = HWINFER_VULKAN_PLUGIN_VERSION;

  // plugin_entry.cpp: the loader and the instance
  static hwinfer_error* init(const hwinfer_host_api& host, const hwinfer_option* options,
                             size_t n_options, std::unique_ptr<hwinfer_plugin>* out);
  // device.cpp
  static hwinfer_error* device_info(const hwinfer_plugin& plugin, uint32_t ordinal,
                                    hwinfer_device_info& info);
  static hwinfer_error* open_device(hwinfer_plugin& plugin, uint32_t ordinal,
                                    const hwinfer_option* options, size_t n_options,
                                    std::unique_ptr<hwinfer_device>* out);
  static void close_device(hwinfer_device& device);
  // memory.cpp
  static hwinfer_error* allocate(hwinfer_device& device, hwinfer_buffer& buffer);
  static void release(hwinfer_buffer& buffer);
  static hwinfer_error* map(hwinfer_buffer& buffer, void** out_host_ptr);
  static backend::CheckContext check_context(const hwinfer_device& device, bool require_buffers) {
    return vulkan::check_context(&device, require_buffers);
  }
  // stream.cpp
  static hwinfer_error* init_stream(hwinfer_device& device, hwinfer_stream& stream);
  static void destroy_stream(hwinfer_stream& stream);
  static hwinfer_error* synchronize(hwinfer_stream& stream);
  static hwinfer_error* copy_h2d(hwinfer_stream& stream, const void* src, hwinfer_buffer& dst,
                                 uint64_t dst_offset, uint64_t size_bytes);
  static hwinfer_error* copy_d2h(hwinfer_stream& stream, hwinfer_buffer& src, uint64_t src_offset,
                                 void* dst, uint64_t size_bytes);
  static hwinfer_error* copy_d2d(hwinfer_stream& stream, hwinfer_buffer& src, uint64_t src_offset,
                                 hwinfer_buffer& dst, uint64_t dst_offset, uint64_t size_bytes);
  // event.cpp
  static hwinfer_error* init_event(hwinfer_device& device, hwinfer_event& event);
  static void destroy_event(hwinfer_event& event);
  static hwinfer_error* record(hwinfer_event& event, hwinfer_stream& stream);
  static hwinfer_error* wait(hwinfer_stream& stream, hwinfer_event& event);
  static hwinfer_error* synchronize(hwinfer_event& event);
  static hwinfer_error* is_complete(hwinfer_event& event, bool* complete);
  static hwinfer_error* elapsed_ns(hwinfer_event& start, hwinfer_event& end, uint64_t* out);
  // kernels*.cpp: what this backend cannot run of what the shared checks accept (kernel_limits.h)
  static hwinfer_error* limits(const backend::CheckContext& context, const hwinfer_gemm_desc& d);
  static hwinfer_error* limits(const backend::CheckContext& context,
                               const hwinfer_matmul_quantized_desc& d);
  static hwinfer_error* limits(const backend::CheckContext& context,
                               const hwinfer_attention_prefill_desc& d);
  static hwinfer_error* limits(const backend::CheckContext& context,
                               const hwinfer_attention_decode_paged_desc& d);
  static hwinfer_error* limits(const backend::CheckContext& context,
                               const hwinfer_kv_append_desc& d);
  static hwinfer_error* limits(const backend::CheckContext& context,
                               const hwinfer_rms_norm_desc& d);
  static hwinfer_error* limits(const backend::CheckContext& context, const hwinfer_rope_desc& d);
  static hwinfer_error* limits(const backend::CheckContext& context,
                               const hwinfer_silu_mul_desc& d);
  static hwinfer_error* limits(const backend::CheckContext& context,
                               const hwinfer_embedding_desc& d);
  // kernels*.cpp: every kind but rope_kv_append
  static hwinfer_error* enqueue(hwinfer_stream& stream, const hwinfer_gemm_desc& desc);
  static hwinfer_error* enqueue(hwinfer_stream& stream, const hwinfer_matmul_quantized_desc& desc);
  static hwinfer_error* enqueue(hwinfer_stream& stream, const hwinfer_attention_prefill_desc& desc);
  static hwinfer_error* enqueue(hwinfer_stream& stream,
                                const hwinfer_attention_decode_paged_desc& desc);
  static hwinfer_error* enqueue(hwinfer_stream& stream, const hwinfer_kv_append_desc& desc);
  static hwinfer_error* enqueue(hwinfer_stream& stream, const hwinfer_rms_norm_desc& desc);
  static hwinfer_error* enqueue(hwinfer_stream& stream, const hwinfer_rope_desc& desc);
  static hwinfer_error* enqueue(hwinfer_stream& stream, const hwinfer_silu_mul_desc& desc);
  static hwinfer_error* enqueue(hwinfer_stream& stream, const hwinfer_embedding_desc& desc);
  static hwinfer_error* enqueue(hwinfer_stream& stream, const hwinfer_bandwidth_probe_desc& desc);
};

}  // namespace hwinfer::vulkan

#endif  // HWINFER_BACKENDS_VULKAN_VK_INTERNAL_H_
