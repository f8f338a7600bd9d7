// gguf_fuzz.cpp — libFuzzer target: GgufFile::Parse over arbitrary bytes, every accessor a model
// loader would use, then LlamaModel::FromGguf (metadata against tensors: block_count, sizes,
// types, shapes). Any crash, sanitizer report, leak or allocation past the run's memory limit is
// a bug. Must not touch the file system or keep state between inputs.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

#include "hwinfer/gguf.h"
#include "hwinfer/llama_model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto parsed = hwinfer::GgufFile::Parse(data, size, "fuzz.gguf");
  if (!parsed.ok()) return 0;
  const hwinfer::GgufFile& file = *parsed.value();
  for (const auto& kv : file.metadata()) {
    (void)file.GetUint32(kv.first);
    (void)file.GetFloat32(kv.first);
    (void)file.GetString(kv.first);
    (void)file.GetArray(kv.first);
  }
  uint64_t checksum = 0;
  for (const hwinfer::GgufTensorInfo& tensor : file.tensors()) {
    const uint8_t* bytes = file.TensorData(tensor);
    // Touch the first and last byte: both must lie inside the input.
    if (tensor.size_bytes > 0) checksum += bytes[0] + bytes[tensor.size_bytes - 1];
    (void)tensor.RowMajorShape();
    if (file.FindTensor(tensor.name) != &tensor) __builtin_trap();
  }
  // The model checks run over the same bytes (the input outlives the call).
  auto model = hwinfer::LlamaModel::FromGguf(std::move(parsed).value());
  if (model.ok()) checksum += model.value()->weight_bytes();
  return checksum == 0xdeadbeef ? 1 : 0;
}
