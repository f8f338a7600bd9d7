// dispatch.cpp — see dispatch.h: Recording (one command buffer per enqueue), the pipeline cache
// (one compute pipeline per embedded shader, created on first use), and descriptor binding by the
// dispatch convention.
#include "dispatch.h"

#include <algorithm>
#include <cinttypes>

#include "device_requirements.h"
#include "shaders.h"

namespace hwinfer::vulkan {

namespace {

struct ShaderInfo {
  const uint32_t* code;
  size_t words;
  uint32_t n_bindings;
};

ShaderInfo shader_info(ShaderId id) {
  switch (id) {
    case ShaderId::kProbeRead:
      return {shaders::k_probe_read_spv, shaders::k_probe_read_spv_words, 2};
    case ShaderId::kRmsNorm:
      return {shaders::k_rms_norm_spv, shaders::k_rms_norm_spv_words, 4};
    case ShaderId::kSiluMul:
      return {shaders::k_silu_mul_spv, shaders::k_silu_mul_spv_words, 3};
    case ShaderId::kEmbedding:
      return {shaders::k_embedding_spv, shaders::k_embedding_spv_words, 4};
    case ShaderId::kRope:
      return {shaders::k_rope_spv, shaders::k_rope_spv_words, 4};
    case ShaderId::kGemm:
      return {shaders::k_gemm_spv, shaders::k_gemm_spv_words, 3};
    case ShaderId::kKvAppend:
      return {shaders::k_kv_append_spv, shaders::k_kv_append_spv_words, 5};
    case ShaderId::kQuantizeQ8:
      return {shaders::k_quantize_q8_spv, shaders::k_quantize_q8_spv_words, 2};
    case ShaderId::kMatmulQ:
      return {shaders::k_matmul_q_spv, shaders::k_matmul_q_spv_words, 3};
    case ShaderId::kAttentionDecode:
      return {shaders::k_attention_decode_spv, shaders::k_attention_decode_spv_words, 9};
    case ShaderId::kAttentionReduce:
      return {shaders::k_attention_reduce_spv, shaders::k_attention_reduce_spv_words, 4};
    case ShaderId::kAttentionPrefill:
      return {shaders::k_attention_prefill_spv, shaders::k_attention_prefill_spv_words, 12};
    case ShaderId::kQuantizeX:
      return {shaders::k_quantize_x_spv, shaders::k_quantize_x_spv_words, 2};
    case ShaderId::kGemv:
      return {shaders::k_gemv_spv, shaders::k_gemv_spv_words, 3};
    case ShaderId::kMatmulQGemv:
      return {shaders::k_matmul_q_gemv_spv, shaders::k_matmul_q_gemv_spv_words, 3};
  }
  for (size_t i = 0; i < shaders::k_weight_shader_count; ++i) {
    const shaders::WeightShaderSpirv& variant = shaders::k_weight_shaders[i];
    const auto family = static_cast<WeightShaderFamily>(variant.family);
    // Every family has 3 bindings (x, w, y).
    if (weight_shader(family, variant.dtype) == id) return {variant.code, variant.words, 3};
  }
  return {nullptr, 0, 0};
}

constexpr uint32_t kPushConstantBytes = 128;

void destroy_pipeline(hwinfer_device* device, Pipeline& p) {
  const DeviceFunctions& fn = device->fn;
  if (p.pipeline != VK_NULL_HANDLE) fn.vkDestroyPipeline(device->device, p.pipeline, nullptr);
  if (p.layout != VK_NULL_HANDLE) fn.vkDestroyPipelineLayout(device->device, p.layout, nullptr);
  if (p.set_layout != VK_NULL_HANDLE) {
    fn.vkDestroyDescriptorSetLayout(device->device, p.set_layout, nullptr);
  }
  p = Pipeline{};
}

// The pipeline of |id|, created on first use. Thread-safe.
hwinfer_error* get_pipeline(hwinfer_device* device, ShaderId id, const Pipeline** out) {
  std::lock_guard<std::mutex> lock(device->pipeline_mutex);
  auto found = device->pipelines.find(static_cast<uint32_t>(id));
  if (found != device->pipelines.end()) {
    *out = &found->second;
    return nullptr;
  }
  const ShaderInfo shader = shader_info(id);
  if (shader.code == nullptr) {
    return hwinfer_make_error(HWINFER_STATUS_INTERNAL, "vulkan: unknown shader id %" PRIu32,
                              static_cast<uint32_t>(id));
  }
  if (shader.n_bindings > kShaderMaxStorageBuffers) {  // device_requirements.h checked the device
    return hwinfer_make_error(HWINFER_STATUS_INTERNAL,
                              "vulkan: shader %" PRIu32 " has %" PRIu32
                              " bindings, more than kShaderMaxStorageBuffers",
                              static_cast<uint32_t>(id), shader.n_bindings);
  }
  const DeviceFunctions& fn = device->fn;
  Pipeline p;
  p.n_bindings = shader.n_bindings;
  std::vector<VkDescriptorSetLayoutBinding> bindings(shader.n_bindings);
  for (uint32_t b = 0; b < shader.n_bindings; ++b) {
    bindings[b] = {};
    bindings[b].binding = b;
    bindings[b].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    bindings[b].descriptorCount = 1;
    bindings[b].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  }
  VkDescriptorSetLayoutCreateInfo set_layout{};
  set_layout.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO;
  set_layout.bindingCount = shader.n_bindings;
  set_layout.pBindings = bindings.data();
  VkResult result =
      fn.vkCreateDescriptorSetLayout(device->device, &set_layout, nullptr, &p.set_layout);
  if (result != VK_SUCCESS) return vk_error(result, "pipeline", "vkCreateDescriptorSetLayout");
  VkPushConstantRange range{};
  range.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  range.offset = 0;
  range.size = kPushConstantBytes;
  VkPipelineLayoutCreateInfo layout{};
  layout.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO;
  layout.setLayoutCount = 1;
  layout.pSetLayouts = &p.set_layout;
  layout.pushConstantRangeCount = 1;
  layout.pPushConstantRanges = &range;
  result = fn.vkCreatePipelineLayout(device->device, &layout, nullptr, &p.layout);
  if (result != VK_SUCCESS) {
    destroy_pipeline(device, p);
    return vk_error(result, "pipeline", "vkCreatePipelineLayout");
  }
  VkShaderModuleCreateInfo module_info{};
  module_info.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO;
  module_info.codeSize = shader.words * sizeof(uint32_t);
  module_info.pCode = shader.code;
  VkShaderModule module = VK_NULL_HANDLE;
  result = fn.vkCreateShaderModule(device->device, &module_info, nullptr, &module);
  if (result != VK_SUCCESS) {
    destroy_pipeline(device, p);
    return vk_error(result, "pipeline", "vkCreateShaderModule");
  }
  VkComputePipelineCreateInfo create{};
  create.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO;
  create.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  create.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  create.stage.module = module;
  create.stage.pName = "main";
  create.layout = p.layout;
  result =
      fn.vkCreateComputePipelines(device->device, VK_NULL_HANDLE, 1, &create, nullptr, &p.pipeline);
  fn.vkDestroyShaderModule(device->device, module, nullptr);
  if (result != VK_SUCCESS) {
    destroy_pipeline(device, p);
    return vk_error(result, "pipeline", "vkCreateComputePipelines");
  }
  auto [it, inserted] = device->pipelines.emplace(static_cast<uint32_t>(id), p);
  (void)inserted;
  *out = &it->second;
  return nullptr;
}

void full_barrier(const DeviceFunctions& fn, VkCommandBuffer cb, VkPipelineStageFlags dst_stage,
                  VkAccessFlags dst_access) {
  VkMemoryBarrier barrier{};
  barrier.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
  barrier.srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT;
  barrier.dstAccessMask = dst_access;
  fn.vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, dst_stage, 0, 1, &barrier, 0,
                          nullptr, 0, nullptr);
}

}  // namespace

