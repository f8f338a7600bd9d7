// kernels.cpp — the sim plugin's kernels (the kit makes their slots and kernel_query).
//
// Every slot: validate (sdk/include/hwinfer/kit/kernel_checks.h: the CPU backend's checks, so the
// sim accepts exactly what a real backend accepts; kernel_query answers with the same ones), count
// the kernel's bytes and FLOPs with the core's CountKernelCost (int arrays read from backed
// buffers), advance the stream's virtual clock by
//     max(bytes / peak bandwidth, flops / peak FLOP/s of the compute dtype) + launch overhead,
// then write the deterministic pseudo-output (fingerprint.h) into backed outputs. Nothing runs
// later: errors the CPU backend reports "while running" (an embedding id out of range) are kept
// on the stream and returned by its next synchronize.
#include <algorithm>
#include <cinttypes>
#include <cstring>
#include <vector>

#include "fingerprint.h"
#include "hwinfer/kernel_cost.h"
#include "hwinfer/kit/kernel_checks.h"
#include "hwinfer/kit/kernel_slots.h"
#include "reference/half.h"
#include "reference/reference_ops.h"
#include "sim_internal.h"

namespace hwinfer::sim {

namespace {

// The spec peak FLOP/s for |dtype|; falls back to F32's, then to the largest peak the file gives.
double peak_flops(const HardwareSpec& spec, uint32_t dtype) {
  double peak = 0;
  switch (dtype) {
    case HWINFER_DTYPE_F16:
      peak = spec.peak_flops_f16;
      break;
    case HWINFER_DTYPE_BF16:
      peak = spec.peak_flops_bf16;
      break;
    case HWINFER_DTYPE_I8:
      peak = spec.peak_flops_int8;
      break;
    default:
      peak = spec.peak_flops_f32;
      break;
  }
  if (peak <= 0) peak = spec.peak_flops_f32;
  if (peak <= 0) {
    peak = std::max({spec.peak_flops_f16, spec.peak_flops_bf16, spec.peak_flops_int8});
  }
  return peak;
}

// The roofline time of |cost| plus the launch overhead, in ns.
double kernel_ns(const HardwareSpec& spec, const KernelCost& cost) {
  const double bandwidth = spec.peak_bandwidth_bytes_per_s;
  const double peak = peak_flops(spec, cost.compute_dtype);
  const double memory_s = bandwidth > 0 ? cost.bytes() / bandwidth : 0.0;
  const double compute_s = peak > 0 ? cost.flops / peak : 0.0;
  return (std::max(memory_s, compute_s) + spec.launch_overhead_s) * 1e9;
}

// Keeps |error| as the stream's pending error unless one is already pending.
void set_pending(hwinfer_stream* stream, hwinfer_error* error) {
  if (stream->pending_error == nullptr) {
    stream->pending_error = error;
  } else {
    error->destroy(error);
  }
}

// ---- pseudo-outputs (fingerprint.h), one per kernel ------------------------------------------

// Row r of the product = mix(row r of the activations, n); plus the one-hot logit.
void write_product(const hwinfer_tensor_view& in, const hwinfer_tensor_view& out, int64_t rows,
                   int64_t n) {
  for (int64_t r = 0; r < rows; ++r) {
    uint32_t fp = 0;
    if (!read_row(in, r, &fp)) fp = static_cast<uint32_t>(r);
    fp = mix(fp, static_cast<uint32_t>(n));
    write_one_hot(out, r, fp);
    write_row(out, r, fp);
  }
}

void write_outputs(hwinfer_stream*, const hwinfer_gemm_desc& d) {
  write_product(d.a, d.c, d.m, d.n);
}

void write_outputs(hwinfer_stream*, const hwinfer_matmul_quantized_desc& d) {
  write_product(d.x, d.y, d.m, d.n);
}

// Output row t = query row t (the query carries the token and, after rope, its position).
void write_attention_rows(const hwinfer_tensor_view& q, const hwinfer_tensor_view& out,
                          int64_t rows) {
  for (int64_t t = 0; t < rows; ++t) {
    uint32_t fp = 0;
    if (read_row(q, t, &fp)) write_row(out, t, fp);
  }
}

void write_outputs(hwinfer_stream*, const hwinfer_attention_prefill_desc& d) {
  write_attention_rows(d.q, d.out, d.n_tokens);
}

// As the CPU backend: context_lens[s] outside [1, max_blocks_per_seq * block_size] is an error at
// the next synchronize (block ids are not looked at: the pools hold no data here).
void write_outputs(hwinfer_stream* stream, const hwinfer_attention_decode_paged_desc& d) {
  const int64_t capacity = d.max_blocks_per_seq * d.block_size;
  for (int64_t s = 0; s < d.n_seqs; ++s) {
    int32_t len = 1;
    if (read_int(d.context_lens, s, &len) && (len < 1 || len > capacity)) {
      set_pending(stream, hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                                             "sim attention_decode_paged: context_lens[%" PRId64
                                             "] = %" PRId32 " is outside [1, %" PRId64 "]",
                                             s, len, capacity));
      return;
    }
  }
  write_attention_rows(d.q, d.out, d.n_seqs);
}

// The pools hold no fingerprints (attention output follows the query, above); only the slots are
// checked, as the CPU backend does: a slot past num_blocks * block_size is an error at the next
// synchronize (negative slots are padding).
void write_outputs(hwinfer_stream* stream, const hwinfer_kv_append_desc& d) {
  const int64_t slots = d.num_blocks * d.block_size;
  for (int64_t t = 0; t < d.n_tokens; ++t) {
    int32_t slot = -1;
    if (read_int(d.slot_mapping, t, &slot) && slot >= slots) {
      set_pending(stream,
                  hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                                     "sim kv_append: slot_mapping[%" PRId64 "] = %" PRId32
                                     " is outside [0, num_blocks * block_size = %" PRId64 ")",
                                     t, slot, slots));
      return;
    }
  }
}

