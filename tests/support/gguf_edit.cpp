// gguf_edit.cpp — see gguf_edit.h.
#include "gguf_edit.h"

#include <cstring>
#include <fstream>

namespace hwinfer::test {
namespace {

// The byte offset of tensor |name|'s u64 data-offset field inside serialized |bytes|: its info
// is the length-prefixed name, u32 n_dims, n_dims x u64, u32 type, then the offset.
bool OffsetFieldOf(const std::vector<uint8_t>& bytes, const GgufFile& file, const std::string& name,
                   size_t* field) {
  const GgufTensorInfo* info = file.FindTensor(name);
  if (info == nullptr) return false;
  std::string pattern(8, '\0');
  const uint64_t length = name.size();
  std::memcpy(pattern.data(), &length, 8);
  pattern += name;
  const std::string haystack(bytes.begin(),
                             bytes.begin() + static_cast<std::ptrdiff_t>(file.data_offset_bytes()));
  const size_t at = haystack.find(pattern);
  if (at == std::string::npos) return false;
  *field = at + pattern.size() + 4 + 8 * info->dims.size() + 4;
  return true;
}

}  // namespace

StatusOr<std::vector<uint8_t>> EditedGguf(const std::string& path, const GgufEdit& edit) {
  HWINFER_ASSIGN_OR_RETURN(const auto file, GgufFile::Open(path));
  Metadata kvs = file->metadata();
  std::vector<TensorCopy> tensors;
  for (const GgufTensorInfo& t : file->tensors()) {
    const uint8_t* data = file->TensorData(t);
    tensors.push_back({t.name, t.ggml_type, t.dims, {data, data + t.size_bytes}});
  }
  edit(kvs, tensors);
  GgufWriter writer;
  for (auto& [key, value] : kvs) HWINFER_RETURN_IF_ERROR(writer.AddKv(key, value));
  for (const TensorCopy& t : tensors) {
    HWINFER_RETURN_IF_ERROR(
        writer.AddTensor(t.name, t.type, t.dims, t.bytes.data(), t.bytes.size()));
  }
  return writer.Serialize();
}

Status WriteEditedGguf(const std::string& path, const GgufEdit& edit, const std::string& out_path) {
  HWINFER_ASSIGN_OR_RETURN(const std::vector<uint8_t> bytes, EditedGguf(path, edit));
  std::ofstream out(out_path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  return out ? Status::Ok() : Internal("cannot write " + out_path);
}

void SetKv(Metadata& kvs, const std::string& key, GgufValue value) {
  for (auto& kv : kvs) {
    if (kv.first == key) {
      kv.second = std::move(value);
      return;
    }
  }
  kvs.emplace_back(key, std::move(value));
}

TensorCopy* FindTensorCopy(std::vector<TensorCopy>& tensors, const std::string& name) {
  for (TensorCopy& t : tensors) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

void FillF32(TensorCopy& tensor, float value) {
  for (size_t i = 0; i + 4 <= tensor.bytes.size(); i += 4) {
    std::memcpy(tensor.bytes.data() + i, &value, 4);
  }
}

bool AliasTensorData(std::vector<uint8_t>& bytes, const std::string& alias,
                     const std::string& target) {
  auto file = GgufFile::Parse(bytes.data(), bytes.size(), "alias.gguf");
  if (!file.ok()) return false;
  size_t alias_field = 0, target_field = 0;
  if (!OffsetFieldOf(bytes, **file, alias, &alias_field) ||
      !OffsetFieldOf(bytes, **file, target, &target_field)) {
    return false;
  }
  std::memcpy(bytes.data() + alias_field, bytes.data() + target_field, 8);
  return true;
}

bool SetTensorType(std::vector<uint8_t>& bytes, const std::string& name, uint32_t type) {
  auto file = GgufFile::Parse(bytes.data(), bytes.size(), "retype.gguf");
  if (!file.ok()) return false;
  size_t offset_field = 0;
  if (!OffsetFieldOf(bytes, **file, name, &offset_field)) return false;
  std::memcpy(bytes.data() + offset_field - 4, &type, 4);  // the type precedes the offset
  return true;
}

}  // namespace hwinfer::test
