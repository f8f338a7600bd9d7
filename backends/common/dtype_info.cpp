// dtype_info.cpp — see dtype_info.h.
#include "common/dtype_info.h"

namespace hwinfer::backend {

uint64_t dtype_element_bytes(uint32_t dtype) {
  switch (dtype) {
    case HWINFER_DTYPE_F32:
    case HWINFER_DTYPE_I32:
      return 4;
    case HWINFER_DTYPE_F16:
    case HWINFER_DTYPE_BF16:
      return 2;
    case HWINFER_DTYPE_I8:
      return 1;
    default:
      return 0;
  }
}

const char* known_dtype_name(uint32_t dtype) {
  switch (dtype) {
    case HWINFER_DTYPE_F32:
      return "F32";
    case HWINFER_DTYPE_F16:
      return "F16";
    case HWINFER_DTYPE_BF16:
      return "BF16";
    case HWINFER_DTYPE_Q8_0:
      return "Q8_0";
    case HWINFER_DTYPE_Q4_0:
      return "Q4_0";
    case HWINFER_DTYPE_I8:
      return "I8";
    case HWINFER_DTYPE_I32:
      return "I32";
    default:
      return nullptr;
  }
}

}  // namespace hwinfer::backend
