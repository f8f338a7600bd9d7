// embedding.cpp — embedding: rows of a (possibly block-quantized) table by token id.
// Everything a kernel kind needs besides its kernels, in one file (docs/plugin-kit.md): its
// descriptor check (the one every backend's enqueue slot and kernel_query run), its cost (the
// bytes and FLOPs the core counts for MBU and MFU) and its samples (what `hwinfer plugin check`
// asks a device about). Listed in hwinfer/kernel_kinds.def; found by the kit's CMake glob.
#include "kind_support.h"

namespace hwinfer::backend {

// ---- embedding ---------------------------------------------------------------------------------
//   table: [vocab, dim] F32 | F16 | BF16 (innermost contiguous) | a block-quantized dtype the
//   plugin takes (GGUF blocks packed along dim, dim a multiple of the block, innermost stride 0);
//   ids: [n_tokens] I32;  out: [n_tokens, dim] F32 (innermost contiguous), overlapping neither
//   table nor ids.

namespace {

bool is_block_dtype(uint32_t dtype) { return hwinfer_dtype_block_values(dtype) != 0; }

// The table of a block-quantized embedding as the I8 byte matrix [vocab, dim / block * bytes] it
// occupies, so check_view can bound it by its buffer. |d.table| must be rank 2 with innermost
// stride 0 (checked by the caller).
hwinfer_tensor_view block_table_as_bytes(const hwinfer_embedding_desc& d) {
  hwinfer_tensor_view bytes = d.table;
  bytes.dtype = HWINFER_DTYPE_I8;
  bytes.shape[1] = d.dim / hwinfer_dtype_block_values(d.table.dtype) *
                   static_cast<int64_t>(hwinfer_dtype_block_bytes(d.table.dtype));
  bytes.strides_bytes[1] = 1;
  return bytes;
}

hwinfer_error* check_embedding_table(const CheckContext& context, const hwinfer_embedding_desc& d) {
  constexpr const char* kName = "embedding";
  const char* plugin = context.plugin_name;
  ViewExpectation table =
      expect_view(kName, "table", d.table.dtype, "[vocab, dim]", {d.vocab, d.dim});
  if (d.table.struct_size < sizeof(hwinfer_tensor_view) || !is_block_dtype(d.table.dtype)) {
    table.contiguous = true;
    return check_view(context, d.table, table);
  }
  const std::string dtype_text = dtype_name(d.table.dtype);
  const char* dtype = dtype_text.c_str();
  if (hwinfer_error* error = check_weight_dtype(context, kName, "table", d.table.dtype)) {
    return error;
  }
  const int64_t block = hwinfer_dtype_block_values(d.table.dtype);
  if (d.dim % block != 0) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "%s embedding: a %s table needs dim %% %" PRId64
                              " == 0; got dim=%" PRId64,
                              plugin, dtype, block, d.dim);
  }
  if (d.table.rank != 2 || d.table.shape[0] != d.vocab || d.table.shape[1] != d.dim) {
    return hwinfer_make_error(
        HWINFER_STATUS_INVALID_ARGUMENT,
        "%s embedding: operand table must be [vocab, dim] = [%" PRId64 ", %" PRId64
        "] (rank 2); got rank %" PRIu32 " shape [%" PRId64 ", %" PRId64 ", ...]",
        plugin, d.vocab, d.dim, d.table.rank, d.table.shape[0], d.table.shape[1]);
  }
  if (d.table.strides_bytes[1] != 0) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "%s embedding: a %s table has packed blocks: its innermost stride "
                              "must be 0; got %" PRId64,
                              plugin, dtype, d.table.strides_bytes[1]);
  }
  const hwinfer_tensor_view bytes = block_table_as_bytes(d);
  ViewExpectation expected =
      expect_view(kName, "table", HWINFER_DTYPE_I8, "[vocab, dim / block * block bytes]",
                  {bytes.shape[0], bytes.shape[1]});
  expected.contiguous = true;
  return check_view(context, bytes, expected);
}

}  // namespace

