// gguf_reader.cpp — GgufFile: maps a GGUF file read-only and parses its header, metadata and
// tensor infos (layout in hwinfer/gguf.h).
//
// Every read is bounds-checked against the file size before it happens, and every count is
// checked against the bytes left before anything is reserved, so a corrupt or hostile file gives
// an InvalidArgument naming the file, the field and its byte offset — never a crash, a read past
// the mapping, or an allocation larger than a small multiple of the file. Must not copy tensor
// data, and must not write to the mapping.
#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>

#include "hwinfer/gguf.h"
#include "hwinfer/input_file.h"

namespace hwinfer {
namespace {

constexpr uint32_t kGgufMagic = 0x46554747u;  // "GGUF" read as a little-endian u32
constexpr uint32_t kDefaultAlignment = 32;
constexpr int kMaxArrayDepth = 8;  // nested arrays deeper than this are rejected (stack bound)
constexpr uint64_t kMaxDims = 4;
// The smallest encoding of one KV (u64 key length, u32 type, 1-byte value) and one tensor info
// (u64 name length, u32 n_dims, one u64 dim, u32 type, u64 offset).
constexpr uint64_t kMinKvBytes = 8 + 4 + 1;
constexpr uint64_t kMinTensorInfoBytes = 8 + 4 + 8 + 4 + 8;

// Bytes one array item of |type| needs at least (0 for an invalid type).
uint64_t MinItemBytes(GgufType type) {
  switch (type) {
    case GgufType::kUint8:
    case GgufType::kInt8:
    case GgufType::kBool:
      return 1;
    case GgufType::kUint16:
    case GgufType::kInt16:
      return 2;
    case GgufType::kUint32:
    case GgufType::kInt32:
    case GgufType::kFloat32:
      return 4;
    case GgufType::kUint64:
    case GgufType::kInt64:
    case GgufType::kFloat64:
    case GgufType::kString:
      return 8;
    case GgufType::kArray:
      return 4 + 8;
  }
  return 0;
}

}  // namespace

// Reads fields in order from [data, data + size), tracking the offset for error messages.
class GgufFile::Parser {
 public:
  Parser(GgufFile* file) : file_(file), data_(file->data_), size_(file->size_) {}

  Status Run() {
    uint32_t magic = 0;
    HWINFER_RETURN_IF_ERROR(Read("magic", &magic));
    if (magic != kGgufMagic) {
      return ErrorAt(0, "magic", "is not \"GGUF\" (got 0x" + Hex(magic) + "); not a GGUF file");
    }
    HWINFER_RETURN_IF_ERROR(Read("version", &file_->version_));
    if (file_->version_ == 1) {
      return ErrorAt(4, "version",
                     "is 1; GGUF v1 (32-bit counts) is not supported, convert the file to v3");
    }
    if (file_->version_ != 2 && file_->version_ != 3) {
      return ErrorAt(4, "version",
                     "is " + std::to_string(file_->version_) + "; only GGUF v2 and v3 are read");
    }
    uint64_t tensor_count = 0;
    uint64_t kv_count = 0;
    HWINFER_RETURN_IF_ERROR(Read("tensor_count", &tensor_count));
    HWINFER_RETURN_IF_ERROR(Read("kv_count", &kv_count));
    const uint64_t left = size_ - pos_;
    if (tensor_count > left / kMinTensorInfoBytes) {
      return ErrorAt(8, "tensor_count",
                     std::to_string(tensor_count) + " cannot fit in the " + std::to_string(left) +
                         " bytes after the header");
    }
    if (kv_count > left / kMinKvBytes) {
      return ErrorAt(16, "kv_count",
                     std::to_string(kv_count) + " cannot fit in the " + std::to_string(left) +
                         " bytes after the header");
    }
    file_->kvs_.reserve(kv_count);
    for (uint64_t i = 0; i < kv_count; ++i) HWINFER_RETURN_IF_ERROR(ReadKv(i));
    HWINFER_RETURN_IF_ERROR(ReadAlignment());
    file_->tensors_.reserve(tensor_count);
    for (uint64_t i = 0; i < tensor_count; ++i) HWINFER_RETURN_IF_ERROR(ReadTensorInfo(i));
    const uint64_t align = file_->alignment_;
    const uint64_t data_offset = (pos_ + align - 1) / align * align;
    if (tensor_count > 0 && data_offset > size_) {
      return ErrorAt(pos_, "tensor data section",
                     "starts at " + std::to_string(data_offset) + ", past the end of the file (" +
                         std::to_string(size_) + " bytes)");
    }
    file_->data_offset_ = data_offset;
    for (const GgufTensorInfo& tensor : file_->tensors_) {
      HWINFER_RETURN_IF_ERROR(CheckTensorData(tensor));
    }
    return CheckTensorsPacked();
  }

