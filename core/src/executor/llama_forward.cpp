// llama_forward.cpp — the kernel descriptors of one Llama forward pass over a step (see
// hwinfer/llama_executor.h for the data flow). Builds descriptors only; the sink launches them or,
// at Create, asks the device whether it can run them. Shapes: T tokens, P prefill tokens in Sp
// chunks, Sd decode tokens (rows P..T-1), d = d_model, H/Hkv heads of hd, ffn, vocab.
#include <cmath>
#include <cstring>

#include "executor_internal.h"
#include "hwinfer/plugin_support.h"
#include "hwinfer/tensor_view.h"

namespace hwinfer {
namespace {

using executor_internal::KernelSink;
using executor_internal::StepShape;

template <typename Desc>
Desc NewDesc(uint32_t kind) {
  Desc desc;
  std::memset(&desc, 0, sizeof(desc));
  desc.struct_size = sizeof(desc);
  desc.kind = kind;
  return desc;
}

// y [m, w.rows] = x [m, w.cols] w^T: gemm for F32/F16/BF16 weights, matmul_quantized otherwise.
Status EmitMatmul(const KernelSink& sink, const char* what, const hwinfer_tensor_view& x,
                  const DeviceTensor& w, const hwinfer_tensor_view& y) {
  return sink(MakeWeightMatmul(x, w.View(), y).desc(), what);
}

}  // namespace

Status LlamaExecutor::Impl::EmitForward(const executor_internal::Stage& stage,
                                        const ExecutorOptions& options, int32_t num_blocks,
                                        const StepShape& s, const KernelSink& sink,
                                        const executor_internal::ReduceSink* reduce) const {
  const LlamaWeights& weights = *stage.weights;
  const ModelShape& m = weights.model().shape();
  const int64_t T = s.n_tokens, P = s.n_prefill_tokens, Sp = s.n_prefill_seqs, Sd = s.n_decode_seqs;
  // H, Hkv and ffn are this rank's share under tensor parallelism (all of them otherwise).
  const int64_t d = m.d_model, H = dims.n_heads, Hkv = dims.n_kv_heads, hd = dims.head_dim;
  const int64_t ffn = dims.ffn_dim, bs = options.kv_block_size, MB = max_blocks_per_seq;
  const executor_internal::ActivationLayout& L = layout;
  hwinfer_buffer* act = stage.activations.handle();
  auto f32 = [act](uint64_t offset, std::initializer_list<int64_t> shape) {
    return ContiguousView(act, offset, HWINFER_DTYPE_F32, shape);
  };
  auto i32 = [act, this](int64_t element, std::initializer_list<int64_t> shape) {
    return ContiguousView(act, layout.ints + static_cast<uint64_t>(element) * 4, HWINFER_DTYPE_I32,
                          shape);
  };
  const uint64_t q_row = static_cast<uint64_t>(H * hd) * 4;
  const float attention_scale = 1.0f / std::sqrt(static_cast<float>(hd));

  if (stage.first()) {  // x = embedding(ids)
    auto desc = NewDesc<hwinfer_embedding_desc>(HWINFER_KERNEL_EMBEDDING);
    desc.n_tokens = T;
    desc.vocab = m.vocab_size;
    desc.dim = d;
    desc.table = weights.token_embd.View();
    desc.ids = i32(ints.ids, {T});
    desc.out = f32(L.residual, {T, d});
    HWINFER_RETURN_IF_ERROR(sink(AsKernelDesc(desc), "token embedding"));
  }
  // h = rms_norm(x) for the first layer; later norms first add the previous output (in proj) to x.
  auto norm = [&](const DeviceTensor& weight, bool add_proj, const char* what) {
    auto desc = NewDesc<hwinfer_rms_norm_desc>(HWINFER_KERNEL_RMS_NORM);
    desc.n_tokens = T;
    desc.dim = d;
    desc.eps = static_cast<float>(m.rms_eps);
    desc.x = add_proj ? f32(L.proj, {T, d}) : f32(L.residual, {T, d});
    desc.residual = add_proj ? f32(L.residual, {T, d}) : NoView();
    desc.weight = weight.VectorView();
    desc.out = f32(L.normed, {T, d});
    return sink(AsKernelDesc(desc), what);
  };

  for (int64_t l = stage.first_layer; l < stage.end_layer; ++l) {
    const LlamaLayerWeights& w = weights.layers[static_cast<size_t>(l)];
    const executor_internal::LayerKv& cache = stage.kv[static_cast<size_t>(l - stage.first_layer)];
    HWINFER_RETURN_IF_ERROR(norm(w.attn_norm, l > 0, "attention norm"));
    const auto h = f32(L.normed, {T, d});
    HWINFER_RETURN_IF_ERROR(EmitMatmul(sink, "q projection", h, w.wq, f32(L.q, {T, H * hd})));
    HWINFER_RETURN_IF_ERROR(EmitMatmul(sink, "k projection", h, w.wk, f32(L.k, {T, Hkv * hd})));
    HWINFER_RETURN_IF_ERROR(EmitMatmul(sink, "v projection", h, w.wv, f32(L.v, {T, Hkv * hd})));
    const auto pool = [&](const Buffer& b) {
      return ContiguousView(b, 0, kv_dtype, {num_blocks, bs, Hkv, hd});
    };
    const auto scales = [&](const Buffer& b) {
      return kv_dtype == HWINFER_DTYPE_I8
                 ? ContiguousView(b, 0, HWINFER_DTYPE_F32, {num_blocks, Hkv})
                 : NoView();
    };
    // The paged K/V pools (and I8 scales) of this layer, as every KV kernel takes them.
    auto set_paged_cache = [&](auto& desc) {
      desc.k_cache = pool(cache.k);
      desc.v_cache = pool(cache.v);
      desc.k_scales = scales(cache.k_scales);
      desc.v_scales = scales(cache.v_scales);
    };
    // rope(q, k, positions) in place, then kv_append(k, v, slots): one fused kernel where the
    // device has it, else the fused descriptor's two halves (hwinfer_split_rope_kv_append, the
    // same split Create asks the device about).
    auto rope_kv = NewDesc<hwinfer_rope_kv_append_desc>(HWINFER_KERNEL_ROPE_KV_APPEND);
    rope_kv.n_tokens = T;
    rope_kv.n_heads = H;
    rope_kv.n_kv_heads = Hkv;
    rope_kv.head_dim = hd;
    rope_kv.rotary_dim = weights.model().rope_dim();
    rope_kv.theta_base = static_cast<float>(m.rope_theta);
    rope_kv.mode = HWINFER_ROPE_NORMAL;  // GGUF's llama tensors are permuted for adjacent pairs
    rope_kv.q = f32(L.q, {T, H, hd});
    rope_kv.k = f32(L.k, {T, Hkv, hd});
    rope_kv.v = f32(L.v, {T, Hkv, hd});
    rope_kv.positions = i32(ints.positions, {T});
    rope_kv.slot_mapping = i32(ints.slots, {T});
    rope_kv.block_size = bs;
    rope_kv.num_blocks = num_blocks;
    set_paged_cache(rope_kv);
    if (stage.fuse_rope_kv_append) {
      HWINFER_RETURN_IF_ERROR(sink(AsKernelDesc(rope_kv), "rope + kv append"));
    } else {
      hwinfer_rope_desc rope;
      hwinfer_kv_append_desc append;
      hwinfer_split_rope_kv_append(&rope_kv, &rope, &append);
      HWINFER_RETURN_IF_ERROR(sink(AsKernelDesc(rope), "rope"));
      HWINFER_RETURN_IF_ERROR(sink(AsKernelDesc(append), "kv append"));
    }
    if (Sp > 0) {  // prefill chunks: their cached prefix, then causally their own tokens
      auto desc = NewDesc<hwinfer_attention_prefill_desc>(HWINFER_KERNEL_ATTENTION_PREFILL);
      desc.n_tokens = P;
      desc.n_seqs = Sp;
      desc.n_heads = H;
      desc.n_kv_heads = Hkv;
      desc.head_dim = hd;
      desc.block_size = bs;
      desc.scale = attention_scale;
      desc.causal = 1;
      desc.q = f32(L.q, {P, H, hd});
      desc.k = f32(L.k, {P, Hkv, hd});
      desc.v = f32(L.v, {P, Hkv, hd});
      desc.out = f32(L.attn, {P, H, hd});
      desc.query_start = i32(ints.query_start, {Sp + 1});
      set_paged_cache(desc);
      desc.block_tables = i32(ints.prefill_tables, {Sp, MB});
      desc.context_lens = i32(ints.prefill_context, {Sp});
      HWINFER_RETURN_IF_ERROR(sink(AsKernelDesc(desc), "prefill attention"));
    }
    if (Sd > 0) {  // decode tokens: rows P..T-1, against the paged history including themselves
      auto desc =
          NewDesc<hwinfer_attention_decode_paged_desc>(HWINFER_KERNEL_ATTENTION_DECODE_PAGED);
      desc.n_seqs = Sd;
      desc.n_heads = H;
      desc.n_kv_heads = Hkv;
      desc.head_dim = hd;
      desc.block_size = bs;
      desc.max_blocks_per_seq = MB;
      desc.scale = attention_scale;
      desc.q = f32(L.q + static_cast<uint64_t>(P) * q_row, {Sd, H, hd});
      desc.out = f32(L.attn + static_cast<uint64_t>(P) * q_row, {Sd, H, hd});
      set_paged_cache(desc);
      desc.block_tables = i32(ints.decode_tables, {Sd, MB});
      desc.context_lens = i32(ints.decode_context, {Sd});
      HWINFER_RETURN_IF_ERROR(sink(AsKernelDesc(desc), "decode attention"));
    }
    HWINFER_RETURN_IF_ERROR(
        EmitMatmul(sink, "attention output", f32(L.attn, {T, H * hd}), w.wo, f32(L.proj, {T, d})));
    if (reduce != nullptr) HWINFER_RETURN_IF_ERROR((*reduce)(L.proj, T * d, l, "attention output"));
    HWINFER_RETURN_IF_ERROR(norm(w.ffn_norm, true, "ffn norm"));
    HWINFER_RETURN_IF_ERROR(EmitMatmul(sink, "ffn gate", h, w.w_gate, f32(L.gate, {T, ffn})));
    HWINFER_RETURN_IF_ERROR(EmitMatmul(sink, "ffn up", h, w.w_up, f32(L.up, {T, ffn})));
    {
      auto desc = NewDesc<hwinfer_silu_mul_desc>(HWINFER_KERNEL_SILU_MUL);
      desc.n_tokens = T;
      desc.dim = ffn;
      desc.gate = f32(L.gate, {T, ffn});
      desc.up = f32(L.up, {T, ffn});
      desc.out = f32(L.act, {T, ffn});
      HWINFER_RETURN_IF_ERROR(sink(AsKernelDesc(desc), "silu mul"));
    }
    HWINFER_RETURN_IF_ERROR(
        EmitMatmul(sink, "ffn down", f32(L.act, {T, ffn}), w.w_down, f32(L.proj, {T, d})));
    if (reduce != nullptr) HWINFER_RETURN_IF_ERROR((*reduce)(L.proj, T * d, l, "ffn down"));
  }
  return stage.last ? norm(weights.output_norm, true, "output norm") : Status::Ok();
}

Status LlamaExecutor::Impl::EmitLogits(const executor_internal::Stage& stage, const StepShape& s,
                                       const KernelSink& sink) const {
  if (s.n_logits == 0) return Status::Ok();
  const LlamaWeights& weights = *stage.weights;
  const ModelShape& m = weights.model().shape();
  // The caller has copied the wanted rows of normed into last, unless they are its first rows.
  const uint64_t input = s.logits_from_normed ? layout.normed : layout.last;
  hwinfer_buffer* act = stage.activations.handle();
  return EmitMatmul(
      sink, "output projection",
      ContiguousView(act, input, HWINFER_DTYPE_F32, {s.n_logits, m.d_model}), weights.output,
      ContiguousView(act, layout.logits, HWINFER_DTYPE_F32, {s.n_logits, m.vocab_size}));
}

}  // namespace hwinfer
