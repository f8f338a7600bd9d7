// gguf_types.cpp — the GGUF value-type names, the table of GGML tensor types (names, block
// sizes) and the GgufValue/GgufTensorInfo helpers. Pure data and arithmetic: no I/O, no
// allocation beyond the returned vectors.
#include <array>

#include "hwinfer/gguf.h"
#include "hwinfer/tensor_view.h"

namespace hwinfer {
namespace {

struct GgmlTypeEntry {
  uint32_t id;
  const char* name;
  uint64_t block_values;
  uint64_t block_bytes;
};

// GGML type ids as in ggml.h (ids 4, 5, 31-33 and 36-38 were removed and stay unknown).
// The five hwinfer computes with take their sizes from tensor_view.h in GgmlTypeBlock.
constexpr std::array<GgmlTypeEntry, 33> kGgmlTypes = {{
    {0, "F32", 1, 4},         {1, "F16", 1, 2},         {2, "Q4_0", 32, 18},
    {3, "Q4_1", 32, 20},      {6, "Q5_0", 32, 22},      {7, "Q5_1", 32, 24},
    {8, "Q8_0", 32, 34},      {9, "Q8_1", 32, 36},      {10, "Q2_K", 256, 84},
    {11, "Q3_K", 256, 110},   {12, "Q4_K", 256, 144},   {13, "Q5_K", 256, 176},
    {14, "Q6_K", 256, 210},   {15, "Q8_K", 256, 292},   {16, "IQ2_XXS", 256, 66},
    {17, "IQ2_XS", 256, 74},  {18, "IQ3_XXS", 256, 98}, {19, "IQ1_S", 256, 50},
    {20, "IQ4_NL", 32, 18},   {21, "IQ3_S", 256, 110},  {22, "IQ2_S", 256, 82},
    {23, "IQ4_XS", 256, 136}, {24, "I8", 1, 1},         {25, "I16", 1, 2},
    {26, "I32", 1, 4},        {27, "I64", 1, 8},        {28, "F64", 1, 8},
    {29, "IQ1_M", 256, 56},   {30, "BF16", 1, 2},       {34, "TQ1_0", 256, 54},
    {35, "TQ2_0", 256, 66},   {39, "MXFP4", 32, 17},    {0xffffffffu, nullptr, 0, 0},
}};

const GgmlTypeEntry* FindGgmlType(uint32_t id) {
  for (const GgmlTypeEntry& entry : kGgmlTypes) {
    if (entry.name != nullptr && entry.id == id) return &entry;
  }
  return nullptr;
}

}  // namespace

const char* GgufTypeName(GgufType type) {
  switch (type) {
    case GgufType::kUint8:
      return "uint8";
    case GgufType::kInt8:
      return "int8";
    case GgufType::kUint16:
      return "uint16";
    case GgufType::kInt16:
      return "int16";
    case GgufType::kUint32:
      return "uint32";
    case GgufType::kInt32:
      return "int32";
    case GgufType::kFloat32:
      return "float32";
    case GgufType::kBool:
      return "bool";
    case GgufType::kString:
      return "string";
    case GgufType::kArray:
      return "array";
    case GgufType::kUint64:
      return "uint64";
    case GgufType::kInt64:
      return "int64";
    case GgufType::kFloat64:
      return "float64";
  }
  return "unknown";
}

const char* GgmlTypeName(uint32_t ggml_type) {
  const GgmlTypeEntry* entry = FindGgmlType(ggml_type);
  return entry == nullptr ? nullptr : entry->name;
}

bool GgmlTypeIsSupported(uint32_t ggml_type) {
  return ggml_type == HWINFER_DTYPE_F32 || ggml_type == HWINFER_DTYPE_F16 ||
         ggml_type == HWINFER_DTYPE_BF16 || hwinfer_dtype_block_values(ggml_type) != 0;
}

bool GgmlTypeBlock(uint32_t ggml_type, uint64_t* block_values, uint64_t* block_bytes) {
  if (GgmlTypeIsSupported(ggml_type)) {
    *block_values = DtypeBlockValues(ggml_type);
    *block_bytes = DtypeBlockBytes(ggml_type);
    return true;
  }
  const GgmlTypeEntry* entry = FindGgmlType(ggml_type);
  if (entry == nullptr) return false;
  *block_values = entry->block_values;
  *block_bytes = entry->block_bytes;
  return true;
}

bool GgufValue::operator==(const GgufValue& other) const {
  return type == other.type && data == other.data;
}

std::vector<int64_t> GgufTensorInfo::RowMajorShape() const {
  std::vector<int64_t> shape;
  shape.reserve(dims.size());
  for (auto it = dims.rbegin(); it != dims.rend(); ++it) shape.push_back(static_cast<int64_t>(*it));
  return shape;
}

uint64_t GgufTensorInfo::ValueCount() const {
  uint64_t count = 1;
  for (uint64_t dim : dims) count *= dim;
  return count;
}

}  // namespace hwinfer
