// tests/support/gguf_edit.h — a GGUF file rewritten with one thing changed, for tests that need a
// bad or odd model: a key set to an absurd value, a tensor filled with inf, a tensor removed or
// renamed. The edit works on plain copies of the metadata and tensors; the result is written with
// GgufWriter (so it is a well-formed file unless the edit makes it otherwise).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "hwinfer/gguf.h"
#include "hwinfer/status.h"

namespace hwinfer::test {

// One tensor of a rewritten file: its description and bytes.
struct TensorCopy {
  std::string name;
  uint32_t type = 0;
  std::vector<uint64_t> dims;
  std::vector<uint8_t> bytes;
};

using Metadata = std::vector<std::pair<std::string, GgufValue>>;
using GgufEdit = std::function<void(Metadata& kvs, std::vector<TensorCopy>& tensors)>;

// The bytes of |path| rewritten after |edit|.
StatusOr<std::vector<uint8_t>> EditedGguf(const std::string& path, const GgufEdit& edit);
// The same, written to |out_path|.
Status WriteEditedGguf(const std::string& path, const GgufEdit& edit, const std::string& out_path);

// Sets |key| (added at the end when absent).
void SetKv(Metadata& kvs, const std::string& key, GgufValue value);
// The tensor named |name|; nullptr when there is none.
TensorCopy* FindTensorCopy(std::vector<TensorCopy>& tensors, const std::string& name);
// Fills an F32 tensor with |value| (e.g. +inf).
void FillF32(TensorCopy& tensor, float value);

// Makes the data offset of tensor |alias| in the serialized |bytes| equal that of |target|, so
// the two tensors share bytes (GgufWriter never writes that; a hostile file can). False when
// either tensor is not found.
bool AliasTensorData(std::vector<uint8_t>& bytes, const std::string& alias,
                     const std::string& target);

// Sets the GGML type of tensor |name| in the serialized |bytes| without touching its dims or data
// (a file whose type does not match its data). False when the tensor is not found.
bool SetTensorType(std::vector<uint8_t>& bytes, const std::string& name, uint32_t type);

}  // namespace hwinfer::test