uint64_t binding_remainder(const hwinfer_device* device, const Operand& o) {
  return o.offset_bytes % device->physical->min_storage_offset_alignment;
}

void release_submission(hwinfer_stream* stream, Submission& submission) {
  hwinfer_device* device = stream->device;
  if (submission.command_buffer != VK_NULL_HANDLE) {
    device->fn.vkFreeCommandBuffers(device->device, stream->command_pool, 1,
                                    &submission.command_buffer);
    submission.command_buffer = VK_NULL_HANDLE;
  }
  for (VkDescriptorPool pool : submission.descriptor_pools) {
    device->fn.vkDestroyDescriptorPool(device->device, pool, nullptr);
  }
  submission.descriptor_pools.clear();
  submission.error_words.clear();  // their buffers are transients
  for (hwinfer_buffer* buffer : submission.transients) release_buffer(buffer);
  submission.transients.clear();
}

Recording::~Recording() {
  if (!submitted_) release_submission(stream_, submission_);
}

hwinfer_error* Recording::begin(const char* what) {
  what_ = what;
  hwinfer_device* device = stream_->device;
  VkCommandBufferAllocateInfo allocate{};
  allocate.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
  allocate.commandPool = stream_->command_pool;
  allocate.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  allocate.commandBufferCount = 1;
  VkResult result =
      device->fn.vkAllocateCommandBuffers(device->device, &allocate, &submission_.command_buffer);
  if (result != VK_SUCCESS) {
    submission_.command_buffer = VK_NULL_HANDLE;
    return vk_error(result, what_, "vkAllocateCommandBuffers");
  }
  VkCommandBufferBeginInfo info{};
  info.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
  info.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  result = device->fn.vkBeginCommandBuffer(submission_.command_buffer, &info);
  if (result != VK_SUCCESS) return vk_error(result, what_, "vkBeginCommandBuffer");
  barrier();  // earlier submissions on the shared queue first
  return nullptr;
}

