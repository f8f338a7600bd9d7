// kernel_checks.cpp — the check two kinds share (check_weight_dtype: matmul_quantized's weights
// and embedding's table). Every kind's own check_kernel is in its file, sdk/kit/kinds/<kind>.cpp.
#include "hwinfer/kit/kernel_checks.h"

#include <cinttypes>
#include <string>

#include "hwinfer/kit/dtype_info.h"
#include "hwinfer/kit/plugin_errors.h"
#include "hwinfer/kit/view_checks.h"
#include "hwinfer/plugin_support.h"

namespace hwinfer::backend {

namespace {

// "Q4_0, Q8_0, ..." for the block dtypes in |mask|.
std::string weight_dtype_names(uint64_t mask) {
  std::string names;
  for (uint32_t dtype = 0; dtype < 64; ++dtype) {
    if ((mask & weight_dtype_bit(dtype)) == 0) continue;
    if (!names.empty()) names += ", ";
    names += dtype_name(dtype);
  }
  return names.empty() ? "none" : names;
}

}  // namespace

hwinfer_error* check_weight_dtype(const CheckContext& context, const char* kernel,
                                  const char* operand, uint32_t dtype) {
  const bool is_block = hwinfer_dtype_block_values(dtype) != 0;
  if (is_block && (context.weight_dtypes & weight_dtype_bit(dtype)) != 0) return nullptr;
  const std::string taken = weight_dtype_names(context.weight_dtypes);
  if (is_block) {
    return hwinfer_make_error(HWINFER_STATUS_UNSUPPORTED,
                              "%s %s: operand %s has dtype %s, which this backend does not have "
                              "(it takes %s)",
                              context.plugin_name, kernel, operand, dtype_name(dtype).c_str(),
                              taken.c_str());
  }
  return hwinfer_make_error(
      dtype_is_known(dtype) ? HWINFER_STATUS_INVALID_ARGUMENT : HWINFER_STATUS_UNSUPPORTED,
      "%s %s: operand %s has dtype %s; it takes a block-quantized dtype (%s)", context.plugin_name,
      kernel, operand, dtype_name(dtype).c_str(), taken.c_str());
}

}  // namespace hwinfer::backend