 private:
  static std::string Hex(uint64_t v) {
    static const char kDigits[] = "0123456789abcdef";
    std::string out;
    do {
      out.insert(out.begin(), kDigits[v & 0xf]);
      v >>= 4;
    } while (v != 0);
    return out;
  }

  Status ErrorAt(uint64_t offset, const std::string& field, const std::string& what) const {
    return InvalidArgument(file_->name_ + ": " + field + " at offset " + std::to_string(offset) +
                           " " + what);
  }

  Status Truncated(const std::string& field, uint64_t need) const {
    return ErrorAt(pos_, field,
                   "needs " + std::to_string(need) + " bytes but the file ends at " +
                       std::to_string(size_) + " bytes (truncated)");
  }

  template <typename T>
  Status Read(const std::string& field, T* out) {
    if (size_ - pos_ < sizeof(T)) return Truncated(field, sizeof(T));
    std::memcpy(out, data_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return Status::Ok();
  }

  Status ReadString(const std::string& field, std::string* out) {
    const uint64_t at = pos_;
    uint64_t length = 0;
    HWINFER_RETURN_IF_ERROR(Read(field + " length", &length));
    if (length > size_ - pos_) {
      return ErrorAt(at, field + " length",
                     std::to_string(length) + " runs past the end of the file (" +
                         std::to_string(size_ - pos_) + " bytes left)");
    }
    out->assign(reinterpret_cast<const char*>(data_ + pos_), static_cast<size_t>(length));
    pos_ += length;
    return Status::Ok();
  }

  Status ReadType(const std::string& field, GgufType* type) {
    const uint64_t at = pos_;
    uint32_t raw = 0;
    HWINFER_RETURN_IF_ERROR(Read(field, &raw));
    if (raw > static_cast<uint32_t>(GgufType::kFloat64)) {
      return ErrorAt(at, field, "is " + std::to_string(raw) + ", not a GGUF value type (0-12)");
    }
    *type = static_cast<GgufType>(raw);
    return Status::Ok();
  }

  template <typename Raw, typename Stored>
  Status ReadScalar(const std::string& field, GgufType type, GgufValue* out) {
    Raw raw{};
    HWINFER_RETURN_IF_ERROR(Read(field, &raw));
    out->type = type;
    out->data = static_cast<Stored>(raw);
    return Status::Ok();
  }

  Status ReadValue(const std::string& field, GgufType type, int depth, GgufValue* out) {
    switch (type) {
      case GgufType::kUint8:
        return ReadScalar<uint8_t, uint64_t>(field, type, out);
      case GgufType::kInt8:
        return ReadScalar<int8_t, int64_t>(field, type, out);
      case GgufType::kUint16:
        return ReadScalar<uint16_t, uint64_t>(field, type, out);
      case GgufType::kInt16:
        return ReadScalar<int16_t, int64_t>(field, type, out);
      case GgufType::kUint32:
        return ReadScalar<uint32_t, uint64_t>(field, type, out);
      case GgufType::kInt32:
        return ReadScalar<int32_t, int64_t>(field, type, out);
      case GgufType::kUint64:
        return ReadScalar<uint64_t, uint64_t>(field, type, out);
      case GgufType::kInt64:
        return ReadScalar<int64_t, int64_t>(field, type, out);
      case GgufType::kFloat32:
        return ReadScalar<float, double>(field, type, out);
      case GgufType::kFloat64:
        return ReadScalar<double, double>(field, type, out);
      case GgufType::kBool: {
        const uint64_t at = pos_;
        uint8_t raw = 0;
        HWINFER_RETURN_IF_ERROR(Read(field, &raw));
        if (raw > 1) return ErrorAt(at, field, "is a bool of value " + std::to_string(raw));
        out->type = type;
        out->data = raw == 1;
        return Status::Ok();
      }
      case GgufType::kString: {
        std::string s;
        HWINFER_RETURN_IF_ERROR(ReadString(field, &s));
        out->type = type;
        out->data = std::move(s);
        return Status::Ok();
      }
      case GgufType::kArray:
        return ReadArray(field, depth, out);
    }
    return ErrorAt(pos_, field, "has an unknown type");
  }

  Status ReadArray(const std::string& field, int depth, GgufValue* out) {
    const uint64_t at = pos_;
    if (depth >= kMaxArrayDepth) {
      return ErrorAt(at, field,
                     "nests arrays deeper than " + std::to_string(kMaxArrayDepth) + " levels");
    }
    GgufArray array;
    HWINFER_RETURN_IF_ERROR(ReadType(field + " element type", &array.element_type));
    const uint64_t count_at = pos_;
    uint64_t count = 0;
    HWINFER_RETURN_IF_ERROR(Read(field + " length", &count));
    const uint64_t min_bytes = MinItemBytes(array.element_type);
    if (count > (size_ - pos_) / min_bytes) {
      return ErrorAt(count_at, field + " length",
                     std::to_string(count) + " (" + GgufTypeName(array.element_type) +
                         " items) runs past the end of the file (" + std::to_string(size_ - pos_) +
                         " bytes left)");
    }
    array.items.resize(static_cast<size_t>(count));
    for (uint64_t i = 0; i < count; ++i) {
      HWINFER_RETURN_IF_ERROR(ReadValue(field + "[" + std::to_string(i) + "]", array.element_type,
                                        depth + 1, &array.items[static_cast<size_t>(i)]));
    }
    out->type = GgufType::kArray;
    out->data = std::move(array);
    return Status::Ok();
  }

  Status ReadKv(uint64_t index) {
    const uint64_t at = pos_;
    std::string key;
    HWINFER_RETURN_IF_ERROR(ReadString("metadata key #" + std::to_string(index), &key));
    const std::string field = "metadata '" + key + "'";
    if (file_->kv_index_.count(key) != 0) return ErrorAt(at, field, "is a duplicate key");
    GgufType type{};
    HWINFER_RETURN_IF_ERROR(ReadType(field + " type", &type));
    GgufValue value;
    HWINFER_RETURN_IF_ERROR(ReadValue(field, type, 0, &value));
    file_->kv_index_.emplace(key, file_->kvs_.size());
    file_->kvs_.emplace_back(std::move(key), std::move(value));
    return Status::Ok();
  }

  Status ReadAlignment() {
    file_->alignment_ = kDefaultAlignment;
    const GgufValue* value = file_->Find("general.alignment");
    if (value == nullptr) return Status::Ok();
    const uint64_t* alignment = std::get_if<uint64_t>(&value->data);
    if (value->type != GgufType::kUint32 || *alignment == 0 ||
        (*alignment & (*alignment - 1)) != 0) {
      return InvalidArgument(file_->name_ +
                             ": metadata 'general.alignment' must be a uint32 power of two");
    }
    file_->alignment_ = static_cast<uint32_t>(*alignment);
    return Status::Ok();
  }

  Status ReadTensorInfo(uint64_t index) {
    const uint64_t at = pos_;
    GgufTensorInfo tensor;
    HWINFER_RETURN_IF_ERROR(ReadString("tensor #" + std::to_string(index) + " name", &tensor.name));
    const std::string field = "tensor '" + tensor.name + "'";
    if (file_->tensor_index_.count(tensor.name) != 0) {
      return ErrorAt(at, field, "is a duplicate tensor name");
    }
    const uint64_t dims_at = pos_;
    uint32_t n_dims = 0;
    HWINFER_RETURN_IF_ERROR(Read(field + " n_dims", &n_dims));
    if (n_dims == 0 || n_dims > kMaxDims) {
      return ErrorAt(dims_at, field + " n_dims", "is " + std::to_string(n_dims) + "; must be 1-4");
    }
    uint64_t values = 1;
    for (uint32_t d = 0; d < n_dims; ++d) {
      const uint64_t dim_at = pos_;
      const std::string dim_field = field + " ne[" + std::to_string(d) + "]";
      uint64_t dim = 0;
      HWINFER_RETURN_IF_ERROR(Read(dim_field, &dim));
      if (dim == 0) return ErrorAt(dim_at, dim_field, "is 0; dims must be > 0");
      if (dim > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) / values) {
        return ErrorAt(dim_at, dim_field, "makes the element count overflow 63 bits");
      }
      values *= dim;
      tensor.dims.push_back(dim);
    }
    const uint64_t type_at = pos_;
    HWINFER_RETURN_IF_ERROR(Read(field + " type", &tensor.ggml_type));
    uint64_t block_values = 0;
    uint64_t block_bytes = 0;
    if (!GgmlTypeBlock(tensor.ggml_type, &block_values, &block_bytes)) {
      return ErrorAt(type_at, field + " type",
                     "is " + std::to_string(tensor.ggml_type) + ", not a known GGML type");
    }
    if (tensor.dims[0] % block_values != 0) {
      return ErrorAt(dims_at + sizeof(uint32_t), field + " ne[0]",  // after n_dims
                     "is " + std::to_string(tensor.dims[0]) + ", not a multiple of the " +
                         GgmlTypeName(tensor.ggml_type) + " block (" +
                         std::to_string(block_values) + " values)");
    }
    const uint64_t blocks = values / block_values;
    if (blocks > std::numeric_limits<uint64_t>::max() / block_bytes) {
      return ErrorAt(dims_at, field + " size", "overflows 64 bits");
    }
    tensor.size_bytes = blocks * block_bytes;
    const uint64_t offset_at = pos_;
    HWINFER_RETURN_IF_ERROR(Read(field + " offset", &tensor.offset_bytes));
    if (tensor.offset_bytes % file_->alignment_ != 0) {
      return ErrorAt(offset_at, field + " offset",
                     "is " + std::to_string(tensor.offset_bytes) + ", not a multiple of the " +
                         std::to_string(file_->alignment_) + "-byte alignment");
    }
    file_->tensor_index_.emplace(tensor.name, file_->tensors_.size());
    file_->tensors_.push_back(std::move(tensor));
    return Status::Ok();
  }

