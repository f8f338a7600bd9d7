// gguf_metadata.cpp — GgufFile's typed metadata getters. Errors name the file, the key, the type
// found and the type expected. Must not modify the metadata or convert lossily (an integer that
// does not fit the requested width is an error, not a truncation).
#include <limits>

#include "hwinfer/gguf.h"

namespace hwinfer {
namespace {

Status WrongType(const std::string& file, const std::string& key, GgufType found,
                 const char* expected) {
  return InvalidArgument(file + ": metadata '" + key + "' is " + GgufTypeName(found) +
                         ", expected " + expected);
}

// The value as an unsigned integer when it is a non-negative integer of any width.
bool AsUnsigned(const GgufValue& value, uint64_t* out) {
  if (const uint64_t* u = std::get_if<uint64_t>(&value.data)) {
    *out = *u;
    return true;
  }
  if (const int64_t* i = std::get_if<int64_t>(&value.data); i != nullptr && *i >= 0) {
    *out = static_cast<uint64_t>(*i);
    return true;
  }
  return false;
}

}  // namespace

StatusOr<uint64_t> GgufFile::GetUint64(const std::string& key) const {
  const GgufValue* value = Find(key);
  if (value == nullptr) return NotFound(name_ + ": metadata key '" + key + "' is missing");
  uint64_t out = 0;
  if (!AsUnsigned(*value, &out)) {
    return WrongType(name_, key, value->type, "a non-negative integer");
  }
  return out;
}

StatusOr<uint32_t> GgufFile::GetUint32(const std::string& key) const {
  HWINFER_ASSIGN_OR_RETURN(const uint64_t value, GetUint64(key));
  if (value > std::numeric_limits<uint32_t>::max()) {
    return InvalidArgument(name_ + ": metadata '" + key + "' is " + std::to_string(value) +
                           ", which does not fit a uint32");
  }
  return static_cast<uint32_t>(value);
}

StatusOr<double> GgufFile::GetFloat64(const std::string& key) const {
  const GgufValue* value = Find(key);
  if (value == nullptr) return NotFound(name_ + ": metadata key '" + key + "' is missing");
  const double* d = std::get_if<double>(&value->data);
  if (d == nullptr) return WrongType(name_, key, value->type, "float32 or float64");
  return *d;
}

StatusOr<float> GgufFile::GetFloat32(const std::string& key) const {
  HWINFER_ASSIGN_OR_RETURN(const double value, GetFloat64(key));
  return static_cast<float>(value);
}

StatusOr<bool> GgufFile::GetBool(const std::string& key) const {
  const GgufValue* value = Find(key);
  if (value == nullptr) return NotFound(name_ + ": metadata key '" + key + "' is missing");
  const bool* b = std::get_if<bool>(&value->data);
  if (b == nullptr) return WrongType(name_, key, value->type, "bool");
  return *b;
}

StatusOr<std::string> GgufFile::GetString(const std::string& key) const {
  const GgufValue* value = Find(key);
  if (value == nullptr) return NotFound(name_ + ": metadata key '" + key + "' is missing");
  const std::string* s = std::get_if<std::string>(&value->data);
  if (s == nullptr) return WrongType(name_, key, value->type, "string");
  return *s;
}

StatusOr<const GgufArray*> GgufFile::GetArray(const std::string& key) const {
  const GgufValue* value = Find(key);
  if (value == nullptr) return NotFound(name_ + ": metadata key '" + key + "' is missing");
  const GgufArray* a = std::get_if<GgufArray>(&value->data);
  if (a == nullptr) return WrongType(name_, key, value->type, "array");
  return a;
}

}  // namespace hwinfer