void Recording::barrier() {
  full_barrier(fn(), submission_.command_buffer, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
               VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT);
}

hwinfer_error* Recording::transient(uint64_t size_bytes, uint32_t memory_kind,
                                    hwinfer_buffer** out) {
  if (hwinfer_error* error = allocate_buffer(stream_->device, size_bytes, memory_kind, out)) {
    return error;
  }
  submission_.transients.push_back(*out);
  return nullptr;
}

hwinfer_error* Recording::error_word(const char* message, Operand* out) {
  hwinfer_buffer* word = nullptr;
  if (hwinfer_error* error = transient(4, HWINFER_MEMORY_HOST_VISIBLE, &word)) return error;
  if (word->mapped == nullptr) {
    return hwinfer_make_error(HWINFER_STATUS_INTERNAL,
                              "vulkan %s: the host-visible error word is not mapped", what_);
  }
  fn().vkCmdFillBuffer(submission_.command_buffer, word->buffer, 0, 4, 0);
  barrier();
  submission_.error_words.emplace_back(word, message);
  *out = Operand{word, 0, 4};
  return nullptr;
}

hwinfer_error* Recording::dispatch(ShaderId shader, std::initializer_list<Operand> operands,
                                   const void* push, uint32_t push_bytes, uint64_t groups_x,
                                   uint64_t groups_y) {
  hwinfer_device* device = stream_->device;
  const DeviceFunctions& fn = device->fn;
  const PhysicalDevice& physical = *device->physical;
  const Pipeline* pipeline = nullptr;
  if (hwinfer_error* error = get_pipeline(device, shader, &pipeline)) return error;
  if (operands.size() != pipeline->n_bindings || push_bytes > kPushConstantBytes) {
    return hwinfer_make_error(HWINFER_STATUS_INTERNAL,
                              "vulkan %s: %zu operands and %" PRIu32
                              " push-constant bytes for a shader with %" PRIu32 " bindings",
                              what_, operands.size(), push_bytes, pipeline->n_bindings);
  }
  VkDescriptorPoolSize size{};
  size.type = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
  size.descriptorCount = pipeline->n_bindings;
  VkDescriptorPoolCreateInfo pool_info{};
  pool_info.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO;
  pool_info.maxSets = 1;
  pool_info.poolSizeCount = 1;
  pool_info.pPoolSizes = &size;
  VkDescriptorPool pool = VK_NULL_HANDLE;
  VkResult result = fn.vkCreateDescriptorPool(device->device, &pool_info, nullptr, &pool);
  if (result != VK_SUCCESS) return vk_error(result, what_, "vkCreateDescriptorPool");
  submission_.descriptor_pools.push_back(pool);
  VkDescriptorSetAllocateInfo set_info{};
  set_info.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO;
  set_info.descriptorPool = pool;
  set_info.descriptorSetCount = 1;
  set_info.pSetLayouts = &pipeline->set_layout;
  VkDescriptorSet set = VK_NULL_HANDLE;
  result = fn.vkAllocateDescriptorSets(device->device, &set_info, &set);
  if (result != VK_SUCCESS) return vk_error(result, what_, "vkAllocateDescriptorSets");

  std::vector<VkDescriptorBufferInfo> infos(operands.size());
  std::vector<VkWriteDescriptorSet> writes(operands.size());
  uint32_t b = 0;
  for (const Operand& o : operands) {
    const uint64_t bound = o.offset_bytes - binding_remainder(device, o);
    const uint64_t range =
        std::min<uint64_t>(o.buffer->vk_size_bytes - bound, physical.max_storage_buffer_range);
    if (binding_remainder(device, o) + o.extent_bytes > range) {
      return hwinfer_make_error(HWINFER_STATUS_UNSUPPORTED,
                                "vulkan %s: operand %" PRIu32 " spans %" PRIu64
                                " bytes from its binding, more than maxStorageBufferRange (%" PRIu64
                                ")",
                                what_, b, binding_remainder(device, o) + o.extent_bytes,
                                physical.max_storage_buffer_range);
    }
    infos[b] = {o.buffer->buffer, bound, range};
    writes[b] = {};
    writes[b].sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
    writes[b].dstSet = set;
    writes[b].dstBinding = b;
    writes[b].descriptorCount = 1;
    writes[b].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[b].pBufferInfo = &infos[b];
    ++b;
  }
  fn.vkUpdateDescriptorSets(device->device, b, writes.data(), 0, nullptr);
  VkCommandBuffer cb = submission_.command_buffer;
  fn.vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline->pipeline);
  fn.vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline->layout, 0, 1, &set, 0,
                             nullptr);
  uint8_t constants[kPushConstantBytes] = {};
  std::copy(static_cast<const uint8_t*>(push), static_cast<const uint8_t*>(push) + push_bytes,
            constants);
  fn.vkCmdPushConstants(cb, pipeline->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, kPushConstantBytes,
                        constants);
  const auto cap = [](uint64_t groups, uint32_t limit) {
    return static_cast<uint32_t>(std::clamp<uint64_t>(groups, 1, std::max<uint32_t>(limit, 1)));
  };
  fn.vkCmdDispatch(cb, cap(groups_x, physical.max_workgroup_count[0]),
                   cap(groups_y, physical.max_workgroup_count[1]), 1);
  return nullptr;
}

