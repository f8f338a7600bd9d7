// weight_formats.cpp — see weight_formats.h. One unpacker per type, walking plugin.h's layout in
// the order the bytes lie; the dequantizer and the two dot products (32-value blocks with
// XBlockQ8, 256-value super-blocks with XBlockQ8K) are shared by all types.
#include "weight_formats.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <utility>

#include "hwinfer/plugin.h"
#include "reference/half.h"

namespace hwinfer::cpu {

namespace {

float half_at(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, sizeof(h));
  return reference::f16_to_f32(h);
}

// Nibbles of a 32-value block: value t in the low nibble of qs[t], value t + 16 in the high one;
// |offset| subtracted from each.
void unpack_nibbles(const uint8_t* qs, int offset, int8_t* q) {
  for (int t = 0; t < 16; ++t) {
    q[t] = static_cast<int8_t>((qs[t] & 15) - offset);
    q[t + 16] = static_cast<int8_t>((qs[t] >> 4) - offset);
  }
}

void unpack_q4_1(const uint8_t* b, UnpackedWeights* out) {
  unpack_nibbles(b + 4, 0, out->q);
  out->scale[0] = half_at(b);
  out->min[0] = -half_at(b + 2);
}

// Q5_0 / Q5_1: the fifth bit of value t is bit t of the little-endian uint32 at |qh|.
void add_fifth_bits(const uint8_t* qh, int8_t* q) {
  for (int t = 0; t < 32; ++t) {
    q[t] = static_cast<int8_t>(q[t] + (((qh[t / 8] >> (t % 8)) & 1) << 4));
  }
}

void unpack_q5_0(const uint8_t* b, UnpackedWeights* out) {
  unpack_nibbles(b + 6, 0, out->q);
  add_fifth_bits(b + 2, out->q);
  for (int t = 0; t < 32; ++t) out->q[t] = static_cast<int8_t>(out->q[t] - 16);
  out->scale[0] = half_at(b);
  out->min[0] = 0.0f;
}

void unpack_q5_1(const uint8_t* b, UnpackedWeights* out) {
  unpack_nibbles(b + 8, 0, out->q);
  add_fifth_bits(b + 4, out->q);
  out->scale[0] = half_at(b);
  out->min[0] = -half_at(b + 2);
}

void unpack_iq4_nl(const uint8_t* b, UnpackedWeights* out) {
  static constexpr int8_t kValues[16] = HWINFER_IQ4_NL_VALUES;
  for (int t = 0; t < 16; ++t) {
    out->q[t] = kValues[b[2 + t] & 15];
    out->q[t + 16] = kValues[b[2 + t] >> 4];
  }
  out->scale[0] = half_at(b);
  out->min[0] = 0.0f;
}

// Q2_K / Q3_K's 2-bit values: each half of 128 has 32 bytes; bits 2 j of byte l hold value
// 32 j + l of the half.
void unpack_crumbs(const uint8_t* qs, int8_t* q) {
  for (int h = 0; h < 2; ++h) {
    for (int j = 0; j < 4; ++j) {
      for (int l = 0; l < 32; ++l) {
        q[128 * h + 32 * j + l] = static_cast<int8_t>((qs[32 * h + l] >> (2 * j)) & 3);
      }
    }
  }
}

void unpack_q2_k(const uint8_t* b, UnpackedWeights* out) {
  unpack_crumbs(b + 16, out->q);
  const float d = half_at(b + 80), dmin = half_at(b + 82);
  for (int s = 0; s < 16; ++s) {
    out->scale[s] = d * static_cast<float>(b[s] & 15);
    out->min[s] = dmin * static_cast<float>(b[s] >> 4);
  }
}

void unpack_q3_k(const uint8_t* b, UnpackedWeights* out) {
  unpack_crumbs(b + 32, out->q);
  for (int t = 0; t < 256; ++t) {  // high bit clear: the value is 4 lower
    if (((b[t % 32] >> (t / 32)) & 1) == 0) out->q[t] = static_cast<int8_t>(out->q[t] - 4);
  }
  const uint8_t* scales = b + 96;
  const float d = half_at(b + 108);
  for (int s = 0; s < 16; ++s) {
    const int low = s < 8 ? scales[s] & 15 : scales[s - 8] >> 4;
    const int high = (scales[8 + s % 4] >> (2 * (s / 4))) & 3;
    out->scale[s] = d * static_cast<float>((low | (high << 4)) - 32);
    out->min[s] = 0.0f;
  }
}

// Q4_K / Q5_K: 6-bit scales and mins of the 8 sub-blocks of 32, then the nibbles: each chunk of
// 64 values has 32 bytes, low nibbles first.
void unpack_k4_common(const uint8_t* b, const uint8_t* qs, UnpackedWeights* out) {
  const uint8_t* scales = b + 4;
  const float d = half_at(b), dmin = half_at(b + 2);
  for (int s = 0; s < 8; ++s) {
    int scale = 0, min = 0;
    if (s < 4) {
      scale = scales[s] & 63;
      min = scales[s + 4] & 63;
    } else {
      scale = (scales[s + 4] & 15) | ((scales[s - 4] >> 6) << 4);
      min = (scales[s + 4] >> 4) | ((scales[s] >> 6) << 4);
    }
    out->scale[s] = d * static_cast<float>(scale);
    out->min[s] = dmin * static_cast<float>(min);
  }
  for (int c = 0; c < 4; ++c) {
    for (int l = 0; l < 32; ++l) {
      out->q[64 * c + l] = static_cast<int8_t>(qs[32 * c + l] & 15);
      out->q[64 * c + 32 + l] = static_cast<int8_t>(qs[32 * c + l] >> 4);
    }
  }
}

void unpack_q4_k(const uint8_t* b, UnpackedWeights* out) { unpack_k4_common(b, b + 16, out); }

void unpack_q5_k(const uint8_t* b, UnpackedWeights* out) {
  unpack_k4_common(b, b + 48, out);
  const uint8_t* qh = b + 16;
  for (int t = 0; t < 256; ++t) {
    out->q[t] = static_cast<int8_t>(out->q[t] + (((qh[t % 32] >> (t / 32)) & 1) << 4));
  }
}

void unpack_q6_k(const uint8_t* b, UnpackedWeights* out) {
  const uint8_t* ql = b;
  const uint8_t* qh = b + 128;
  for (int h = 0; h < 2; ++h) {
    for (int l = 0; l < 32; ++l) {
      const uint8_t low_a = ql[64 * h + l], low_b = ql[64 * h + 32 + l], high = qh[32 * h + l];
      int8_t* q = out->q + 128 * h + l;
      q[0] = static_cast<int8_t>(((low_a & 15) | ((high & 3) << 4)) - 32);
      q[32] = static_cast<int8_t>(((low_b & 15) | (((high >> 2) & 3) << 4)) - 32);
      q[64] = static_cast<int8_t>(((low_a >> 4) | (((high >> 4) & 3) << 4)) - 32);
      q[96] = static_cast<int8_t>(((low_b >> 4) | (((high >> 6) & 3) << 4)) - 32);
    }
  }
  const float d = half_at(b + 208);
  for (int s = 0; s < 16; ++s) {
    out->scale[s] = d * static_cast<float>(static_cast<int8_t>(b[192 + s]));
    out->min[s] = 0.0f;
  }
}

constexpr WeightFormat kFormats[] = {
    {HWINFER_DTYPE_Q4_1, 32, HWINFER_Q4_1_BLOCK_BYTES, 32, false, &unpack_q4_1},
    {HWINFER_DTYPE_Q5_0, 32, HWINFER_Q5_0_BLOCK_BYTES, 32, false, &unpack_q5_0},
    {HWINFER_DTYPE_Q5_1, 32, HWINFER_Q5_1_BLOCK_BYTES, 32, false, &unpack_q5_1},
    {HWINFER_DTYPE_IQ4_NL, 32, HWINFER_IQ4_NL_BLOCK_BYTES, 32, false, &unpack_iq4_nl},
    {HWINFER_DTYPE_Q2_K, 256, HWINFER_Q2_K_BLOCK_BYTES, 16, true, &unpack_q2_k},
    {HWINFER_DTYPE_Q3_K, 256, HWINFER_Q3_K_BLOCK_BYTES, 16, true, &unpack_q3_k},
    {HWINFER_DTYPE_Q4_K, 256, HWINFER_Q4_K_BLOCK_BYTES, 32, true, &unpack_q4_k},
    {HWINFER_DTYPE_Q5_K, 256, HWINFER_Q5_K_BLOCK_BYTES, 32, true, &unpack_q5_k},
    {HWINFER_DTYPE_Q6_K, 256, HWINFER_Q6_K_BLOCK_BYTES, 16, true, &unpack_q6_k},
};

int32_t int_dot(const int8_t* a, const int8_t* b, int64_t count) {
  int32_t sum = 0;
  for (int64_t t = 0; t < count; ++t) sum += int32_t{a[t]} * int32_t{b[t]};
  return sum;
}

// 32-value blocks: sums[i] += scale * d_x * sum(q_w q_x) - min * s_x per block (min only for the
// types that have one, with s_x = d_x * sum(q_x) as llama.cpp's Q8_1 rounds it).
void dot_blocks_32(const WeightFormat& format, const XBlockQ8* xq, int64_t x_stride, int64_t m,
                   const uint8_t* w_row, int64_t blocks, float* sums) {
  UnpackedWeights w;
  for (int64_t b = 0; b < blocks; ++b) {
    format.unpack(w_row + b * format.block_bytes, &w);
    for (int64_t i = 0; i < m; ++i) {
      const XBlockQ8& x = xq[i * x_stride + b];
      const auto dot = static_cast<float>(int_dot(w.q, x.q, 32));
      sums[i] += w.scale[0] * x.d * dot - w.min[0] * x.s;
    }
  }
}

// Super-blocks: sums[i] += d_x * sum_s (scale_s sum(q_w q_x) - min_s sum(q_x)) per super-block,
// the sums of q_x per sub-block read from bsums.
void dot_blocks_256(const WeightFormat& format, const XBlockQ8K* xq, int64_t x_stride, int64_t m,
                    const uint8_t* w_row, int64_t blocks, float* sums) {
  UnpackedWeights w;
  const int64_t sub = format.sub_values;
  for (int64_t b = 0; b < blocks; ++b) {
    format.unpack(w_row + b * format.block_bytes, &w);
    for (int64_t i = 0; i < m; ++i) {
      const XBlockQ8K& x = xq[i * x_stride + b];
      float scaled = 0.0f, mins = 0.0f;
      for (int64_t s = 0; s < 256 / sub; ++s) {
        scaled += w.scale[s] * static_cast<float>(int_dot(w.q + s * sub, x.q + s * sub, sub));
        int32_t x_sum = x.bsums[s * sub / 16];
        if (sub == 32) x_sum += x.bsums[s * 2 + 1];
        mins += w.min[s] * static_cast<float>(x_sum);
      }
      sums[i] += x.d * (scaled - mins);
    }
  }
}

// The portable kernels, on the format of kFormats[I].
template <size_t I>
void dequantize_portable(const uint8_t* w_row, int64_t blocks, float* out) {
  const WeightFormat& format = kFormats[I];
  UnpackedWeights w;
  const int64_t values = format.block_values;
  for (int64_t b = 0; b < blocks; ++b) {
    format.unpack(w_row + b * format.block_bytes, &w);
    for (int64_t t = 0; t < values; ++t) {
      const int64_t s = t / format.sub_values;
      out[b * values + t] = w.scale[s] * static_cast<float>(w.q[t]) - w.min[s];
    }
  }
}

template <size_t I>
void dot_portable(const void* xq, int64_t x_stride, int64_t m, const uint8_t* w_row, int64_t blocks,
                  float* sums) {
  const WeightFormat& format = kFormats[I];
  for (int64_t i = 0; i < m; ++i) sums[i] = 0.0f;
  if (format.x_q8_k) {
    dot_blocks_256(format, static_cast<const XBlockQ8K*>(xq), x_stride, m, w_row, blocks, sums);
  } else {
    dot_blocks_32(format, static_cast<const XBlockQ8*>(xq), x_stride, m, w_row, blocks, sums);
  }
}

struct PortableKernels {
  WeightDotFn dot;
  WeightDequantizeFn dequantize;
};

template <size_t... I>
constexpr std::array<PortableKernels, sizeof...(I)> portable_kernels(std::index_sequence<I...>) {
  return {PortableKernels{&dot_portable<I>, &dequantize_portable<I>}...};
}

// kPortable[i] runs kFormats[i].
constexpr auto kPortable = portable_kernels(std::make_index_sequence<std::size(kFormats)>());

size_t format_index(uint32_t dtype) {
  for (size_t i = 0; i < std::size(kFormats); ++i) {
    if (kFormats[i].dtype == dtype) return i;
  }
  return 0;  // callers pass a type weight_format knows
}

}  // namespace

