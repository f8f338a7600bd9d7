// dtype_info.cpp — see dtype_info.h.
#include "hwinfer/kit/dtype_info.h"

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
    case HWINFER_DTYPE_Q4_1:
      return "Q4_1";
    case HWINFER_DTYPE_Q5_0:
      return "Q5_0";
    case HWINFER_DTYPE_Q5_1:
      return "Q5_1";
    case HWINFER_DTYPE_IQ4_NL:
      return "IQ4_NL";
    case HWINFER_DTYPE_Q2_K:
      return "Q2_K";
    case HWINFER_DTYPE_Q3_K:
      return "Q3_K";
    case HWINFER_DTYPE_Q4_K:
      return "Q4_K";
    case HWINFER_DTYPE_Q5_K:
      return "Q5_K";
    case HWINFER_DTYPE_Q6_K:
      return "Q6_K";
    case HWINFER_DTYPE_I8:
      return "I8";
    case HWINFER_DTYPE_I32:
      return "I32";
    default:
      return nullptr;
  }
}

}  // namespace hwinfer::backend
