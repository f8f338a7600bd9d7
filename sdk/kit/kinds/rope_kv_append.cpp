// rope_kv_append.cpp — rope_kv_append (ABI 1.1): rope, then kv_append of the rotated k, as one
// kernel. Everything a kernel kind needs besides its kernels, in one file (docs/plugin-kit.md): its
// descriptor check (the one every backend's enqueue slot and kernel_query run), its cost (the
// bytes and FLOPs the core counts for MBU and MFU) and its samples (what `hwinfer plugin check`
// asks a device about). Listed in hwinfer/kernel_kinds.def; found by the kit's CMake glob.
#include "kind_support.h"

namespace hwinfer::backend {

// ---- RoPE fused with the KV append ---------------------------------------------------------
//   exactly what rope and kv_append accept for its two halves (hwinfer_split_rope_kv_append), with
//   k given (it is appended); then the plugin's limits for the fused kind.

hwinfer_error* check_kernel(const CheckContext& context, const hwinfer_rope_kv_append_desc& d) {
  if (hwinfer_error* error =
          check_desc_size(context.plugin_name, d.struct_size, sizeof(d), "rope_kv_append")) {
    return error;
  }
  hwinfer_rope_desc rope;
  hwinfer_kv_append_desc append;
  hwinfer_split_rope_kv_append(&d, &rope, &append);
  if (hwinfer_error* error = check_kernel(context, rope)) return error;
  if (hwinfer_error* error = check_kernel(context, append)) return error;
  return apply_kernel_limits(context, HWINFER_KERNEL_ROPE_KV_APPEND, &d);
}

}  // namespace hwinfer::backend

namespace hwinfer::kit {

// rope_kv_append: what its two halves count, less the k and v round trip the fusion saves
// (the rotated k is not read back for the append).
KernelCost count_cost(const hwinfer_rope_kv_append_desc& d, const IntArrayReader& read_ints) {
  hwinfer_rope_desc rope;
  hwinfer_kv_append_desc append;
  hwinfer_split_rope_kv_append(&d, &rope, &append);
  KernelCost cost = count_cost(rope, read_ints);
  const KernelCost appended = count_cost(append, read_ints);
  cost.bytes_read +=
      appended.bytes_read -
      DtypeBytes(d.k.dtype, Positive(d.n_tokens) * Positive(d.n_kv_heads) * Positive(d.head_dim));
  cost.bytes_written += appended.bytes_written;
  return cost;
}

namespace {

KernelSample RopeKvAppend(uint32_t kv_dtype, const char* name) {
  auto d = blank_desc<hwinfer_rope_kv_append_desc>(HWINFER_KERNEL_ROPE_KV_APPEND);
  d->n_tokens = kSampleTokens;
  d->n_heads = kSampleHeads;
  d->n_kv_heads = kSampleKvHeads;
  d->head_dim = d->rotary_dim = kSampleHeadDim;
  d->theta_base = 10000.0f;
  d->mode = HWINFER_ROPE_NEOX;
  d->block_size = kSampleBlock;
  d->num_blocks = kSampleBlocks;
  d->q = sample_view(HWINFER_DTYPE_F16, {kSampleTokens, kSampleHeads, kSampleHeadDim});
  d->k = d->v = sample_view(HWINFER_DTYPE_F16, {kSampleTokens, kSampleKvHeads, kSampleHeadDim});
  d->positions = d->slot_mapping = sample_view(HWINFER_DTYPE_I32, {kSampleTokens});
  set_sample_pools(*d, kv_dtype);
  return sample(name, d);
}

}  // namespace

std::vector<KernelSample> samples(const hwinfer_rope_kv_append_desc*) {
  return {RopeKvAppend(HWINFER_DTYPE_F16, "rope_kv_append f16"),
          RopeKvAppend(HWINFER_DTYPE_I8, "rope_kv_append i8")};
}

}  // namespace hwinfer::kit
