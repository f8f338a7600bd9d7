// kv_append.cpp — kv_append: new K and V rows written into the paged pools.
// Everything a kernel kind needs besides its kernels, in one file (docs/plugin-kit.md): its
// descriptor check (the one every backend's enqueue slot and kernel_query run), its cost (the
// bytes and FLOPs the core counts for MBU and MFU) and its samples (what `hwinfer plugin check`
// asks a device about). Listed in hwinfer/kernel_kinds.def; found by the kit's CMake glob.
#include "kind_support.h"

namespace hwinfer::backend {

// ---- KV append ---------------------------------------------------------------------------------
//   k, v: [n_tokens, n_kv_heads, head_dim] F32 | F16 (innermost contiguous);  slot_mapping:
//   [n_tokens] I32;  k_cache, v_cache (+ scales): the paged layout; outputs, must not overlap each
//   other. num_blocks * block_size must fit an I32 slot.

hwinfer_error* check_kernel(const CheckContext& context, const hwinfer_kv_append_desc& d) {
  constexpr const char* kKernel = "kv_append";
  const char* plugin = context.plugin_name;
  if (hwinfer_error* error = check_desc_size(plugin, d.struct_size, sizeof(d), kKernel)) {
    return error;
  }
  if (hwinfer_error* error = require_positive(
          context, kKernel, "n_tokens, n_kv_heads, head_dim, block_size and num_blocks",
          {d.n_tokens, d.n_kv_heads, d.head_dim, d.block_size, d.num_blocks})) {
    return error;
  }
  if (d.num_blocks > INT32_MAX / d.block_size) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "%s kv_append: num_blocks * block_size must fit an I32 slot", plugin);
  }
  for (const auto* src : {&d.k, &d.v}) {
    if (hwinfer_error* error =
            check_dtype_in(context, *src, kKernel, src == &d.k ? "k" : "v",
                           {HWINFER_DTYPE_F32, HWINFER_DTYPE_F16}, "F32 or F16")) {
      return error;
    }
  }
  ViewExpectation k = expect_view(kKernel, "k", d.k.dtype, "[n_tokens, n_kv_heads, head_dim]",
                                  {d.n_tokens, d.n_kv_heads, d.head_dim});
  ViewExpectation v = k;
  v.operand = "v";
  v.dtype = d.v.dtype;
  k.contiguous = v.contiguous = true;
  const ViewExpectation slots =
      expect_view(kKernel, "slot_mapping", HWINFER_DTYPE_I32, "[n_tokens]", {d.n_tokens});
  if (hwinfer_error* error = check_view(context, d.k, k)) return error;
  if (hwinfer_error* error = check_view(context, d.v, v)) return error;
  if (hwinfer_error* error = check_view(context, d.slot_mapping, slots)) return error;
  if (hwinfer_error* error =
          check_pools(context, kKernel, d.k_cache, d.k_scales, d.v_cache, d.v_scales, d.num_blocks,
                      d.block_size, d.n_kv_heads, d.head_dim, true)) {
    return error;
  }
  const bool i8 = d.k_cache.dtype == HWINFER_DTYPE_I8;
  const bool v_i8 = d.v_cache.dtype == HWINFER_DTYPE_I8;
  const bool overlapping =
      views_overlap(d.k_cache, d.v_cache) ||
      (i8 && (views_overlap(d.k_scales, d.k_cache) || views_overlap(d.k_scales, d.v_cache))) ||
      (v_i8 && (views_overlap(d.v_scales, d.k_cache) || views_overlap(d.v_scales, d.v_cache))) ||
      (i8 && v_i8 && views_overlap(d.k_scales, d.v_scales));
  if (overlapping) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "%s kv_append: the output pools and scales overlap in memory",
                              plugin);
  }
  return apply_kernel_limits(context, HWINFER_KERNEL_KV_APPEND, &d);
}

}  // namespace hwinfer::backend

namespace hwinfer::kit {

// kv_append: n_tokens rows of K and V read, the same rows written into the pools (pool dtype).
KernelCost count_cost(const hwinfer_kv_append_desc& d, const IntArrayReader& /*read_ints*/) {
  const double values = Positive(d.n_tokens) * Positive(d.n_kv_heads) * Positive(d.head_dim);
  KernelCost cost;
  cost.bytes_read = DtypeBytes(d.k.dtype, values) + DtypeBytes(d.v.dtype, values);
  cost.bytes_written = DtypeBytes(d.k_cache.dtype, values) + DtypeBytes(d.v_cache.dtype, values);
  return cost;
}

namespace {

KernelSample KvAppend(uint32_t kv_dtype, const char* name) {
  auto d = blank_desc<hwinfer_kv_append_desc>(HWINFER_KERNEL_KV_APPEND);
  d->n_tokens = kSampleTokens;
  d->n_kv_heads = kSampleKvHeads;
  d->head_dim = kSampleHeadDim;
  d->block_size = kSampleBlock;
  d->num_blocks = kSampleBlocks;
  d->k = d->v = sample_view(HWINFER_DTYPE_F16, {kSampleTokens, kSampleKvHeads, kSampleHeadDim});
  d->slot_mapping = sample_view(HWINFER_DTYPE_I32, {kSampleTokens});
  set_sample_pools(*d, kv_dtype);
  return sample(name, d);
}

}  // namespace

std::vector<KernelSample> samples(const hwinfer_kv_append_desc*) {
  return {KvAppend(HWINFER_DTYPE_F16, "kv_append f16"), KvAppend(HWINFER_DTYPE_I8, "kv_append i8")};
}

}  // namespace hwinfer::kit
