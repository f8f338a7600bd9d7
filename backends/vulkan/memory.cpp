// memory.cpp — buffers sub-allocated from large VkDeviceMemory blocks: per memory type a list of
// blocks (64 MiB, or the buffer's size when bigger), each with a first-fit free list of coalesced
// ranges; one VkBuffer per hwinfer buffer, bound at its range's offset. Host-visible coherent
// blocks are mapped once, so buffer_map is a pointer into the block.
//
// DEVICE buffers use a DEVICE_LOCAL type; HOST_VISIBLE ones a HOST_VISIBLE | HOST_COHERENT type
// (HOST_CACHED when there is one). On devices whose device-local memory is host-visible and
// coherent (lavapipe, integrated GPUs with such a type) DEVICE buffers can be mapped too.
// Must not hand out memory below the device's alignment (max(minStorageBufferOffsetAlignment,
// 256)); must not free a block that still holds a buffer.
#include <algorithm>
#include <cinttypes>
#include <memory>

#include "vk_internal.h"

namespace hwinfer::vulkan {

namespace {

constexpr uint64_t kBlockBytes = uint64_t{64} << 20;

uint64_t round_up(uint64_t value, uint64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

// First fit in |block|: the aligned offset of |size| bytes, removed from the free list; false when
// nothing fits.
bool take_range(MemoryBlock* block, uint64_t size, uint64_t alignment, uint64_t* out_offset) {
  for (auto it = block->free.begin(); it != block->free.end(); ++it) {
    const uint64_t begin = it->first;
    const uint64_t end = it->first + it->second;
    const uint64_t aligned = round_up(begin, alignment);
    if (aligned + size > end) continue;
    block->free.erase(it);
    if (aligned > begin) block->free.emplace(begin, aligned - begin);
    if (aligned + size < end) block->free.emplace(aligned + size, end - aligned - size);
    block->used_bytes += size;
    *out_offset = aligned;
    return true;
  }
  return false;
}

// Returns [offset, offset + size) to |block|'s free list, merged with its neighbours.
void give_range(MemoryBlock* block, uint64_t offset, uint64_t size) {
  block->used_bytes -= size;
  auto next = block->free.lower_bound(offset);
  if (next != block->free.end() && offset + size == next->first) {
    size += next->second;
    next = block->free.erase(next);
  }
  if (next != block->free.begin()) {
    auto previous = std::prev(next);
    if (previous->first + previous->second == offset) {
      previous->second += size;
      return;
    }
  }
  block->free.emplace(offset, size);
}

// Creates |buffer|'s VkBuffer (its device, size and kind set) and binds it to a range of a block.
hwinfer_error* bind_memory(hwinfer_device* device, hwinfer_buffer* buffer) {
  const DeviceFunctions& fn = device->fn;
  const uint32_t memory_kind = buffer->memory_kind;
  buffer->vk_size_bytes =
      round_up(buffer->size_bytes, 4);  // shaders and fills work in 32-bit words
  VkBufferCreateInfo create{};
  create.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
  create.size = buffer->vk_size_bytes;
  create.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                 VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  create.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VkResult result = fn.vkCreateBuffer(device->device, &create, nullptr, &buffer->buffer);
  if (result != VK_SUCCESS) return vk_error(result, "buffer_alloc", "vkCreateBuffer");
  auto destroy_on_error = [&](hwinfer_error* error) {
    fn.vkDestroyBuffer(device->device, buffer->buffer, nullptr);
    return error;
  };
  VkMemoryRequirements requirements{};
  fn.vkGetBufferMemoryRequirements(device->device, buffer->buffer, &requirements);
  const int32_t wanted = memory_kind == HWINFER_MEMORY_HOST_VISIBLE ? device->host_memory_type
                                                                    : device->device_memory_type;
  if (wanted < 0 || (requirements.memoryTypeBits & (1u << static_cast<uint32_t>(wanted))) == 0) {
    return destroy_on_error(
        hwinfer_make_error(HWINFER_STATUS_INTERNAL,
                           "vulkan buffer_alloc: the chosen memory type %" PRId32
                           " cannot hold a storage buffer (allowed types 0x%" PRIx32 ")",
                           wanted, requirements.memoryTypeBits));
  }
  const auto type = static_cast<uint32_t>(wanted);
  const uint64_t alignment = std::max<uint64_t>(requirements.alignment, device->alignment_bytes);
  const uint64_t bytes = round_up(requirements.size, alignment);

  std::lock_guard<std::mutex> lock(device->memory_mutex);
  MemoryPool& pool = device->pools[type];
  pool.type_index = type;
  MemoryBlock* block = nullptr;
  uint64_t offset = 0;
  for (const auto& candidate : pool.blocks) {
    if (take_range(candidate.get(), bytes, alignment, &offset)) {
      block = candidate.get();
      break;
    }
  }
  if (block == nullptr) {
    auto fresh = std::make_unique<MemoryBlock>();
    fresh->size_bytes = std::max(kBlockBytes, bytes);
    if (device->physical->max_memory_allocation > 0 &&
        fresh->size_bytes > device->physical->max_memory_allocation) {
      fresh->size_bytes = std::max(bytes, device->physical->max_memory_allocation);
    }
    VkMemoryAllocateInfo allocate{};
    allocate.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
    allocate.allocationSize = fresh->size_bytes;
    allocate.memoryTypeIndex = type;
    result = fn.vkAllocateMemory(device->device, &allocate, nullptr, &fresh->memory);
    if (result != VK_SUCCESS && fresh->size_bytes > bytes) {  // retry with just what is needed
      fresh->size_bytes = bytes;
      allocate.allocationSize = bytes;
      result = fn.vkAllocateMemory(device->device, &allocate, nullptr, &fresh->memory);
    }
    if (result != VK_SUCCESS) {
      return destroy_on_error(hwinfer_make_error(HWINFER_STATUS_OUT_OF_MEMORY,
                                                 "vulkan buffer_alloc: cannot allocate %" PRIu64
                                                 " bytes of device memory (type %" PRIu32 "): %s",
                                                 fresh->size_bytes, type,
                                                 result_name(result).c_str()));
    }
    device->physical->allocated_bytes->fetch_add(fresh->size_bytes);
    VkPhysicalDeviceMemoryProperties memory{};
    device->plugin->vk.vkGetPhysicalDeviceMemoryProperties(device->physical->handle, &memory);
    const VkMemoryPropertyFlags host =
        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    pool.mappable = (memory.memoryTypes[type].propertyFlags & host) == host;
    if (pool.mappable) {
      void* mapped = nullptr;
      result = fn.vkMapMemory(device->device, fresh->memory, 0, VK_WHOLE_SIZE, 0, &mapped);
      if (result != VK_SUCCESS) {
        fn.vkFreeMemory(device->device, fresh->memory, nullptr);
        device->physical->allocated_bytes->fetch_sub(fresh->size_bytes);
        return destroy_on_error(vk_error(result, "buffer_alloc", "vkMapMemory"));
      }
      fresh->mapped = static_cast<uint8_t*>(mapped);
    }
    fresh->free.emplace(0, fresh->size_bytes);
    block = fresh.get();
    pool.blocks.push_back(std::move(fresh));
    take_range(block, bytes, alignment, &offset);  // the fresh block holds it at offset 0
  }
  result = fn.vkBindBufferMemory(device->device, buffer->buffer, block->memory, offset);
  if (result != VK_SUCCESS) {
    give_range(block, offset, bytes);
    return destroy_on_error(vk_error(result, "buffer_alloc", "vkBindBufferMemory"));
  }
  buffer->block = block;
  buffer->memory_type = type;
  buffer->block_offset = offset;
  buffer->block_bytes = bytes;
  buffer->mapped = block->mapped != nullptr ? block->mapped + offset : nullptr;
  return nullptr;
}

// Destroys |buffer|'s VkBuffer and gives its range back (freeing an empty block but one).
void unbind_memory(hwinfer_buffer* buffer) {
  hwinfer_device* device = buffer->device;
  device->fn.vkDestroyBuffer(device->device, buffer->buffer, nullptr);
  {
    std::lock_guard<std::mutex> lock(device->memory_mutex);
    MemoryPool& pool = device->pools[buffer->memory_type];
    give_range(buffer->block, buffer->block_offset, buffer->block_bytes);
    if (buffer->block->used_bytes == 0 && pool.blocks.size() > 1) {  // keep one block warm
      auto it = std::find_if(pool.blocks.begin(), pool.blocks.end(),
                             [&](const auto& b) { return b.get() == buffer->block; });
      if (it != pool.blocks.end()) {
        device->fn.vkFreeMemory(device->device, (*it)->memory, nullptr);  // unmaps it too
        device->physical->allocated_bytes->fetch_sub((*it)->size_bytes);
        pool.blocks.erase(it);
      }
    }
  }
}

}  // namespace

hwinfer_error* allocate_buffer(hwinfer_device* device, uint64_t size_bytes, uint32_t memory_kind,
                               hwinfer_buffer** out) {
  auto buffer = std::make_unique<hwinfer_buffer>();
  buffer->device = device;
  buffer->size_bytes = size_bytes;
  buffer->memory_kind = memory_kind;
  HWINFER_KIT_RETURN_IF_ERROR(bind_memory(device, buffer.get()));
  *out = buffer.release();
  return nullptr;
}

void release_buffer(hwinfer_buffer* buffer) {
  unbind_memory(buffer);
  delete buffer;
}

void release_memory_pools(hwinfer_device* device) {
  std::lock_guard<std::mutex> lock(device->memory_mutex);
  for (auto& [type, pool] : device->pools) {
    for (const auto& block : pool.blocks) {
      device->fn.vkFreeMemory(device->device, block->memory, nullptr);
      device->physical->allocated_bytes->fetch_sub(block->size_bytes);
    }
    pool.blocks.clear();
  }
}

hwinfer_error* VulkanBackend::allocate(hwinfer_device& device, hwinfer_buffer& buffer) {
  return bind_memory(&device, &buffer);
}

void VulkanBackend::release(hwinfer_buffer& buffer) { unbind_memory(&buffer); }

hwinfer_error* VulkanBackend::map(hwinfer_buffer& buffer, void** out_host_ptr) {
  if (buffer.mapped == nullptr) {
    return hwinfer_make_error(HWINFER_STATUS_FAILED_PRECONDITION,
                              "vulkan buffer_map: this DEVICE buffer lives in memory the host "
                              "cannot map; allocate HOST_VISIBLE memory or copy it");
  }
  *out_host_ptr = buffer.mapped;
  return nullptr;
}

}  // namespace hwinfer::vulkan