// Without residual: out = x. With: residual = mix(x, residual); out = residual.
void write_outputs(hwinfer_stream*, const hwinfer_rms_norm_desc& d) {
  const bool fused = d.residual.buffer != nullptr;
  for (int64_t t = 0; t < d.n_tokens; ++t) {
    uint32_t fp = 0;
    if (!read_row(d.x, t, &fp)) continue;
    if (fused) {
      uint32_t residual = 0;
      if (read_row(d.residual, t, &residual)) fp = mix(fp, residual);
      write_row(d.residual, t, fp);
    }
    write_row(d.out, t, fp);
  }
}

// q and k rows of token t mix in positions[t].
void write_outputs(hwinfer_stream*, const hwinfer_rope_desc& d) {
  for (int64_t t = 0; t < d.n_tokens; ++t) {
    int32_t position = static_cast<int32_t>(t);
    read_int(d.positions, t, &position);
    const auto salt = static_cast<uint32_t>(position);
    uint32_t fp = 0;
    if (read_row(d.q, t, &fp)) write_row(d.q, t, mix(fp, salt));
    if (d.k.buffer != nullptr && read_row(d.k, t, &fp)) write_row(d.k, t, mix(fp, salt));
  }
}

// rope_kv_append: rope's rows, then kv_append's slot check, on the two halves of the descriptor
// (the time is the fused kernel's own cost: CountKernelCost of HWINFER_KERNEL_ROPE_KV_APPEND).
void write_outputs(hwinfer_stream* stream, const hwinfer_rope_kv_append_desc& d) {
  hwinfer_rope_desc rope;
  hwinfer_kv_append_desc append;
  hwinfer_split_rope_kv_append(&d, &rope, &append);
  write_outputs(stream, rope);
  write_outputs(stream, append);
}

