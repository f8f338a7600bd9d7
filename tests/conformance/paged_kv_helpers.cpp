// paged_kv_helpers.cpp — see paged_kv_helpers.h.
#include "paged_kv_helpers.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <numeric>

#include "conformance_fixture.h"
#include "reference/half.h"

namespace hwinfer::conformance {

StatusOr<GuardedOperand> MakeOperand(Device& device, Stream& stream,
                                     const std::vector<uint8_t>& payload) {
  GuardedOperand operand;
  operand.payload_bytes = payload.size();
  std::vector<uint8_t> bytes(payload.size() + 2 * kGuardBandBytes, kPoisonByte);
  std::copy(payload.begin(), payload.end(), bytes.begin() + kGuardBandBytes);
  HWINFER_ASSIGN_OR_RETURN(operand.buffer, device.Allocate(bytes.size()));
  HWINFER_RETURN_IF_ERROR(Upload(stream, operand.buffer, bytes));
  return operand;
}

testing::AssertionResult ReadOperand(Stream& stream, const GuardedOperand& operand,
                                     std::vector<uint8_t>* payload, const std::string& what) {
  auto bytes = Download(stream, operand.buffer);
  if (!bytes.ok()) {
    return testing::AssertionFailure()
           << "download of " << what << ": " << bytes.status().ToString();
  }
  const uint8_t* data = bytes->data();
  if (auto before = BytesAre(data, kGuardBandBytes, kPoisonByte, what + " guard before"); !before) {
    return before;
  }
  if (auto after = BytesAre(data + kGuardBandBytes + operand.payload_bytes, kGuardBandBytes,
                            kPoisonByte, what + " guard after");
      !after) {
    return after;
  }
  payload->assign(data + kGuardBandBytes, data + kGuardBandBytes + operand.payload_bytes);
  return testing::AssertionSuccess();
}

std::vector<float> RandomFloats(size_t n, float amplitude, std::mt19937_64& rng) {
  std::uniform_real_distribution<float> dist(-amplitude, amplitude);
  std::vector<float> values(n);
  for (float& value : values) value = dist(rng);
  return values;
}

std::vector<uint16_t> ToF16Bits(const std::vector<float>& values) {
  std::vector<uint16_t> bits(values.size());
  for (size_t i = 0; i < values.size(); ++i) bits[i] = reference::f32_to_f16(values[i]);
  return bits;
}

std::vector<float> RoundedToF16(const std::vector<float>& values) {
  std::vector<float> rounded(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    rounded[i] = reference::f16_to_f32(reference::f32_to_f16(values[i]));
  }
  return rounded;
}

std::vector<uint8_t> EncodeAs(uint32_t dtype, const std::vector<float>& values) {
  return dtype == HWINFER_DTYPE_F16 ? AsBytes(ToF16Bits(values)) : AsBytes(values);
}

std::vector<float> DecodeFrom(uint32_t dtype, const std::vector<uint8_t>& bytes) {
  if (dtype != HWINFER_DTYPE_F16) return FromBytes<float>(bytes);
  const std::vector<uint16_t> bits = FromBytes<uint16_t>(bytes);
  std::vector<float> values(bits.size());
  for (size_t i = 0; i < bits.size(); ++i) values[i] = reference::f16_to_f32(bits[i]);
  return values;
}

std::vector<int32_t> ShuffledIds(int32_t n, std::mt19937_64& rng) {
  std::vector<int32_t> ids(static_cast<size_t>(n));
  std::iota(ids.begin(), ids.end(), 0);
  std::shuffle(ids.begin(), ids.end(), rng);
  return ids;
}

double Nmse(const std::vector<float>& x, const std::vector<double>& ref) {
  double err = 0.0, norm = 0.0;
  for (size_t i = 0; i < x.size() && i < ref.size(); ++i) {
    const double diff = static_cast<double>(x[i]) - ref[i];
    err += diff * diff;
    norm += ref[i] * ref[i];
  }
  if (norm == 0.0) return err == 0.0 ? 0.0 : 1.0;
  return err / norm;
}

reference::PagedPool PagedKvHost::Encoded::Pool(const reference::PagedPoolShape& shape) const {
  reference::PagedPool pool;
  pool.shape = shape;
  if (dtype == HWINFER_DTYPE_F16) {
    pool.f16 = f16.data();
  } else {
    pool.i8 = i8.data();
    pool.scales = scales.data();
  }
  return pool;
}

PagedKvHost::Encoded PagedKvHost::Encode(uint32_t dtype, const std::vector<float>& raw) const {
  Encoded encoded;
  encoded.dtype = dtype;
  encoded.scales.assign(static_cast<size_t>(shape.num_blocks * shape.n_kv_heads), 0.0f);
  if (dtype == HWINFER_DTYPE_F16) {
    encoded.f16 = ToF16Bits(raw);
    return encoded;
  }
  encoded.i8.resize(raw.size());
  const int64_t dim = shape.head_dim, heads = shape.n_kv_heads;
  for (int64_t b = 0; b < shape.num_blocks; ++b) {
    for (int64_t h = 0; h < heads; ++h) {
      float absmax = 0.0f;
      for (int64_t r = 0; r < shape.block_size; ++r) {
        for (int64_t d = 0; d < dim; ++d) {
          absmax = std::max(
              absmax,
              std::fabs(
                  raw[static_cast<size_t>(((b * shape.block_size + r) * heads + h) * dim + d)]));
        }
      }
      const float scale = absmax / 127.0f;
      encoded.scales[static_cast<size_t>(b * heads + h)] = scale;
      for (int64_t r = 0; r < shape.block_size; ++r) {
        for (int64_t d = 0; d < dim; ++d) {
          const auto i = static_cast<size_t>(((b * shape.block_size + r) * heads + h) * dim + d);
          encoded.i8[i] = reference::quantize_i8(raw[i], scale);
        }
      }
    }
  }
  return encoded;
}

PagedKvHost RandomPagedKv(const std::vector<int32_t>& context_lens, int64_t block_size,
                          int64_t n_kv_heads, int64_t head_dim, std::mt19937_64& rng) {
  PagedKvHost host;
  host.context_lens = context_lens;
  int64_t used = 0;
  for (int32_t len : context_lens) {
    const int64_t blocks = (len + block_size - 1) / block_size;
    used += blocks;
    host.max_blocks_per_seq = std::max(host.max_blocks_per_seq, blocks + 1);
  }
  host.shape = {used + 3, block_size, n_kv_heads, head_dim};
  const auto elems =
      static_cast<size_t>(host.shape.num_blocks * block_size * n_kv_heads * head_dim);
  host.k_raw = RandomFloats(elems, 1.0f, rng);
  host.v_raw = RandomFloats(elems, 1.0f, rng);
  const std::vector<int32_t> ids = ShuffledIds(static_cast<int32_t>(host.shape.num_blocks), rng);
  host.block_tables.assign(context_lens.size() * static_cast<size_t>(host.max_blocks_per_seq),
                           INT32_MAX);
  size_t next = 0;
  for (size_t s = 0; s < context_lens.size(); ++s) {
    const int64_t blocks = (context_lens[s] + block_size - 1) / block_size;
    for (int64_t b = 0; b < blocks; ++b) {
      host.block_tables[s * static_cast<size_t>(host.max_blocks_per_seq) + static_cast<size_t>(b)] =
          ids[next++];
    }
  }
  return host;
}

namespace {
hwinfer_tensor_view PoolView(const GuardedOperand& op, uint32_t dtype,
                             const reference::PagedPoolShape& s) {
  return op.View(dtype, {s.num_blocks, s.block_size, s.n_kv_heads, s.head_dim});
}
}  // namespace

hwinfer_tensor_view PagedKvDevice::KCache(const reference::PagedPoolShape& s) const {
  return PoolView(k_cache, dtype, s);
}
hwinfer_tensor_view PagedKvDevice::VCache(const reference::PagedPoolShape& s) const {
  return PoolView(v_cache, dtype, s);
}
hwinfer_tensor_view PagedKvDevice::KScales(const reference::PagedPoolShape& s) const {
  if (dtype != HWINFER_DTYPE_I8) return NoView();
  return k_scales.View(HWINFER_DTYPE_F32, {s.num_blocks, s.n_kv_heads});
}
hwinfer_tensor_view PagedKvDevice::VScales(const reference::PagedPoolShape& s) const {
  if (dtype != HWINFER_DTYPE_I8) return NoView();
  return v_scales.View(HWINFER_DTYPE_F32, {s.num_blocks, s.n_kv_heads});
}

StatusOr<PagedKvDevice> UploadPagedKv(Device& device, Stream& stream, const PagedKvHost& host,
                                      const PagedKvHost::Encoded& k,
                                      const PagedKvHost::Encoded& v) {
  PagedKvDevice out;
  out.dtype = k.dtype;
  HWINFER_ASSIGN_OR_RETURN(out.k_cache, MakeOperand(device, stream, k.Bytes()));
  HWINFER_ASSIGN_OR_RETURN(out.v_cache, MakeOperand(device, stream, v.Bytes()));
  HWINFER_ASSIGN_OR_RETURN(out.k_scales, MakeOperand(device, stream, AsBytes(k.scales)));
  HWINFER_ASSIGN_OR_RETURN(out.v_scales, MakeOperand(device, stream, AsBytes(v.scales)));
  HWINFER_ASSIGN_OR_RETURN(out.block_tables,
                           MakeOperand(device, stream, AsBytes(host.block_tables)));
  HWINFER_ASSIGN_OR_RETURN(out.context_lens,
                           MakeOperand(device, stream, AsBytes(host.context_lens)));
  return out;
}

}  // namespace hwinfer::conformance
