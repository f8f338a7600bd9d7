// paged_kv_helpers.h — host-side helpers shared by the paged-KV conformance suites (kv_append,
// attention_decode_paged, attention_prefill): device operands between poisoned guard bands,
// typed <-> byte vectors, f16 rounding, random values, shuffled block ids, and NMSE.
//
// Helpers only: they report through their return values (or AssertionResult) and must not decide
// what a backend may get wrong.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <random>
#include <string>
#include <vector>

#include "hwinfer/device.h"
#include "hwinfer/status.h"
#include "hwinfer/tensor_view.h"
#include "reference/reference_attention.h"

namespace hwinfer::conformance {

// Bytes of poisoned guard band before and after every operand's payload.
constexpr uint64_t kGuardBandBytes = 64;

// One operand in a device buffer: [guard | payload | guard].
struct GuardedOperand {
  Buffer buffer;
  uint64_t payload_bytes = 0;
  // A contiguous view of the payload.
  hwinfer_tensor_view View(uint32_t dtype, std::initializer_list<int64_t> shape) const {
    return ContiguousView(buffer, kGuardBandBytes, dtype, shape);
  }
};

// Allocates a guarded operand and uploads |payload| (the guards are kPoisonByte).
StatusOr<GuardedOperand> MakeOperand(Device& device, Stream& stream,
                                     const std::vector<uint8_t>& payload);

// Downloads |operand| into |payload|; fails (naming |what|) when a guard byte changed or the
// download failed.
testing::AssertionResult ReadOperand(Stream& stream, const GuardedOperand& operand,
                                     std::vector<uint8_t>* payload, const std::string& what);

template <typename T>
std::vector<uint8_t> AsBytes(const std::vector<T>& values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(T));
  if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

template <typename T>
std::vector<T> FromBytes(const std::vector<uint8_t>& bytes) {
  std::vector<T> values(bytes.size() / sizeof(T));
  if (!values.empty()) std::memcpy(values.data(), bytes.data(), values.size() * sizeof(T));
  return values;
}

// |n| values uniform in [-amplitude, amplitude).
std::vector<float> RandomFloats(size_t n, float amplitude, std::mt19937_64& rng);
// f16 bits of every value (round to nearest even), and the values those bits hold.
std::vector<uint16_t> ToF16Bits(const std::vector<float>& values);
std::vector<float> RoundedToF16(const std::vector<float>& values);
// |values| encoded as |dtype| (F32 or F16) bytes.
std::vector<uint8_t> EncodeAs(uint32_t dtype, const std::vector<float>& values);
// Decodes F32 or F16 bytes.
std::vector<float> DecodeFrom(uint32_t dtype, const std::vector<uint8_t>& bytes);

// 0 .. n-1 in random order (block ids that are not in sequence).
std::vector<int32_t> ShuffledIds(int32_t n, std::mt19937_64& rng);

// sum((x - ref)^2) / sum(ref^2) (0 when both are all zero).
double Nmse(const std::vector<float>& x, const std::vector<double>& ref);

// A paged KV cache on the host: random values in [-1, 1) laid out as plugin.h's paged layout, the
// sequences' blocks taken from a shuffled list of ids (so tables are not in order), table entries
// past a sequence's length set to INT32_MAX (they must be ignored), spare unused blocks.
struct PagedKvHost {
  reference::PagedPoolShape shape;
  int64_t max_blocks_per_seq = 0;
  std::vector<float> k_raw, v_raw;    // [num_blocks, block_size, n_kv_heads, head_dim]
  std::vector<int32_t> block_tables;  // [n_seqs, max_blocks_per_seq]
  std::vector<int32_t> context_lens;  // [n_seqs]

  // One encoding of the raw values: F16 bits, or I8 with scale = absmax / 127 per (block, head).
  struct Encoded {
    uint32_t dtype = HWINFER_DTYPE_F16;
    std::vector<uint16_t> f16;
    std::vector<int8_t> i8;
    std::vector<float> scales;  // [num_blocks, n_kv_heads]; zeros for F16
    std::vector<uint8_t> Bytes() const { return f16.empty() ? AsBytes(i8) : AsBytes(f16); }
    reference::PagedPool Pool(const reference::PagedPoolShape& shape) const;
  };
  Encoded Encode(uint32_t dtype, const std::vector<float>& raw) const;
};

PagedKvHost RandomPagedKv(const std::vector<int32_t>& context_lens, int64_t block_size,
                          int64_t n_kv_heads, int64_t head_dim, std::mt19937_64& rng);

// The device side of one encoding of a PagedKvHost: pools, scales, tables.
struct PagedKvDevice {
  GuardedOperand k_cache, v_cache, k_scales, v_scales, block_tables, context_lens;
  uint32_t dtype = HWINFER_DTYPE_F16;
  hwinfer_tensor_view KCache(const reference::PagedPoolShape& s) const;
  hwinfer_tensor_view VCache(const reference::PagedPoolShape& s) const;
  hwinfer_tensor_view KScales(const reference::PagedPoolShape& s) const;
  hwinfer_tensor_view VScales(const reference::PagedPoolShape& s) const;
};

StatusOr<PagedKvDevice> UploadPagedKv(Device& device, Stream& stream, const PagedKvHost& host,
                                      const PagedKvHost::Encoded& k, const PagedKvHost::Encoded& v);

}  // namespace hwinfer::conformance