void write_outputs(hwinfer_stream*, const hwinfer_silu_mul_desc& d) {
  for (int64_t t = 0; t < d.n_tokens; ++t) {
    uint32_t gate = 0, up = 0;
    const bool has_gate = read_row(d.gate, t, &gate);
    const bool has_up = read_row(d.up, t, &up);
    if (has_gate || has_up) write_row(d.out, t, mix(gate, up));
  }
}

// Row t = hash(ids[t]); an id outside [0, vocab) is an error at the next synchronize.
void write_outputs(hwinfer_stream* stream, const hwinfer_embedding_desc& d) {
  for (int64_t t = 0; t < d.n_tokens; ++t) {
    int32_t id = 0;
    if (!read_int(d.ids, t, &id)) continue;
    if (id < 0 || id >= d.vocab) {
      set_pending(stream, hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                                             "sim embedding: ids[%" PRId64 "] = %" PRId32
                                             " is outside [0, vocab = %" PRId64 ")",
                                             t, id, d.vocab));
      return;
    }
    write_row(d.out, t, mix(static_cast<uint32_t>(id), 0xe3b));
  }
}

// The ids of the backed rows of x (the one-hot logit gemm wrote makes it the fingerprint's token);
// rows of a virtual x, or into a virtual ids, are skipped.
void write_outputs(hwinfer_stream*, const hwinfer_argmax_desc& d) {
  if (d.x.buffer->data == nullptr || d.ids.buffer->data == nullptr) return;
  std::vector<float> row(static_cast<size_t>(d.n_cols));
  for (int64_t r = 0; r < d.n_rows; ++r) {
    const uint8_t* x = d.x.buffer->data + d.x.offset_bytes + r * d.x.strides_bytes[0];
    for (int64_t c = 0; c < d.n_cols; ++c) {
      float& value = row[static_cast<size_t>(c)];
      if (d.x.dtype == HWINFER_DTYPE_F16) {
        uint16_t half = 0;
        std::memcpy(&half, x + 2 * c, sizeof(half));
        value = reference::f16_to_f32(half);
      } else {
        std::memcpy(&value, x + 4 * c, sizeof(value));
      }
    }
    int32_t id = 0;
    reference::argmax_reference(1, d.n_cols, row.data(), &id);
    std::memcpy(d.ids.buffer->data + d.ids.offset_bytes + r * d.ids.strides_bytes[0], &id,
                sizeof(id));
  }
}

void write_outputs(hwinfer_stream*, const hwinfer_bandwidth_probe_desc&) {
  // Time only: the probe's bytes are modelled, not moved.
}

}  // namespace

// The kit has checked NULLs and the descriptor (SimBackend::check_context); this prices the kernel
// on the virtual clock with the core's cost count and writes its pseudo-output.
template <typename Desc>
hwinfer_error* SimBackend::enqueue(hwinfer_stream& stream, const Desc& desc) {
  hwinfer_device& device = *stream.device;
  if (device.fail_after_kernels > 0 && ++device.kernels_enqueued > device.fail_after_kernels) {
    return hwinfer_make_error(HWINFER_STATUS_UNAVAILABLE,
                              "sim device %u: simulated device failure (device option "
                              "fail_after_kernels: %llu kernels ran)",
                              device.ordinal,
                              static_cast<unsigned long long>(device.fail_after_kernels));
  }
  const IntArrayReader reader = [](const hwinfer_tensor_view& view, std::vector<int32_t>* out) {
    return read_int_array(view, out);
  };
  const KernelCost cost =
      CountKernelCost(reinterpret_cast<const hwinfer_kernel_desc&>(desc), reader);
  advance_clock(&stream, kernel_ns(device.plugin->spec(device.ordinal), cost));
  write_outputs(&stream, desc);
  return nullptr;
}

#define HWINFER_KERNEL_KIND(KIND, slot, descriptor, abi_minor) \
  template hwinfer_error* SimBackend::enqueue(hwinfer_stream&, const descriptor&);
#include "hwinfer/kernel_kinds.def"

static_assert(kit::kernel_count<SimBackend>() == kit::kKernelKindCount, "the sim runs every kind");

}  // namespace hwinfer::sim
