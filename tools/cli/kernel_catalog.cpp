// kernel_catalog.cpp — see kernel_catalog.h. Shapes: 64-wide matrices, 8 query heads over 2 KV
// heads of dim 64, blocks of 16 tokens; every view has a NULL buffer.
#include "kernel_catalog.h"

#include <cstring>

#include "hwinfer/tensor_view.h"

namespace hwinfer::cli {
namespace {

constexpr int64_t kTokens = 16, kHeads = 8, kKvHeads = 2, kHeadDim = 64, kBlock = 16, kBlocks = 4,
                  kDim = 64;

template <typename Desc>
std::shared_ptr<Desc> Blank(uint32_t kind) {
  auto desc = std::make_shared<Desc>();
  std::memset(desc.get(), 0, sizeof(Desc));
  desc->struct_size = sizeof(Desc);
  desc->kind = kind;
  return desc;
}

hwinfer_tensor_view V(uint32_t dtype, std::initializer_list<int64_t> shape) {
  return ContiguousView(nullptr, 0, dtype, shape);
}

template <typename Desc>
CatalogEntry Entry(std::string name, std::shared_ptr<Desc> desc) {
  return {std::move(name), std::reinterpret_pointer_cast<hwinfer_kernel_desc>(desc)};
}

CatalogEntry Gemm(uint32_t dtype, const char* name) {
  auto d = Blank<hwinfer_gemm_desc>(HWINFER_KERNEL_GEMM);
  d->m = d->n = d->k = kDim;
  d->b_transposed = 1;
  d->alpha = 1.0f;
  d->a = d->b = d->c = V(dtype, {kDim, kDim});
  return Entry(name, d);
}

CatalogEntry MatmulQuantized(uint32_t dtype, const char* name) {
  auto d = Blank<hwinfer_matmul_quantized_desc>(HWINFER_KERNEL_MATMUL_QUANTIZED);
  d->m = 1;
  d->n = d->k = kDim;
  d->x = V(HWINFER_DTYPE_F32, {1, kDim});
  d->w = V(dtype, {kDim, kDim});
  d->y = V(HWINFER_DTYPE_F32, {1, kDim});
  return Entry(name, d);
}

template <typename Desc>
void SetPagedCache(Desc& d, uint32_t kv_dtype) {
  d.k_cache = d.v_cache = V(kv_dtype, {kBlocks, kBlock, kKvHeads, kHeadDim});
  d.k_scales = d.v_scales =
      kv_dtype == HWINFER_DTYPE_I8 ? V(HWINFER_DTYPE_F32, {kBlocks, kKvHeads}) : NoView();
}

CatalogEntry Prefill() {
  auto d = Blank<hwinfer_attention_prefill_desc>(HWINFER_KERNEL_ATTENTION_PREFILL);
  d->n_tokens = kTokens;
  d->n_seqs = 1;
  d->n_heads = kHeads;
  d->n_kv_heads = kKvHeads;
  d->head_dim = kHeadDim;
  d->scale = 0.125f;
  d->causal = 1;
  d->q = d->out = V(HWINFER_DTYPE_F16, {kTokens, kHeads, kHeadDim});
  d->k = d->v = V(HWINFER_DTYPE_F16, {kTokens, kKvHeads, kHeadDim});
  d->query_start = V(HWINFER_DTYPE_I32, {2});
  d->k_cache = d->v_cache = d->k_scales = d->v_scales = d->block_tables = d->context_lens =
      NoView();
  return Entry("attention_prefill f16", d);
}

CatalogEntry Decode(uint32_t kv_dtype, const char* name) {
  auto d = Blank<hwinfer_attention_decode_paged_desc>(HWINFER_KERNEL_ATTENTION_DECODE_PAGED);
  d->n_seqs = 1;
  d->n_heads = kHeads;
  d->n_kv_heads = kKvHeads;
  d->head_dim = kHeadDim;
  d->block_size = kBlock;
  d->max_blocks_per_seq = kBlocks;
  d->scale = 0.125f;
  d->q = d->out = V(HWINFER_DTYPE_F16, {1, kHeads, kHeadDim});
  SetPagedCache(*d, kv_dtype);
  d->block_tables = V(HWINFER_DTYPE_I32, {1, kBlocks});
  d->context_lens = V(HWINFER_DTYPE_I32, {1});
  return Entry(name, d);
}

CatalogEntry KvAppend(uint32_t kv_dtype, const char* name) {
  auto d = Blank<hwinfer_kv_append_desc>(HWINFER_KERNEL_KV_APPEND);
  d->n_tokens = kTokens;
  d->n_kv_heads = kKvHeads;
  d->head_dim = kHeadDim;
  d->block_size = kBlock;
  d->num_blocks = kBlocks;
  d->k = d->v = V(HWINFER_DTYPE_F16, {kTokens, kKvHeads, kHeadDim});
  d->slot_mapping = V(HWINFER_DTYPE_I32, {kTokens});
  SetPagedCache(*d, kv_dtype);
  return Entry(name, d);
}

CatalogEntry RmsNorm() {
  auto d = Blank<hwinfer_rms_norm_desc>(HWINFER_KERNEL_RMS_NORM);
  d->n_tokens = kTokens;
  d->dim = kDim;
  d->eps = 1e-5f;
  d->x = d->residual = d->out = V(HWINFER_DTYPE_F32, {kTokens, kDim});
  d->weight = V(HWINFER_DTYPE_F32, {kDim});
  return Entry("rms_norm f32 (fused residual)", d);
}

CatalogEntry Rope(uint32_t mode, const char* name) {
  auto d = Blank<hwinfer_rope_desc>(HWINFER_KERNEL_ROPE);
  d->n_tokens = kTokens;
  d->n_heads = kHeads;
  d->n_kv_heads = kKvHeads;
  d->head_dim = d->rotary_dim = kHeadDim;
  d->theta_base = 10000.0f;
  d->mode = mode;
  d->q = V(HWINFER_DTYPE_F32, {kTokens, kHeads, kHeadDim});
  d->k = V(HWINFER_DTYPE_F32, {kTokens, kKvHeads, kHeadDim});
  d->positions = V(HWINFER_DTYPE_I32, {kTokens});
  return Entry(name, d);
}

CatalogEntry SiluMul() {
  auto d = Blank<hwinfer_silu_mul_desc>(HWINFER_KERNEL_SILU_MUL);
  d->n_tokens = kTokens;
  d->dim = kDim;
  d->gate = d->up = d->out = V(HWINFER_DTYPE_F32, {kTokens, kDim});
  return Entry("silu_mul f32", d);
}

CatalogEntry Embedding(uint32_t dtype, const char* name) {
  auto d = Blank<hwinfer_embedding_desc>(HWINFER_KERNEL_EMBEDDING);
  d->n_tokens = kTokens;
  d->vocab = 256;
  d->dim = kDim;
  d->table = V(dtype, {256, kDim});
  d->ids = V(HWINFER_DTYPE_I32, {kTokens});
  d->out = V(HWINFER_DTYPE_F32, {kTokens, kDim});
  return Entry(name, d);
}

CatalogEntry Probe(uint32_t mode, const char* name) {
  auto d = Blank<hwinfer_bandwidth_probe_desc>(HWINFER_KERNEL_BANDWIDTH_PROBE);
  d->mode = mode;
  d->iterations = 1;
  d->size_bytes = 1 << 20;
  d->src = mode == HWINFER_PROBE_WRITE ? NoView() : V(HWINFER_DTYPE_I8, {1 << 20});
  d->dst = mode == HWINFER_PROBE_READ ? NoView() : V(HWINFER_DTYPE_I8, {1 << 20});
  d->sink = V(HWINFER_DTYPE_I8, {64});
  return Entry(name, d);
}

}  // namespace

std::vector<CatalogEntry> KernelCatalog() {
  return {
      Gemm(HWINFER_DTYPE_F32, "gemm f32"),
      Gemm(HWINFER_DTYPE_F16, "gemm f16"),
      Gemm(HWINFER_DTYPE_BF16, "gemm bf16"),
      MatmulQuantized(HWINFER_DTYPE_Q8_0, "matmul_quantized q8_0"),
      MatmulQuantized(HWINFER_DTYPE_Q4_0, "matmul_quantized q4_0"),
      Prefill(),
      Decode(HWINFER_DTYPE_F16, "attention_decode_paged f16-kv"),
      Decode(HWINFER_DTYPE_I8, "attention_decode_paged i8-kv"),
      KvAppend(HWINFER_DTYPE_F16, "kv_append f16"),
      KvAppend(HWINFER_DTYPE_I8, "kv_append i8"),
      RmsNorm(),
      Rope(HWINFER_ROPE_NORMAL, "rope normal f32"),
      Rope(HWINFER_ROPE_NEOX, "rope neox f32"),
      SiluMul(),
      Embedding(HWINFER_DTYPE_F16, "embedding f16"),
      Embedding(HWINFER_DTYPE_Q4_0, "embedding q4_0"),
      Probe(HWINFER_PROBE_READ, "bandwidth_probe read"),
      Probe(HWINFER_PROBE_COPY, "bandwidth_probe copy"),
      Probe(HWINFER_PROBE_WRITE, "bandwidth_probe write"),
  };
}

}  // namespace hwinfer::cli