hwinfer_error* check_kernel(const CheckContext& context, const hwinfer_embedding_desc& d) {
  constexpr const char* kName = "embedding";
  const char* plugin = context.plugin_name;
  if (hwinfer_error* error = check_desc_size(plugin, d.struct_size, sizeof(d), kName)) {
    return error;
  }
  if (d.n_tokens <= 0 || d.vocab <= 0 || d.dim <= 0) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "%s embedding: n_tokens, vocab and dim must be > 0; got "
                              "n_tokens=%" PRId64 " vocab=%" PRId64 " dim=%" PRId64,
                              plugin, d.n_tokens, d.vocab, d.dim);
  }
  if (d.table.struct_size >= sizeof(hwinfer_tensor_view) && !is_block_dtype(d.table.dtype)) {
    if (hwinfer_error* error =
            check_dtype_in(context, d.table, kName, "table",
                           {HWINFER_DTYPE_F32, HWINFER_DTYPE_F16, HWINFER_DTYPE_BF16},
                           "F32, F16, BF16 or a block-quantized dtype")) {
      return error;
    }
  }
  if (hwinfer_error* error =
          check_dtype_in(context, d.ids, kName, "ids", {HWINFER_DTYPE_I32}, "I32")) {
    return error;
  }
  if (hwinfer_error* error =
          check_dtype_in(context, d.out, kName, "out", {HWINFER_DTYPE_F32}, "F32")) {
    return error;
  }
  if (hwinfer_error* error = check_embedding_table(context, d)) return error;
  if (hwinfer_error* error =
          check_view(context, d.ids, expect_token_vector(kName, "ids", d.n_tokens))) {
    return error;
  }
  ViewExpectation out =
      expect_view(kName, "out", HWINFER_DTYPE_F32, "[n_tokens, dim]", {d.n_tokens, d.dim});
  out.contiguous = out.is_output = true;
  if (hwinfer_error* error = check_view(context, d.out, out)) return error;
  const hwinfer_tensor_view table =
      is_block_dtype(d.table.dtype) ? block_table_as_bytes(d) : d.table;
  if (views_overlap(d.out, table)) return overlap_error(context, kName, "out", "table");
  if (views_overlap(d.out, d.ids)) return overlap_error(context, kName, "out", "ids");
  return apply_kernel_limits(context, HWINFER_KERNEL_EMBEDDING, &d);
}

}  // namespace hwinfer::backend

namespace hwinfer::kit {

// embedding: ids and the n_tokens looked-up table rows read, F32 rows written; no flops.
KernelCost count_cost(const hwinfer_embedding_desc& d, const IntArrayReader& /*read_ints*/) {
  const double n_tokens = Positive(d.n_tokens), values = n_tokens * Positive(d.dim);
  KernelCost cost;
  cost.bytes_read = DtypeBytes(HWINFER_DTYPE_I32, n_tokens) + DtypeBytes(d.table.dtype, values);
  cost.bytes_written = DtypeBytes(HWINFER_DTYPE_F32, values);
  return cost;
}

namespace {

KernelSample Embedding(uint32_t dtype, const char* name) {
  auto d = blank_desc<hwinfer_embedding_desc>(HWINFER_KERNEL_EMBEDDING);
  d->n_tokens = kSampleTokens;
  d->vocab = 256;
  d->dim = kSampleDim;
  d->table = sample_view(dtype, {256, kSampleDim});
  d->ids = sample_view(HWINFER_DTYPE_I32, {kSampleTokens});
  d->out = sample_view(HWINFER_DTYPE_F32, {kSampleTokens, kSampleDim});
  return sample(name, d);
}

}  // namespace

std::vector<KernelSample> samples(const hwinfer_embedding_desc*) {
  return {Embedding(HWINFER_DTYPE_F16, "embedding f16"),
          Embedding(HWINFER_DTYPE_Q4_0, "embedding q4_0")};
}

}  // namespace hwinfer::kit