  Status CheckTensorData(const GgufTensorInfo& tensor) const {
    const uint64_t room = size_ - file_->data_offset_;
    if (tensor.offset_bytes > room || tensor.size_bytes > room - tensor.offset_bytes) {
      const uint64_t absolute = file_->data_offset_ + tensor.offset_bytes;
      return InvalidArgument(file_->name_ + ": tensor '" + tensor.name + "' data [offset " +
                             std::to_string(absolute) + ", " + std::to_string(tensor.size_bytes) +
                             " bytes] runs past the end of the file (" + std::to_string(size_) +
                             " bytes)");
    }
    return Status::Ok();
  }

  // Two tensors sharing bytes would alias weights no writer (gguf-py, llama.cpp) ever aliases;
  // and writers pack tensors, padding each to the alignment, so a gap of a whole alignment or more
  // after a tensor means its type or shape does not say how many bytes it really has (e.g. F32 data
  // labelled Q4_K).
  Status CheckTensorsPacked() const {
    std::vector<const GgufTensorInfo*> by_offset;
    by_offset.reserve(file_->tensors_.size());
    for (const GgufTensorInfo& tensor : file_->tensors_) by_offset.push_back(&tensor);
    std::sort(by_offset.begin(), by_offset.end(),
              [](const GgufTensorInfo* a, const GgufTensorInfo* b) {
                return a->offset_bytes < b->offset_bytes;
              });
    for (size_t i = 1; i < by_offset.size(); ++i) {
      const GgufTensorInfo& before = *by_offset[i - 1];
      const GgufTensorInfo& tensor = *by_offset[i];
      if (tensor.offset_bytes < before.offset_bytes + before.size_bytes) {
        return InvalidArgument(file_->name_ + ": tensor '" + tensor.name + "' data [offset " +
                               std::to_string(tensor.offset_bytes) + ", " +
                               std::to_string(tensor.size_bytes) + " bytes] overlaps tensor '" +
                               before.name + "' [offset " + std::to_string(before.offset_bytes) +
                               ", " + std::to_string(before.size_bytes) +
                               " bytes]; every tensor needs bytes of its own");
      }
      const uint64_t gap = tensor.offset_bytes - (before.offset_bytes + before.size_bytes);
      if (gap >= file_->alignment_) {
        const char* type = GgmlTypeName(before.ggml_type);
        return InvalidArgument(file_->name_ + ": tensor '" + before.name + "' is " +
                               (type != nullptr ? type : "?") + " of " +
                               std::to_string(before.size_bytes) + " bytes, but its data runs " +
                               std::to_string(gap + before.size_bytes) + " bytes up to tensor '" +
                               tensor.name + "': its type or shape does not match its data");
      }
    }
    return Status::Ok();
  }

