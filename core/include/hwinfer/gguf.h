// hwinfer/gguf.h — reading and writing GGUF (v3; v2 is read too) model files.
//
// GgufFile maps a file read-only and keeps it mapped for its lifetime, so tensor bytes can be
// imported without copying. Every count, length, offset and size is checked against the file size
// before it is used: a malformed or truncated file gives an InvalidArgument Status naming the
// file, the field and the byte offset; it must never crash or allocate more than a small multiple
// of the file's metadata size. GgufWriter builds a file with the same layout the `gguf` Python
// package writes (key and tensor order kept, every tensor padded to general.alignment).
//
// Layout (little-endian): "GGUF" u32 version, u64 tensor_count, u64 kv_count, kv_count x
// {string key, u32 value_type, value}, tensor_count x {string name, u32 n_dims, u64 ne[n_dims]
// (ne[0] innermost), u32 ggml_type, u64 offset}, padding to the alignment, tensor data.
// A string is u64 length + bytes (no terminator); an array is u32 element type + u64 count + items.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "hwinfer/status.h"

namespace hwinfer {

// The metadata value types, numbered as in the GGUF specification.
enum class GgufType : uint32_t {
  kUint8 = 0,
  kInt8 = 1,
  kUint16 = 2,
  kInt16 = 3,
  kUint32 = 4,
  kInt32 = 5,
  kFloat32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
  kUint64 = 10,
  kInt64 = 11,
  kFloat64 = 12,
};

// "uint32", "string", "array", ... ("unknown" otherwise).
const char* GgufTypeName(GgufType type);

// GGML tensor types that hwinfer computes with use the HWINFER_DTYPE_* values (which equal the
// GGML ids: F32 0, F16 1, Q4_0 2, Q8_0 8, BF16 30). Other GGML types (K-quants, IQ*, ...) are
// known by name and size so their files parse; using them is the caller's Unsupported error.
// "F32", "Q4_K", ... or nullptr when |ggml_type| is not a known GGML type id.
const char* GgmlTypeName(uint32_t ggml_type);
// Values per block and bytes per block of a known GGML type (false when unknown).
bool GgmlTypeBlock(uint32_t ggml_type, uint64_t* block_values, uint64_t* block_bytes);
// True for the types hwinfer kernels take: F32, F16, BF16 and the block-quantized ones of plugin.h.
bool GgmlTypeIsSupported(uint32_t ggml_type);

struct GgufValue;

// An array value: every item has |element_type| (kArray items are themselves arrays).
struct GgufArray {
  GgufType element_type = GgufType::kUint8;
  std::vector<GgufValue> items;
};

// One metadata value. Integers keep their GGUF type in |type| and are stored widened (unsigned in
// uint64_t, signed in int64_t); float32 and float64 are stored as double (float32 round-trips).
struct GgufValue {
  GgufType type = GgufType::kUint8;
  std::variant<uint64_t, int64_t, double, bool, std::string, GgufArray> data = uint64_t{0};

  static GgufValue Uint8(uint8_t v) { return {GgufType::kUint8, uint64_t{v}}; }
  static GgufValue Int8(int8_t v) { return {GgufType::kInt8, int64_t{v}}; }
  static GgufValue Uint16(uint16_t v) { return {GgufType::kUint16, uint64_t{v}}; }
  static GgufValue Int16(int16_t v) { return {GgufType::kInt16, int64_t{v}}; }
  static GgufValue Uint32(uint32_t v) { return {GgufType::kUint32, uint64_t{v}}; }
  static GgufValue Int32(int32_t v) { return {GgufType::kInt32, int64_t{v}}; }
  static GgufValue Uint64(uint64_t v) { return {GgufType::kUint64, v}; }
  static GgufValue Int64(int64_t v) { return {GgufType::kInt64, v}; }
  static GgufValue Float32(float v) { return {GgufType::kFloat32, double{v}}; }
  static GgufValue Float64(double v) { return {GgufType::kFloat64, v}; }
  static GgufValue Bool(bool v) { return {GgufType::kBool, v}; }
  static GgufValue String(std::string v) { return {GgufType::kString, std::move(v)}; }
  static GgufValue Array(GgufType element_type, std::vector<GgufValue> items) {
    return {GgufType::kArray, GgufArray{element_type, std::move(items)}};
  }

  bool operator==(const GgufValue& other) const;
};

inline bool operator==(const GgufArray& a, const GgufArray& b) {
  return a.element_type == b.element_type && a.items == b.items;
}

// One tensor's description. dims are as GGUF lists them: dims[0] is the innermost (contiguous)
// dimension, so a [rows, cols] row-major matrix is dims {cols, rows}.
struct GgufTensorInfo {
  std::string name;
  uint32_t ggml_type = 0;      // HWINFER_DTYPE_* for the supported types; see GgmlTypeName
  std::vector<uint64_t> dims;  // ne[0] innermost; 1 to 4 entries, each > 0
  uint64_t offset_bytes = 0;   // from the start of the tensor data section
  uint64_t size_bytes = 0;     // n_values / block_values * block_bytes

