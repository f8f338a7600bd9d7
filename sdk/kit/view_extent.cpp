// view_extent.cpp — see view_extent.h.
#include "hwinfer/kit/view_extent.h"

namespace hwinfer::backend {

bool view_byte_extent(const hwinfer_tensor_view& view, uint64_t element_bytes, int64_t* lowest,
                      int64_t* end) {
  int64_t low = 0;
  int64_t high = static_cast<int64_t>(element_bytes);
  for (uint32_t d = 0; d < view.rank; ++d) {
    int64_t span = 0;
    if (__builtin_mul_overflow(view.shape[d] - 1, view.strides_bytes[d], &span)) return false;
    if (span < 0 ? __builtin_add_overflow(low, span, &low)
                 : __builtin_add_overflow(high, span, &high)) {
      return false;
    }
  }
  *lowest = low;
  *end = high;
  return true;
}

bool extent_outside_buffer(int64_t lowest, int64_t end, uint64_t offset,
                           uint64_t buffer_size_bytes) {
  const bool below = lowest < 0 && static_cast<uint64_t>(-lowest) > offset;
  const bool above =
      offset > buffer_size_bytes || static_cast<uint64_t>(end) > buffer_size_bytes - offset;
  return below || above;
}

}  // namespace hwinfer::backend