  GgufFile* file_;
  const uint8_t* data_;
  uint64_t size_;
  uint64_t pos_ = 0;
};

StatusOr<std::unique_ptr<GgufFile>> GgufFile::Parse(const uint8_t* data, size_t size,
                                                    std::string display_name) {
  std::unique_ptr<GgufFile> file(new GgufFile());
  file->name_ = std::move(display_name);
  file->data_ = data;
  file->size_ = size;
  HWINFER_RETURN_IF_ERROR(Parser(file.get()).Run());
  return file;
}

StatusOr<std::unique_ptr<GgufFile>> GgufFile::Open(const std::string& path) {
  HWINFER_ASSIGN_OR_RETURN(const InputFile input, InputFile::Open(path, "model file"));
  const size_t size = static_cast<size_t>(input.size_bytes());
  void* mapping = nullptr;
  if (size > 0) {
    mapping = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, input.fd(), 0);
    if (mapping == MAP_FAILED) {
      const int err = errno;
      return InvalidArgument(path + ": mmap of " + std::to_string(size) +
                             " bytes failed: " + std::strerror(err));
    }
  }
  // The mapping stays valid after |input| closes the descriptor.
  static const uint8_t kEmpty = 0;
  const uint8_t* data = mapping != nullptr ? static_cast<const uint8_t*>(mapping) : &kEmpty;
  StatusOr<std::unique_ptr<GgufFile>> parsed = Parse(data, size, path);
  if (!parsed.ok()) {
    if (mapping != nullptr) ::munmap(mapping, size);
    return parsed.status();
  }
  parsed.value()->mapping_ = mapping;
  return parsed;
}

GgufFile::~GgufFile() {
  if (mapping_ != nullptr) ::munmap(mapping_, size_);
}

const GgufValue* GgufFile::Find(const std::string& key) const {
  auto it = kv_index_.find(key);
  return it == kv_index_.end() ? nullptr : &kvs_[it->second].second;
}

const GgufTensorInfo* GgufFile::FindTensor(const std::string& name) const {
  auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

const uint8_t* GgufFile::TensorData(const GgufTensorInfo& tensor) const {
  return data_ + data_offset_ + tensor.offset_bytes;
}

}  // namespace hwinfer