  // Outermost first, e.g. token_embd.weight {256, 512} -> {512, 256}.
  std::vector<int64_t> RowMajorShape() const;
  uint64_t ValueCount() const;
};

class GgufFile {
 public:
  // Maps |path| read-only (unmapped when the GgufFile is destroyed) and parses it.
  static StatusOr<std::unique_ptr<GgufFile>> Open(const std::string& path);
  // Parses |size| bytes at |data| without copying: |data| must outlive the result.
  // |display_name| starts every error message.
  static StatusOr<std::unique_ptr<GgufFile>> Parse(const uint8_t* data, size_t size,
                                                   std::string display_name);

  ~GgufFile();
  GgufFile(const GgufFile&) = delete;
  GgufFile& operator=(const GgufFile&) = delete;

  const std::string& name() const { return name_; }
  uint32_t version() const { return version_; }
  uint32_t alignment() const { return alignment_; }
  uint64_t data_offset_bytes() const { return data_offset_; }
  uint64_t file_size_bytes() const { return size_; }

  // Metadata in file order.
  const std::vector<std::pair<std::string, GgufValue>>& metadata() const { return kvs_; }
  // nullptr when |key| is absent.
  const GgufValue* Find(const std::string& key) const;
  // Typed getters: NotFound names a missing key; InvalidArgument names the key, its type and the
  // expected one. Integer getters accept any integer type whose value fits; GetFloat32/64 accept
  // float32 and float64.
  StatusOr<uint32_t> GetUint32(const std::string& key) const;
  StatusOr<uint64_t> GetUint64(const std::string& key) const;
  StatusOr<float> GetFloat32(const std::string& key) const;
  StatusOr<double> GetFloat64(const std::string& key) const;
  StatusOr<bool> GetBool(const std::string& key) const;
  StatusOr<std::string> GetString(const std::string& key) const;
  StatusOr<const GgufArray*> GetArray(const std::string& key) const;

  // Tensors in file order.
  const std::vector<GgufTensorInfo>& tensors() const { return tensors_; }
  const GgufTensorInfo* FindTensor(const std::string& name) const;
  // The tensor's first byte inside the mapping (valid for size_bytes bytes).
  const uint8_t* TensorData(const GgufTensorInfo& tensor) const;

 private:
  class Parser;
  GgufFile() = default;

  std::string name_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  void* mapping_ = nullptr;  // non-null when Open mapped the file (munmap'd in the destructor)
  uint32_t version_ = 0;
  uint32_t alignment_ = 32;
  uint64_t data_offset_ = 0;
  std::vector<std::pair<std::string, GgufValue>> kvs_;
  std::unordered_map<std::string, size_t> kv_index_;
  std::vector<GgufTensorInfo> tensors_;
  std::unordered_map<std::string, size_t> tensor_index_;
};

// Builds a GGUF v3 file. Keys and tensors keep the order they were added in. Tensor bytes are not
// copied: they must stay valid until Serialize/WriteFile returns.
class GgufWriter {
 public:
  // Errors: a duplicate key (InvalidArgument).
  Status AddKv(std::string key, GgufValue value);
  // Errors: duplicate name, 0 or more than 4 dims, a zero dim, an unknown type, dims[0] not a
  // multiple of the type's block, or |size_bytes| different from what dims and type need.
  // |data| == nullptr means all-zero bytes: WriteFile leaves a hole (a sparse file), so a
  // dummy-weight model of any size costs no disk space and no time to write.
  Status AddTensor(std::string name, uint32_t ggml_type, std::vector<uint64_t> dims,
                   const void* data, uint64_t size_bytes);

  // The whole file in memory (small files and tests).
  StatusOr<std::vector<uint8_t>> Serialize() const;
  // Streams the file to |path| (created or truncated).
  Status WriteFile(const std::string& path) const;

 private:
  struct Tensor {
    GgufTensorInfo info;
    const void* data = nullptr;
  };
  // Header, KVs, tensor infos and the padding up to the data section; the alignment used and
  // each tensor's offset in the data section come back in |alignment| and |offsets|.
  StatusOr<std::vector<uint8_t>> BuildHeader(uint32_t* alignment,
                                             std::vector<uint64_t>* offsets) const;

  std::vector<std::pair<std::string, GgufValue>> kvs_;
  std::vector<Tensor> tensors_;
};

}  // namespace hwinfer
