// view_extent.h — the byte arithmetic of tensor views (hwinfer_tensor_view) that every backend's
// view checks need: the byte range a view addresses, and whether that range fits in its buffer. All
// arithmetic is overflow-checked: a descriptor is untrusted input.
//
// Must not dereference view.buffer (its struct belongs to each plugin) nor form messages: callers
// word their own errors.
#ifndef HWINFER_SDK_KIT_VIEW_EXTENT_H_
#define HWINFER_SDK_KIT_VIEW_EXTENT_H_

#include <cstdint>

#include "hwinfer/plugin.h"

namespace hwinfer::backend {

// The byte range [*lowest, *end) relative to offset_bytes that |view| (rank, shape, strides)
// addresses, the last element's |element_bytes| included; *lowest <= 0 with negative strides.
// Shapes must be >= 1. False, leaving the outputs alone, on overflow.
bool view_byte_extent(const hwinfer_tensor_view& view, uint64_t element_bytes, int64_t* lowest,
                      int64_t* end);

// True when bytes [offset + lowest, offset + end) do not all lie inside [0, buffer_size_bytes).
bool extent_outside_buffer(int64_t lowest, int64_t end, uint64_t offset,
                           uint64_t buffer_size_bytes);

}  // namespace hwinfer::backend

#endif  // HWINFER_SDK_KIT_VIEW_EXTENT_H_
