// weight_blocks.h — the device-side dequantizers of every GGML weight type of plugin.h (ABI 1.2):
// one struct per type with its block size (kValues), block bytes (kBytes) and value(block, j),
// value j of one block, read byte by byte (blocks at any byte address). Written from plugin.h's
// layout comments, as the oracle (sdk/reference/weight_blocks.cpp) is, and exact in f32:
// each product of a binary16 scale and an integer is exact in f32 (at most 24 significant bits)
// and a min is added or subtracted with one rounding, so every value equals the oracle's.
//
// Shared by matmul_q_dequant.cu (the GEMV of the types without a dp4a path, and the tiled GEMM
// of every type) and rows.cu (embedding): a new type is one struct here plus one case in
// weight_value and with_weight_block. Device code only (kernel files include it).
#ifndef HWINFER_BACKENDS_CUDA_WEIGHT_BLOCKS_H_
#define HWINFER_BACKENDS_CUDA_WEIGHT_BLOCKS_H_

#include <cstdint>

#include "gpu_device.h"
#include "hwinfer/plugin.h"

namespace hwinfer::gpu {

// The binary16 at |p| (any address) as a float.
__device__ __forceinline__ float half_at(const uint8_t* p) {
  return f16_to_float(static_cast<uint16_t>(p[0] | (p[1] << 8)));
}

// The 4-bit value j (0..31) of a 32-value block whose 16 nibble bytes start at |qs|: value j in
// the low nibble of qs[j], value j + 16 in the high nibble.
__device__ __forceinline__ int nibble32(const uint8_t* qs, int j) {
  return j < 16 ? qs[j] & 15 : qs[j - 16] >> 4;
}

// Bit j (0..31) of the little-endian 32-bit word at |qh| (Q5_0 / Q5_1's fifth bits).
__device__ __forceinline__ int bit32(const uint8_t* qh, int j) {
  return (qh[j / 8] >> (j % 8)) & 1;
}

// The 2-bit value of i (0..255) in Q2_K / Q3_K's qs layout.
__device__ __forceinline__ int crumb256(const uint8_t* qs, int i) {
  const int h = i / 128, r = i % 128;
  return (qs[32 * h + r % 32] >> (2 * (r / 32))) & 3;
}

// Q4_K / Q5_K's 6-bit scale and min of sub-block s (0..7) from the 12 bytes at |scales|.
__device__ __forceinline__ void scale_min_k4(const uint8_t* scales, int s, int* scale, int* min) {
  if (s < 4) {
    *scale = scales[s] & 63;
    *min = scales[s + 4] & 63;
  } else {
    *scale = (scales[s + 4] & 15) | ((scales[s - 4] >> 6) << 4);
    *min = (scales[s + 4] >> 4) | ((scales[s] >> 6) << 4);
  }
}

// ---- 32-value blocks: d (binary16) at byte 0 ----------------------------------------------------

struct Q4_0Block {  // d, 16 nibble bytes: d (q - 8)
  static constexpr uint32_t kType = HWINFER_DTYPE_Q4_0;
  static constexpr int kValues = 32, kBytes = 18;
  __device__ static float value(const uint8_t* b, int j) {
    return half_at(b) * static_cast<float>(nibble32(b + 2, j) - 8);
  }
};

struct Q4_1Block {  // d, m, 16 nibble bytes: d q + m
  static constexpr uint32_t kType = HWINFER_DTYPE_Q4_1;
  static constexpr int kValues = 32, kBytes = 20;
  __device__ static float value(const uint8_t* b, int j) {
    return half_at(b) * static_cast<float>(nibble32(b + 4, j)) + half_at(b + 2);
  }
};

struct Q5_0Block {  // d, qh[4], 16 nibble bytes: d (q - 16)
  static constexpr uint32_t kType = HWINFER_DTYPE_Q5_0;
  static constexpr int kValues = 32, kBytes = 22;
  __device__ static float value(const uint8_t* b, int j) {
    const int q = nibble32(b + 6, j) | (bit32(b + 2, j) << 4);
    return half_at(b) * static_cast<float>(q - 16);
  }
};

struct Q5_1Block {  // d, m, qh[4], 16 nibble bytes: d q + m
  static constexpr uint32_t kType = HWINFER_DTYPE_Q5_1;
  static constexpr int kValues = 32, kBytes = 24;
  __device__ static float value(const uint8_t* b, int j) {
    const int q = nibble32(b + 8, j) | (bit32(b + 4, j) << 4);
    return half_at(b) * static_cast<float>(q) + half_at(b + 2);
  }
};

struct Q8_0Block {  // d, 32 int8: d q
  static constexpr uint32_t kType = HWINFER_DTYPE_Q8_0;
  static constexpr int kValues = 32, kBytes = 34;
  __device__ static float value(const uint8_t* b, int j) {
    return half_at(b) * static_cast<float>(static_cast<int8_t>(b[2 + j]));
  }
};

struct IQ4_NLBlock {  // d, 16 nibble bytes: d table[q]
  static constexpr uint32_t kType = HWINFER_DTYPE_IQ4_NL;
  static constexpr int kValues = 32, kBytes = 18;
  __device__ static float value(const uint8_t* b, int j) {
    // HWINFER_IQ4_NL_VALUES as bytes, entry 0 lowest: no table in memory.
    constexpr uint64_t kLow = 0xF6EADDCFBFAD9881ull;   // -127 -104 -83 -65 -49 -35 -22 -10
    constexpr uint64_t kHigh = 0x7159453526190D01ull;  // 1 13 25 38 53 69 89 113
    const int q = nibble32(b + 2, j);
    const auto entry = static_cast<int8_t>(((q < 8 ? kLow : kHigh) >> (8 * (q & 7))) & 0xff);
    return half_at(b) * static_cast<float>(entry);
  }
};

// ---- 256-value super-blocks ---------------------------------------------------------------------

struct Q2_KBlock {  // scales[16], qs[64], d, dmin: d sc q - dmin mn
  static constexpr uint32_t kType = HWINFER_DTYPE_Q2_K;
  static constexpr int kValues = 256, kBytes = 84;
  __device__ static float value(const uint8_t* b, int i) {
    const int sc = b[i / 16];
    return half_at(b + 80) * static_cast<float>((sc & 15) * crumb256(b + 16, i)) -
           half_at(b + 82) * static_cast<float>(sc >> 4);
  }
};

struct Q3_KBlock {  // hmask[32], qs[64], scales[12], d: d (sc - 32) (q - 4 h')
  static constexpr uint32_t kType = HWINFER_DTYPE_Q3_K;
  static constexpr int kValues = 256, kBytes = 110;
  __device__ static float value(const uint8_t* b, int i) {
    const uint8_t* scales = b + 96;
    const int s = i / 16;
    const int low = s < 8 ? scales[s] & 15 : scales[s - 8] >> 4;
    const int high = (scales[8 + s % 4] >> (2 * (s / 4))) & 3;
    const int bit = (b[i % 32] >> (i / 32)) & 1;
    const int q = crumb256(b + 32, i) - (bit ? 0 : 4);
    return half_at(b + 108) * static_cast<float>(((low | (high << 4)) - 32) * q);
  }
};

// Q4_K and Q5_K: d, dmin, scales[12], (Q5_K: qh[32]), qs[128]: d sc q - dmin mn.
template <bool kFifthBit>
struct QK4Block {
  static constexpr uint32_t kType = kFifthBit ? HWINFER_DTYPE_Q5_K : HWINFER_DTYPE_Q4_K;
  static constexpr int kValues = 256, kBytes = kFifthBit ? 176 : 144;
  __device__ static float value(const uint8_t* b, int i) {
    const uint8_t* qs = b + (kFifthBit ? 48 : 16);
    const uint8_t byte = qs[32 * (i / 64) + i % 32];
    int q = i % 64 < 32 ? byte & 15 : byte >> 4;
    if (kFifthBit) q += ((b[16 + i % 32] >> (i / 32)) & 1) * 16;
    int scale = 0, min = 0;
    scale_min_k4(b + 4, i / 32, &scale, &min);
    return half_at(b) * static_cast<float>(scale * q) - half_at(b + 2) * static_cast<float>(min);
  }
};
using Q4_KBlock = QK4Block<false>;
using Q5_KBlock = QK4Block<true>;

struct Q6_KBlock {  // ql[128], qh[64], int8 scales[16], d: d sc (q - 32)
  static constexpr uint32_t kType = HWINFER_DTYPE_Q6_K;
  static constexpr int kValues = 256, kBytes = 210;
  __device__ static float value(const uint8_t* b, int i) {
    const int h = i / 128, r = i % 128, l = r % 32, t = r / 32;
    const uint8_t low_byte = b[64 * h + l + 32 * (t & 1)];
    const int low = t < 2 ? low_byte & 15 : low_byte >> 4;
    const int high = (b[128 + 32 * h + l] >> (2 * t)) & 3;
    const int scale = static_cast<int8_t>(b[192 + i / 16]);
    return half_at(b + 208) * static_cast<float>(scale * ((low | (high << 4)) - 32));
  }
};

// Value |i| of a row of blocks of |Block| starting at |row|.
template <typename Block>
__device__ __forceinline__ float row_value(const uint8_t* row, int64_t i) {
  return Block::value(row + (i / Block::kValues) * Block::kBytes,
                      static_cast<int>(i % Block::kValues));
}

// Value |i| of a row of blocks of |dtype| (a block dtype of plugin.h; 0 for any other).
__device__ __forceinline__ float weight_value(uint32_t dtype, const uint8_t* row, int64_t i) {
  switch (dtype) {
    case HWINFER_DTYPE_Q4_0:
      return row_value<Q4_0Block>(row, i);
    case HWINFER_DTYPE_Q4_1:
      return row_value<Q4_1Block>(row, i);
    case HWINFER_DTYPE_Q5_0:
      return row_value<Q5_0Block>(row, i);
    case HWINFER_DTYPE_Q5_1:
      return row_value<Q5_1Block>(row, i);
    case HWINFER_DTYPE_Q8_0:
      return row_value<Q8_0Block>(row, i);
    case HWINFER_DTYPE_IQ4_NL:
      return row_value<IQ4_NLBlock>(row, i);
    case HWINFER_DTYPE_Q2_K:
      return row_value<Q2_KBlock>(row, i);
    case HWINFER_DTYPE_Q3_K:
      return row_value<Q3_KBlock>(row, i);
    case HWINFER_DTYPE_Q4_K:
      return row_value<Q4_KBlock>(row, i);
    case HWINFER_DTYPE_Q5_K:
      return row_value<Q5_KBlock>(row, i);
    case HWINFER_DTYPE_Q6_K:
      return row_value<Q6_KBlock>(row, i);
    default:
      return 0.0f;
  }
}

// Host side: |launch(Block{})| for the Block struct of |dtype|, or gpuErrorInvalidValue for a
// dtype without one (the shared checks refuse those first).
template <typename Launch>
gpuError_t with_weight_block(uint32_t dtype, Launch&& launch) {
  switch (dtype) {
    case HWINFER_DTYPE_Q4_0:
      return launch(Q4_0Block{});
    case HWINFER_DTYPE_Q4_1:
      return launch(Q4_1Block{});
    case HWINFER_DTYPE_Q5_0:
      return launch(Q5_0Block{});
    case HWINFER_DTYPE_Q5_1:
      return launch(Q5_1Block{});
    case HWINFER_DTYPE_Q8_0:
      return launch(Q8_0Block{});
    case HWINFER_DTYPE_IQ4_NL:
      return launch(IQ4_NLBlock{});
    case HWINFER_DTYPE_Q2_K:
      return launch(Q2_KBlock{});
    case HWINFER_DTYPE_Q3_K:
      return launch(Q3_KBlock{});
    case HWINFER_DTYPE_Q4_K:
      return launch(Q4_KBlock{});
    case HWINFER_DTYPE_Q5_K:
      return launch(Q5_KBlock{});
    case HWINFER_DTYPE_Q6_K:
      return launch(Q6_KBlock{});
    default:
      return GPU(ErrorInvalidValue);
  }
}

}  // namespace hwinfer::gpu

#endif  // HWINFER_BACKENDS_CUDA_WEIGHT_BLOCKS_H_
