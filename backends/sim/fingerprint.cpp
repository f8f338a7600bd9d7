// fingerprint.cpp — see fingerprint.h. Reads and writes go through memcpy (views need not be
// aligned in the simulator).
#include "fingerprint.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace hwinfer::sim {

namespace {

constexpr float kOneHot = 1e30f;
constexpr float kFingerprintLimit = 16777216.0f;  // 2^24

// Address of element [row, 0, ...] of a backed |view|.
uint8_t* row_address(const hwinfer_tensor_view& view, int64_t row) {
  return view.buffer->data + view.offset_bytes + row * view.strides_bytes[0];
}

bool backed(const hwinfer_tensor_view& view) {
  return view.buffer != nullptr && view.buffer->backed();
}

}  // namespace

uint32_t mix(uint32_t a, uint32_t b) {
  uint64_t x = (static_cast<uint64_t>(a) << 32) | b;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return static_cast<uint32_t>(x) & kFingerprintMask;
}

bool read_row(const hwinfer_tensor_view& view, int64_t row, uint32_t* fp) {
  if (!backed(view)) return false;
  const uint8_t* p = row_address(view, row);
  if (view.dtype == HWINFER_DTYPE_F32) {
    float value = 0;
    std::memcpy(&value, p, sizeof(value));
    if (value >= 0 && value < kFingerprintLimit && value == std::floor(value)) {
      *fp = static_cast<uint32_t>(value);
    } else {  // not one of ours (e.g. uploaded data): fold its bits
      uint32_t bits = 0;
      std::memcpy(&bits, &value, sizeof(bits));
      *fp = mix(bits, 0x5eed);
    }
    return true;
  }
  if (view.dtype == HWINFER_DTYPE_F16 || view.dtype == HWINFER_DTYPE_BF16) {
    uint16_t bits = 0;
    std::memcpy(&bits, p, sizeof(bits));
    *fp = bits;
    return true;
  }
  return false;
}

void write_row(const hwinfer_tensor_view& view, int64_t row, uint32_t fp) {
  if (!backed(view)) return;
  uint8_t* p = row_address(view, row);
  if (view.dtype == HWINFER_DTYPE_F32) {
    const auto value = static_cast<float>(fp & kFingerprintMask);  // exact below 2^24
    std::memcpy(p, &value, sizeof(value));
  } else if (view.dtype == HWINFER_DTYPE_F16 || view.dtype == HWINFER_DTYPE_BF16) {
    const auto bits = static_cast<uint16_t>(fp);
    std::memcpy(p, &bits, sizeof(bits));
  }
}

bool read_int(const hwinfer_tensor_view& view, int64_t index, int32_t* value) {
  if (!backed(view)) return false;
  std::memcpy(value, view.buffer->data + view.offset_bytes + index * view.strides_bytes[0],
              sizeof(*value));
  return true;
}

bool read_int_array(const hwinfer_tensor_view& view, std::vector<int32_t>* out) {
  if (!backed(view) || view.dtype != HWINFER_DTYPE_I32 || view.rank < 1 || view.rank > 2) {
    return false;
  }
  const int64_t rows = view.shape[0];
  const int64_t cols = view.rank == 2 ? view.shape[1] : 1;
  const int64_t col_stride = view.rank == 2 ? view.strides_bytes[1] : 0;
  out->clear();
  out->reserve(static_cast<size_t>(rows * cols));
  for (int64_t r = 0; r < rows; ++r) {
    const uint8_t* row = row_address(view, r);
    for (int64_t c = 0; c < cols; ++c) {
      int32_t value = 0;
      std::memcpy(&value, row + c * col_stride, sizeof(value));
      out->push_back(value);
    }
  }
  return true;
}

void write_one_hot(const hwinfer_tensor_view& view, int64_t row, uint32_t fp) {
  if (!backed(view) || view.dtype != HWINFER_DTYPE_F32 || view.rank != 2) return;
  const int64_t n = view.shape[1];
  if (n < 2) return;
  hwinfer_buffer* buffer = view.buffer;
  // The row's bytes, relative to the buffer: [first, last] element start offsets.
  const int64_t start = static_cast<int64_t>(view.offset_bytes) + row * view.strides_bytes[0];
  const int64_t span = (n - 1) * view.strides_bytes[1];
  const auto first = static_cast<uint64_t>(std::min(start, start + span));
  const auto last = static_cast<uint64_t>(std::max(start, start + span));
  const auto hot = static_cast<uint64_t>(start + (1 + static_cast<int64_t>(fp % (n - 1))) *
                                                     view.strides_bytes[1]);
  std::lock_guard<std::mutex> lock(buffer->one_hot_mutex);
  auto& offsets = buffer->one_hot_offsets;
  for (auto it = offsets.lower_bound(first); it != offsets.end() && *it <= last;) {
    const float zero = 0.0f;
    std::memcpy(buffer->data + *it, &zero, sizeof(zero));
    it = offsets.erase(it);
  }
  std::memcpy(buffer->data + hot, &kOneHot, sizeof(kOneHot));
  offsets.insert(hot);
}

}  // namespace hwinfer::sim
