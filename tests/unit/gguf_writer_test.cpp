// gguf_writer_test.cpp — GgufWriter: every value type and tensor type round-trips through
// GgufFile, alignment is honoured, bad input is refused, and re-writing the content of the files
// in tests/data/gguf reproduces them byte for byte. Must not write into the source tree (files go
// to the test's temporary directory).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "hwinfer/gguf.h"
#include "hwinfer/plugin.h"

namespace hwinfer {
namespace {

using ::testing::HasSubstr;

std::vector<uint8_t> ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

std::vector<std::pair<std::string, GgufValue>> EveryValueType() {
  return {
      {"t.u8", GgufValue::Uint8(250)},
      {"t.i8", GgufValue::Int8(-100)},
      {"t.u16", GgufValue::Uint16(65000)},
      {"t.i16", GgufValue::Int16(-32000)},
      {"t.u32", GgufValue::Uint32(4000000000u)},
      {"t.i32", GgufValue::Int32(-2000000000)},
      {"t.f32", GgufValue::Float32(1e-5f)},
      {"t.bool", GgufValue::Bool(true)},
      {"t.string", GgufValue::String("llama \xe2\x9c\x93")},
      {"t.empty_string", GgufValue::String("")},
      {"t.u64", GgufValue::Uint64(~uint64_t{0})},
      {"t.i64", GgufValue::Int64(-(int64_t{1} << 62))},
      {"t.f64", GgufValue::Float64(3.141592653589793)},
      {"t.array_i32",
       GgufValue::Array(GgufType::kInt32, {GgufValue::Int32(-1), GgufValue::Int32(7)})},
      {"t.array_string",
       GgufValue::Array(GgufType::kString, {GgufValue::String("<s>"), GgufValue::String("</s>")})},
      {"t.array_bool", GgufValue::Array(GgufType::kBool, {GgufValue::Bool(false)})},
      {"t.array_f64", GgufValue::Array(GgufType::kFloat64, {GgufValue::Float64(-0.5)})},
      {"t.array_empty", GgufValue::Array(GgufType::kUint8, {})},
      {"t.array_nested",
       GgufValue::Array(GgufType::kArray,
                        {GgufValue::Array(GgufType::kUint16, {GgufValue::Uint16(1)}),
                         GgufValue::Array(GgufType::kString, {GgufValue::String("x")})})},
  };
}

TEST(GgufWriter, EveryValueTypeAndTensorTypeRoundTrips) {
  GgufWriter writer;
  const auto kvs = EveryValueType();
  for (const auto& kv : kvs) ASSERT_TRUE(writer.AddKv(kv.first, kv.second).ok()) << kv.first;
  std::vector<uint8_t> f32(3 * 4 * 4, 0x11), f16(64 * 2, 0x22), bf16(5 * 2, 0x33);
  std::vector<uint8_t> q8(2 * 34, 0x44), q4(3 * 18, 0x55);
  ASSERT_TRUE(writer.AddTensor("a.f32", HWINFER_DTYPE_F32, {4, 3}, f32.data(), f32.size()).ok());
  ASSERT_TRUE(writer.AddTensor("a.f16", HWINFER_DTYPE_F16, {8, 2, 2, 2}, f16.data(), 128).ok());
  ASSERT_TRUE(writer.AddTensor("a.bf16", HWINFER_DTYPE_BF16, {5}, bf16.data(), 10).ok());
  ASSERT_TRUE(writer.AddTensor("a.q8", HWINFER_DTYPE_Q8_0, {32, 2}, q8.data(), q8.size()).ok());
  ASSERT_TRUE(writer.AddTensor("a.q4", HWINFER_DTYPE_Q4_0, {96}, q4.data(), q4.size()).ok());
  auto bytes = writer.Serialize();
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  auto file = GgufFile::Parse(bytes->data(), bytes->size(), "rt.gguf");
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  ASSERT_EQ(file.value()->metadata().size(), kvs.size());
  for (size_t i = 0; i < kvs.size(); ++i) {
    EXPECT_EQ(file.value()->metadata()[i].first, kvs[i].first);
    EXPECT_TRUE(file.value()->metadata()[i].second == kvs[i].second) << kvs[i].first;
  }
  EXPECT_FLOAT_EQ(file.value()->GetFloat32("t.f32").value(), 1e-5f);
  EXPECT_EQ(file.value()->GetUint64("t.u64").value(), ~uint64_t{0});
  EXPECT_FALSE(file.value()->GetUint32("t.u64").ok());  // does not fit
  EXPECT_FALSE(file.value()->GetUint32("t.i8").ok());   // negative
  EXPECT_EQ(file.value()->GetUint32("t.u8").value(), 250u);
  EXPECT_TRUE(file.value()->GetBool("t.bool").value());
  ASSERT_EQ(file.value()->tensors().size(), 5u);
  const std::vector<const std::vector<uint8_t>*> datas = {&f32, &f16, &bf16, &q8, &q4};
  for (size_t i = 0; i < datas.size(); ++i) {
    const GgufTensorInfo& t = file.value()->tensors()[i];
    EXPECT_EQ(t.offset_bytes % 32, 0u) << t.name;
    ASSERT_EQ(t.size_bytes, datas[i]->size()) << t.name;
    EXPECT_EQ(0, std::memcmp(file.value()->TensorData(t), datas[i]->data(), t.size_bytes));
  }
  EXPECT_THAT(file.value()->tensors()[1].dims, ::testing::ElementsAre(8u, 2u, 2u, 2u));
}

TEST(GgufWriter, WriteFileMatchesSerializeAndHonoursAlignment) {
  GgufWriter writer;
  ASSERT_TRUE(writer.AddKv("general.alignment", GgufValue::Uint32(256)).ok());
  std::vector<uint8_t> a(4 * 3, 1), b(4 * 5, 2);
  ASSERT_TRUE(writer.AddTensor("a", HWINFER_DTYPE_F32, {3}, a.data(), a.size()).ok());
  ASSERT_TRUE(writer.AddTensor("b", HWINFER_DTYPE_F32, {5}, b.data(), b.size()).ok());
  const std::vector<uint8_t> in_memory = writer.Serialize().value();
  EXPECT_EQ(in_memory.size() % 256, 0u);
  const std::string path =
      ::testing::TempDir() + "/gguf_writer_" + std::to_string(getpid()) + ".gguf";
  ASSERT_TRUE(writer.WriteFile(path).ok());
  EXPECT_EQ(ReadBytes(path), in_memory);
  auto file = GgufFile::Open(path);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_EQ(file.value()->alignment(), 256u);
  EXPECT_EQ(file.value()->data_offset_bytes() % 256, 0u);
  EXPECT_EQ(file.value()->FindTensor("b")->offset_bytes, 256u);
  std::remove(path.c_str());
}

TEST(GgufWriter, RefusesBadInput) {
  GgufWriter writer;
  std::vector<uint8_t> data(64);
  ASSERT_TRUE(writer.AddKv("k", GgufValue::Uint8(1)).ok());
  EXPECT_THAT(writer.AddKv("k", GgufValue::Uint8(2)).message(), HasSubstr("duplicate"));
  ASSERT_TRUE(writer.AddTensor("t", HWINFER_DTYPE_F32, {4}, data.data(), 16).ok());
  EXPECT_THAT(writer.AddTensor("t", HWINFER_DTYPE_F32, {4}, data.data(), 16).message(),
              HasSubstr("duplicate"));
  EXPECT_THAT(writer.AddTensor("s", HWINFER_DTYPE_F32, {4}, data.data(), 12).message(),
              HasSubstr("has 12 bytes"));
  EXPECT_FALSE(writer.AddTensor("u", 99, {4}, data.data(), 16).ok());
  EXPECT_FALSE(writer.AddTensor("v", HWINFER_DTYPE_F32, {1, 1, 1, 1, 1}, data.data(), 4).ok());
  EXPECT_FALSE(writer.AddTensor("w", HWINFER_DTYPE_Q8_0, {16}, data.data(), 17).ok());
  GgufWriter mixed;
  ASSERT_TRUE(mixed.AddKv("m", GgufValue::Array(GgufType::kUint8, {GgufValue::Int8(1)})).ok());
  EXPECT_THAT(mixed.Serialize().status().message(), HasSubstr("array of uint8 holding a int8"));
}

// Re-writes a file from what the reader saw (keys, values, tensors in file order).
std::vector<uint8_t> Rewrite(const GgufFile& file) {
  GgufWriter writer;
  for (const auto& kv : file.metadata()) EXPECT_TRUE(writer.AddKv(kv.first, kv.second).ok());
  for (const GgufTensorInfo& t : file.tensors()) {
    EXPECT_TRUE(
        writer.AddTensor(t.name, t.ggml_type, t.dims, file.TensorData(t), t.size_bytes).ok());
  }
  return writer.Serialize().value();
}

TEST(GgufWriter, RewritingTheGgufPythonFileIsByteIdentical) {
  // tiny-llama-f32.gguf was written by the `gguf` Python package: same key order, same padding.
  const std::string path = std::string(HWINFER_SOURCE_DIR) + "/tests/data/gguf/tiny-llama-f32.gguf";
  auto file = GgufFile::Open(path);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  const std::vector<uint8_t> original = ReadBytes(path);
  const std::vector<uint8_t> rewritten = Rewrite(*file.value());
  ASSERT_EQ(rewritten.size(), original.size());
  EXPECT_TRUE(rewritten == original);
}

TEST(GgufWriter, RewritingTheLlamaCppQuantizedFilesIsByteIdentical) {
  for (const char* name : {"tiny-llama-f16.gguf", "tiny-llama-q8_0.gguf", "tiny-llama-q4_0.gguf"}) {
    SCOPED_TRACE(name);
    const std::string path = std::string(HWINFER_SOURCE_DIR) + "/tests/data/gguf/" + name;
    auto file = GgufFile::Open(path);
    ASSERT_TRUE(file.ok()) << file.status().ToString();
    const std::vector<uint8_t> original = ReadBytes(path);
    const std::vector<uint8_t> rewritten = Rewrite(*file.value());
    ASSERT_EQ(rewritten.size(), original.size());
    EXPECT_TRUE(rewritten == original);
  }
}

}  // namespace
}  // namespace hwinfer
