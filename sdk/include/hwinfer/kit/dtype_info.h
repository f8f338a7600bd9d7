// dtype_info.h — facts about the HWINFER_DTYPE_* values of plugin.h that every backend's view
// checks need: element sizes and names.
//
// Must stay a plain lookup: no policy about which dtypes a kernel accepts (that is each backend's).
#ifndef HWINFER_SDK_KIT_DTYPE_INFO_H_
#define HWINFER_SDK_KIT_DTYPE_INFO_H_

#include <cstdint>

#include "hwinfer/plugin.h"

namespace hwinfer::backend {

// Bytes per element of a non-block dtype (F32, F16, BF16, I8, I32); 0 for the block-quantized
// dtypes (hwinfer_dtype_block_bytes has theirs) and unknown ones.
uint64_t dtype_element_bytes(uint32_t dtype);

// "F32", "F16", "BF16", "Q8_0", "Q4_K", "I8", ...; NULL for a value plugin.h does not define
// (callers choose how to name it).
const char* known_dtype_name(uint32_t dtype);

}  // namespace hwinfer::backend

#endif  // HWINFER_SDK_KIT_DTYPE_INFO_H_