void quantize_x_q8_k(const float* x, int64_t blocks, XBlockQ8K* out) {
  for (int64_t b = 0; b < blocks; ++b) {
    const float* v = x + b * 256;
    XBlockQ8K& o = out[b];
    float amax = 0.0f, max = 0.0f;
    for (int t = 0; t < 256; ++t) {
      if (std::fabs(v[t]) > amax) {
        amax = std::fabs(v[t]);
        max = v[t];
      }
    }
    if (amax == 0.0f) {
      std::memset(&o, 0, sizeof(o));
      continue;
    }
    const float iscale = -127.0f / max;
    for (int t = 0; t < 256; ++t) {
      o.q[t] = static_cast<int8_t>(std::min(127L, std::lrint(iscale * v[t])));
    }
    for (int s = 0; s < 16; ++s) {
      int sum = 0;
      for (int t = 0; t < 16; ++t) sum += o.q[16 * s + t];
      o.bsums[s] = static_cast<int16_t>(sum);
    }
    o.d = 1.0f / iscale;
  }
}

const WeightFormat* weight_format(uint32_t dtype) {
  for (const WeightFormat& format : kFormats) {
    if (format.dtype == dtype) return &format;
  }
  return nullptr;
}

#if defined(HWINFER_CPU_HAVE_AVX512_KERNEL)
bool use_avx512_vnni() {
  static const bool use = [] {
    const char* setting = std::getenv("HWINFER_CPU_AVX512");
    if (setting != nullptr && std::strcmp(setting, "0") == 0) return false;
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni");
  }();
  return use;
}
#endif
#if defined(HWINFER_CPU_HAVE_AVX512_BF16_KERNEL)
bool use_avx512_bf16() {
  static const bool use = use_avx512_vnni() && __builtin_cpu_supports("avx512bf16");
  return use;
}
#endif

WeightDotFn weight_dot(uint32_t dtype, GemmIsa isa) {
#if defined(HWINFER_CPU_HAVE_AVX512_KERNEL)
  if (isa == GemmIsa::kAvx2Fma && use_avx512_vnni()) {
    if (WeightDotFn avx512 = weight_dot_avx512(dtype)) return avx512;
  }
#endif
#if defined(HWINFER_CPU_HAVE_AVX2_KERNEL)
  if (isa == GemmIsa::kAvx2Fma) {
    if (WeightDotFn avx2 = weight_dot_avx2(dtype)) return avx2;
  }
#else
  (void)isa;
#endif
  return kPortable[format_index(dtype)].dot;
}

WeightDequantizeFn weight_dequantize(uint32_t dtype, GemmIsa isa) {
#if defined(HWINFER_CPU_HAVE_AVX2_KERNEL)
  if (isa == GemmIsa::kAvx2Fma) {
    if (WeightDequantizeFn avx2 = weight_dequantize_avx2(dtype)) return avx2;
  }
#else
  (void)isa;
#endif
  return kPortable[format_index(dtype)].dequantize;
}

}  // namespace hwinfer::cpu
