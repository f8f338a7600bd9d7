// gguf_writer.cpp — GgufWriter: lays out a GGUF v3 file the way the `gguf` Python package does
// (keys and tensors in insertion order, zero padding after the tensor infos and after every
// tensor's data up to general.alignment, default 32). Must not reorder anything (re-writing a
// file read back must give the same bytes) and must not copy tensor data into memory when
// writing to a file.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include <unistd.h>

#include "hwinfer/gguf.h"

namespace hwinfer {
namespace {

constexpr uint32_t kGgufMagic = 0x46554747u;
constexpr uint32_t kGgufVersion = 3;
constexpr uint32_t kDefaultAlignment = 32;

uint64_t AlignUp(uint64_t n, uint64_t alignment) {
  return (n + alignment - 1) / alignment * alignment;
}

template <typename T>
void Put(std::vector<uint8_t>* out, T value) {
  uint8_t bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  out->insert(out->end(), bytes, bytes + sizeof(T));
}

void PutString(std::vector<uint8_t>* out, const std::string& s) {
  Put<uint64_t>(out, s.size());
  out->insert(out->end(), s.begin(), s.end());
}

Status PutValue(std::vector<uint8_t>* out, const std::string& key, const GgufValue& value) {
  const auto mismatch = [&]() {
    return InvalidArgument("GGUF writer: metadata '" + key + "' says " + GgufTypeName(value.type) +
                           " but holds another kind of value");
  };
  const uint64_t* u = std::get_if<uint64_t>(&value.data);
  const int64_t* i = std::get_if<int64_t>(&value.data);
  const double* d = std::get_if<double>(&value.data);
  switch (value.type) {
    case GgufType::kUint8:
      if (u == nullptr) return mismatch();
      Put(out, static_cast<uint8_t>(*u));
      return Status::Ok();
    case GgufType::kInt8:
      if (i == nullptr) return mismatch();
      Put(out, static_cast<int8_t>(*i));
      return Status::Ok();
    case GgufType::kUint16:
      if (u == nullptr) return mismatch();
      Put(out, static_cast<uint16_t>(*u));
      return Status::Ok();
    case GgufType::kInt16:
      if (i == nullptr) return mismatch();
      Put(out, static_cast<int16_t>(*i));
      return Status::Ok();
    case GgufType::kUint32:
      if (u == nullptr) return mismatch();
      Put(out, static_cast<uint32_t>(*u));
      return Status::Ok();
    case GgufType::kInt32:
      if (i == nullptr) return mismatch();
      Put(out, static_cast<int32_t>(*i));
      return Status::Ok();
    case GgufType::kUint64:
      if (u == nullptr) return mismatch();
      Put(out, *u);
      return Status::Ok();
    case GgufType::kInt64:
      if (i == nullptr) return mismatch();
      Put(out, *i);
      return Status::Ok();
    case GgufType::kFloat32:
      if (d == nullptr) return mismatch();
      Put(out, static_cast<float>(*d));
      return Status::Ok();
    case GgufType::kFloat64:
      if (d == nullptr) return mismatch();
      Put(out, *d);
      return Status::Ok();
    case GgufType::kBool: {
      const bool* b = std::get_if<bool>(&value.data);
      if (b == nullptr) return mismatch();
      Put<uint8_t>(out, *b ? 1 : 0);
      return Status::Ok();
    }
    case GgufType::kString: {
      const std::string* s = std::get_if<std::string>(&value.data);
      if (s == nullptr) return mismatch();
      PutString(out, *s);
      return Status::Ok();
    }
    case GgufType::kArray: {
      const GgufArray* a = std::get_if<GgufArray>(&value.data);
      if (a == nullptr) return mismatch();
      Put(out, static_cast<uint32_t>(a->element_type));
      Put<uint64_t>(out, a->items.size());
      for (const GgufValue& item : a->items) {
        if (item.type != a->element_type) {
          return InvalidArgument("GGUF writer: metadata '" + key + "' is an array of " +
                                 GgufTypeName(a->element_type) + " holding a " +
                                 GgufTypeName(item.type));
        }
        HWINFER_RETURN_IF_ERROR(PutValue(out, key, item));
      }
      return Status::Ok();
    }
  }
  return InvalidArgument("GGUF writer: metadata '" + key + "' has an unknown type");
}

}  // namespace

Status GgufWriter::AddKv(std::string key, GgufValue value) {
  for (const auto& kv : kvs_) {
    if (kv.first == key)
      return InvalidArgument("GGUF writer: duplicate metadata key '" + key + "'");
  }
  kvs_.emplace_back(std::move(key), std::move(value));
  return Status::Ok();
}

Status GgufWriter::AddTensor(std::string name, uint32_t ggml_type, std::vector<uint64_t> dims,
                             const void* data, uint64_t size_bytes) {
  const std::string field = "GGUF writer: tensor '" + name + "'";
  for (const Tensor& t : tensors_) {
    if (t.info.name == name) return InvalidArgument(field + " is a duplicate tensor name");
  }
  if (dims.empty() || dims.size() > 4) return InvalidArgument(field + " needs 1 to 4 dims");
  uint64_t block_values = 0;
  uint64_t block_bytes = 0;
  if (!GgmlTypeBlock(ggml_type, &block_values, &block_bytes)) {
    return InvalidArgument(field + " has unknown GGML type " + std::to_string(ggml_type));
  }
  uint64_t values = 1;
  for (uint64_t dim : dims) {
    if (dim == 0 || dim > (uint64_t{1} << 62) / values) {
      return InvalidArgument(field + " has a zero or overflowing dim");
    }
    values *= dim;
  }
  if (dims[0] % block_values != 0) {
    return InvalidArgument(field + " ne[0] is not a multiple of the " + GgmlTypeName(ggml_type) +
                           " block");
  }
  const uint64_t expected = values / block_values * block_bytes;
  if (size_bytes != expected) {
    return InvalidArgument(field + " has " + std::to_string(size_bytes) + " bytes; its dims and " +
                           GgmlTypeName(ggml_type) + " need " + std::to_string(expected));
  }
  Tensor tensor;
  tensor.info.name = std::move(name);
  tensor.info.ggml_type = ggml_type;
  tensor.info.dims = std::move(dims);
  tensor.info.size_bytes = size_bytes;
  tensor.data = data;
  tensors_.push_back(std::move(tensor));
  return Status::Ok();
}

StatusOr<std::vector<uint8_t>> GgufWriter::BuildHeader(uint32_t* alignment,
                                                       std::vector<uint64_t>* offsets) const {
  *alignment = kDefaultAlignment;
  for (const auto& kv : kvs_) {
    if (kv.first != "general.alignment") continue;
    const uint64_t* value = std::get_if<uint64_t>(&kv.second.data);
    if (kv.second.type != GgufType::kUint32 || *value == 0 || (*value & (*value - 1)) != 0) {
      return InvalidArgument("GGUF writer: 'general.alignment' must be a uint32 power of two");
    }
    *alignment = static_cast<uint32_t>(*value);
  }
  std::vector<uint8_t> out;
  Put(&out, kGgufMagic);
  Put(&out, kGgufVersion);
  Put<uint64_t>(&out, tensors_.size());
  Put<uint64_t>(&out, kvs_.size());
  for (const auto& kv : kvs_) {
    PutString(&out, kv.first);
    Put(&out, static_cast<uint32_t>(kv.second.type));
    HWINFER_RETURN_IF_ERROR(PutValue(&out, kv.first, kv.second));
  }
  offsets->clear();
  uint64_t offset = 0;
  for (const Tensor& t : tensors_) {
    PutString(&out, t.info.name);
    Put(&out, static_cast<uint32_t>(t.info.dims.size()));
    for (uint64_t dim : t.info.dims) Put(&out, dim);
    Put(&out, t.info.ggml_type);
    Put(&out, offset);
    offsets->push_back(offset);
    offset = AlignUp(offset + t.info.size_bytes, *alignment);
  }
  out.resize(AlignUp(out.size(), *alignment), 0);
  return out;
}

StatusOr<std::vector<uint8_t>> GgufWriter::Serialize() const {
  uint32_t alignment = 0;
  std::vector<uint64_t> offsets;
  HWINFER_ASSIGN_OR_RETURN(std::vector<uint8_t> out, BuildHeader(&alignment, &offsets));
  for (const Tensor& t : tensors_) {
    const auto* bytes = static_cast<const uint8_t*>(t.data);
    if (bytes != nullptr) {
      out.insert(out.end(), bytes, bytes + t.info.size_bytes);
    } else {
      out.resize(out.size() + t.info.size_bytes, 0);  // a zero tensor
    }
    out.resize(AlignUp(out.size(), alignment), 0);
  }
  return out;
}

Status GgufWriter::WriteFile(const std::string& path) const {
  uint32_t alignment = 0;
  std::vector<uint64_t> offsets;
  HWINFER_ASSIGN_OR_RETURN(const std::vector<uint8_t> header, BuildHeader(&alignment, &offsets));
  std::unique_ptr<FILE, int (*)(FILE*)> file(std::fopen(path.c_str(), "wb"), &std::fclose);
  if (file == nullptr) {
    return InvalidArgument(path + ": cannot create: " + std::strerror(errno));
  }
  const std::vector<uint8_t> zeros(alignment, 0);
  bool ok = std::fwrite(header.data(), 1, header.size(), file.get()) == header.size();
  uint64_t end = header.size();
  for (const Tensor& t : tensors_) {
    if (!ok) break;
    const auto size = static_cast<size_t>(t.info.size_bytes);
    const size_t pad = static_cast<size_t>(AlignUp(t.info.size_bytes, alignment)) - size;
    end += size + pad;
    if (t.data == nullptr) {  // zeros: leave a hole (a sparse file) instead of writing them
      ok = fseeko(file.get(), static_cast<off_t>(size + pad), SEEK_CUR) == 0;
      continue;
    }
    ok = std::fwrite(t.data, 1, size, file.get()) == size &&
         std::fwrite(zeros.data(), 1, pad, file.get()) == pad;
  }
  // A trailing hole only exists once the file is extended to its full size.
  ok = ok && std::fflush(file.get()) == 0 &&
       ftruncate(fileno(file.get()), static_cast<off_t>(end)) == 0;
  if (!ok || std::fflush(file.get()) != 0) {
    return Internal(path + ": write failed: " + std::strerror(errno));
  }
  return Status::Ok();
}

}  // namespace hwinfer