hwinfer_error* Recording::submit() {
  const DeviceFunctions& fn = stream_->device->fn;
  VkCommandBuffer cb = submission_.command_buffer;
  // Device writes visible to the host (D2H staging, mapped buffers) once the timeline passes.
  full_barrier(fn, cb, VK_PIPELINE_STAGE_HOST_BIT | VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
               VK_ACCESS_HOST_READ_BIT | VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT);
  const VkResult result = fn.vkEndCommandBuffer(cb);
  if (result != VK_SUCCESS) return vk_error(result, what_, "vkEndCommandBuffer");
  stream_->pending.push_back(std::move(submission_));
  submission_ = Submission{};
  submitted_ = true;
  // Submit at once while the GPU has nothing to run (no added latency); batch while it is busy.
  bool idle = stream_->in_flight.empty();
  if (!idle) {
    uint64_t reached = 0;
    idle = fn.vkGetSemaphoreCounterValue(stream_->device->device, stream_->timeline->semaphore,
                                         &reached) == VK_SUCCESS &&
           reached >= stream_->submitted;
  }
  if (idle || stream_->pending.size() >= kMaxPendingCommandBuffers) return flush(stream_);
  return nullptr;
}

hwinfer_error* flush(hwinfer_stream* stream) {
  if (stream->pending.empty()) return nullptr;
  hwinfer_device* device = stream->device;
  const DeviceFunctions& fn = device->fn;
  std::vector<VkCommandBuffer> command_buffers;
  command_buffers.reserve(stream->pending.size());
  for (const Submission& submission : stream->pending) {
    command_buffers.push_back(submission.command_buffer);
  }
  const uint64_t value = stream->submitted + 1;
  VkSemaphore signal_semaphore = stream->timeline->semaphore;
  std::vector<VkSemaphore> wait_semaphores;
  std::vector<uint64_t> wait_values;
  std::vector<VkPipelineStageFlags> wait_stages;
  for (const auto& [timeline_of_event, wait_value] : stream->pending_waits) {
    wait_semaphores.push_back(timeline_of_event->semaphore);
    wait_values.push_back(wait_value);
    wait_stages.push_back(VK_PIPELINE_STAGE_ALL_COMMANDS_BIT);
  }
  VkTimelineSemaphoreSubmitInfo timeline{};
  timeline.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO;
  timeline.waitSemaphoreValueCount = static_cast<uint32_t>(wait_values.size());
  timeline.pWaitSemaphoreValues = wait_values.data();
  timeline.signalSemaphoreValueCount = 1;
  timeline.pSignalSemaphoreValues = &value;
  VkSubmitInfo submit{};
  submit.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
  submit.pNext = &timeline;
  submit.waitSemaphoreCount = static_cast<uint32_t>(wait_semaphores.size());
  submit.pWaitSemaphores = wait_semaphores.data();
  submit.pWaitDstStageMask = wait_stages.data();
  submit.commandBufferCount = static_cast<uint32_t>(command_buffers.size());
  submit.pCommandBuffers = command_buffers.data();
  submit.signalSemaphoreCount = 1;
  submit.pSignalSemaphores = &signal_semaphore;
  VkResult result;
  {
    std::lock_guard<std::mutex> lock(device->queue_mutex);
    result = fn.vkQueueSubmit(device->queue, 1, &submit, VK_NULL_HANDLE);
  }
  if (result != VK_SUCCESS) {  // nothing of it runs: free it all
    for (Submission& submission : stream->pending) release_submission(stream, submission);
    stream->pending.clear();
    return vk_error(result, "flush", "vkQueueSubmit");
  }
  stream->pending_waits.clear();
  stream->submitted = value;
  for (Submission& submission : stream->pending) {
    submission.value = value;
    stream->in_flight.push_back(std::move(submission));
  }
  stream->pending.clear();
  return nullptr;
}

void destroy_pipelines(hwinfer_device* device) {
  std::lock_guard<std::mutex> lock(device->pipeline_mutex);
  for (auto& [id, pipeline] : device->pipelines) destroy_pipeline(device, pipeline);
  device->pipelines.clear();
}

}  // namespace hwinfer::vulkan
