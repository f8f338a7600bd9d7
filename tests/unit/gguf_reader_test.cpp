// gguf_reader_test.cpp — GgufFile against the real GGUF files in tests/data/gguf (written by the
// `gguf` Python package and llama.cpp) and against hand-corrupted files: every malformed input
// must give InvalidArgument naming the field and byte offset. Must not write into the source tree.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "gguf_edit.h"
#include "hwinfer/gguf.h"
#include "hwinfer/plugin.h"

namespace hwinfer {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string DataPath(const std::string& file) {
  return std::string(HWINFER_SOURCE_DIR) + "/tests/data/gguf/" + file;
}

std::vector<uint8_t> ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

std::unique_ptr<GgufFile> OpenOrDie(const std::string& file) {
  auto opened = GgufFile::Open(DataPath(file));
  EXPECT_TRUE(opened.ok()) << opened.status().ToString();
  return opened.ok() ? std::move(opened).value() : nullptr;
}

TEST(GgufReader, TinyLlamaF32MetadataHasTheDocumentedShape) {
  auto file = OpenOrDie("tiny-llama-f32.gguf");
  ASSERT_NE(file, nullptr);
  EXPECT_EQ(file->version(), 3u);
  EXPECT_EQ(file->alignment(), 32u);
  EXPECT_EQ(file->GetString("general.architecture").value(), "llama");
  EXPECT_EQ(file->GetUint32("llama.embedding_length").value(), 256u);
  EXPECT_EQ(file->GetUint32("llama.block_count").value(), 2u);
  EXPECT_EQ(file->GetUint32("llama.attention.head_count").value(), 8u);
  EXPECT_EQ(file->GetUint32("llama.attention.head_count_kv").value(), 2u);
  EXPECT_EQ(file->GetUint32("llama.feed_forward_length").value(), 768u);
  EXPECT_EQ(file->GetUint32("llama.context_length").value(), 512u);
  EXPECT_FLOAT_EQ(file->GetFloat32("llama.rope.freq_base").value(), 10000.0f);
  EXPECT_FLOAT_EQ(file->GetFloat32("llama.attention.layer_norm_rms_epsilon").value(), 1e-5f);
  for (const char* key :
       {"tokenizer.ggml.tokens", "tokenizer.ggml.scores", "tokenizer.ggml.token_type"}) {
    auto array = file->GetArray(key);
    ASSERT_TRUE(array.ok()) << array.status().ToString();
    EXPECT_EQ(array.value()->items.size(), 512u) << key;
  }
  EXPECT_EQ(file->GetArray("tokenizer.ggml.tokens").value()->element_type, GgufType::kString);
}

TEST(GgufReader, TinyLlamaF32TensorsHaveNamesTypesAndShapes) {
  auto file = OpenOrDie("tiny-llama-f32.gguf");
  ASSERT_NE(file, nullptr);
  // token_embd, output_norm, output, and 9 per block (2 blocks).
  EXPECT_EQ(file->tensors().size(), 3u + 2u * 9u);
  const GgufTensorInfo* embd = file->FindTensor("token_embd.weight");
  ASSERT_NE(embd, nullptr);
  EXPECT_EQ(embd->ggml_type, HWINFER_DTYPE_F32);
  EXPECT_THAT(embd->dims, ElementsAre(256u, 512u));
  EXPECT_THAT(embd->RowMajorShape(), ElementsAre(512, 256));
  EXPECT_EQ(embd->size_bytes, 512u * 256u * 4u);
  const GgufTensorInfo* q = file->FindTensor("blk.0.attn_q.weight");
  ASSERT_NE(q, nullptr);
  EXPECT_THAT(q->RowMajorShape(), ElementsAre(256, 256));
  const GgufTensorInfo* k = file->FindTensor("blk.1.attn_k.weight");
  ASSERT_NE(k, nullptr);
  EXPECT_THAT(k->RowMajorShape(), ElementsAre(64, 256));  // 2 KV heads x head_dim 32
  const GgufTensorInfo* gate = file->FindTensor("blk.0.ffn_gate.weight");
  ASSERT_NE(gate, nullptr);
  EXPECT_THAT(gate->RowMajorShape(), ElementsAre(768, 256));
  const GgufTensorInfo* norm = file->FindTensor("output_norm.weight");
  ASSERT_NE(norm, nullptr);
  EXPECT_EQ(norm->ggml_type, HWINFER_DTYPE_F32);
  EXPECT_THAT(norm->RowMajorShape(), ElementsAre(256));
  EXPECT_EQ(file->FindTensor("no.such.tensor"), nullptr);
  // Tensor data lies inside the mapping and holds finite small weights (std 0.02).
  const auto* w = reinterpret_cast<const float*>(file->TensorData(*q));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(w) % 32, 0u);
  EXPECT_LT(std::abs(w[0]), 1.0f);
}

TEST(GgufReader, QuantizedFilesUseTheirTypeForMatricesAndF32ForNorms) {
  struct Case {
    const char* file;
    uint32_t matrix_type;
  };
  for (const Case& c : {Case{"tiny-llama-f16.gguf", HWINFER_DTYPE_F16},
                        Case{"tiny-llama-q8_0.gguf", HWINFER_DTYPE_Q8_0},
                        Case{"tiny-llama-q4_0.gguf", HWINFER_DTYPE_Q4_0}}) {
    SCOPED_TRACE(c.file);
    auto file = OpenOrDie(c.file);
    ASSERT_NE(file, nullptr);
    EXPECT_EQ(file->GetUint32("llama.block_count").value(), 2u);
    for (const GgufTensorInfo& t : file->tensors()) {
      const bool is_norm = t.name.find("norm") != std::string::npos;
      if (is_norm) {
        EXPECT_EQ(t.ggml_type, HWINFER_DTYPE_F32) << t.name;
      } else if (c.matrix_type != HWINFER_DTYPE_F16 || t.name != "token_embd.weight") {
        EXPECT_EQ(t.ggml_type, c.matrix_type) << t.name;
      }
      EXPECT_TRUE(GgmlTypeIsSupported(t.ggml_type)) << t.name;
    }
    const GgufTensorInfo* q = file->FindTensor("blk.0.attn_q.weight");
    ASSERT_NE(q, nullptr);
    EXPECT_THAT(q->RowMajorShape(), ElementsAre(256, 256));
    if (c.matrix_type == HWINFER_DTYPE_Q4_0) {
      EXPECT_EQ(q->size_bytes, 256u * 256u / 32u * 18u);
    }
    if (c.matrix_type == HWINFER_DTYPE_Q8_0) {
      EXPECT_EQ(q->size_bytes, 256u * 256u / 32u * 34u);
    }
  }
}

TEST(GgufReader, MissingKeyAndWrongTypeNameTheKey) {
  auto file = OpenOrDie("tiny-llama-f32.gguf");
  ASSERT_NE(file, nullptr);
  auto missing = file->GetUint32("llama.nope");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr("'llama.nope'"));
  auto wrong = file->GetUint32("general.architecture");
  EXPECT_EQ(wrong.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(wrong.status().message(), HasSubstr("'general.architecture' is string"));
  EXPECT_FALSE(file->GetString("llama.block_count").ok());
  EXPECT_FALSE(file->GetArray("llama.block_count").ok());
}

TEST(GgufReader, OpenMissingFileIsNotFound) {
  auto opened = GgufFile::Open(DataPath("does-not-exist.gguf"));
  EXPECT_EQ(opened.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(opened.status().message(), HasSubstr("does-not-exist.gguf"));
}

TEST(GgufReader, EveryTruncationOfARealFileIsAnError) {
  const std::vector<uint8_t> bytes = ReadBytes(DataPath("tiny-llama-q4_0.gguf"));
  ASSERT_GT(bytes.size(), 1000u);
  auto full = GgufFile::Parse(bytes.data(), bytes.size(), "full.gguf");
  ASSERT_TRUE(full.ok()) << full.status().ToString();
  // The last byte any tensor needs: truncating anywhere before it must fail.
  uint64_t end = 0;
  for (const GgufTensorInfo& t : full.value()->tensors()) {
    end = std::max(end, full.value()->data_offset_bytes() + t.offset_bytes + t.size_bytes);
  }
  std::vector<size_t> cuts;
  for (size_t n = 0; n <= full.value()->data_offset_bytes(); ++n) cuts.push_back(n);
  for (size_t n = full.value()->data_offset_bytes(); n < end; n += 997) cuts.push_back(n);
  cuts.push_back(static_cast<size_t>(end) - 1);
  for (size_t n : cuts) {
    // A fresh heap copy of exactly n bytes, so ASan sees any read past the end.
    std::vector<uint8_t> prefix(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
    auto parsed = GgufFile::Parse(prefix.data(), prefix.size(), "cut.gguf");
    ASSERT_FALSE(parsed.ok()) << "truncated at " << n;
    ASSERT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
    ASSERT_THAT(parsed.status().message(), HasSubstr("cut.gguf: "));
    ASSERT_THAT(parsed.status().message(), HasSubstr("offset")) << "truncated at " << n;
  }
}

// A minimal file: no metadata, tensor "w" F32 dims {4, 2}. Byte offsets: tensor_count 8,
// kv_count 16, name length 24, name 32, n_dims 33, ne[0] 37, ne[1] 45, type 53, offset 57, data 96.
std::vector<uint8_t> MinimalFile(int n_tensors = 1) {
  static const float kData[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  GgufWriter writer;
  const char* names[] = {"w", "v"};
  for (int i = 0; i < n_tensors; ++i) {
    EXPECT_TRUE(writer.AddTensor(names[i], HWINFER_DTYPE_F32, {4, 2}, kData, sizeof(kData)).ok());
  }
  return writer.Serialize().value();
}

template <typename T>
void Patch(std::vector<uint8_t>* bytes, size_t offset, T value) {
  std::memcpy(bytes->data() + offset, &value, sizeof(T));
}

std::string ParseError(const std::vector<uint8_t>& bytes) {
  auto parsed = GgufFile::Parse(bytes.data(), bytes.size(), "x.gguf");
  EXPECT_FALSE(parsed.ok());
  if (parsed.ok()) return "";
  EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
  return parsed.status().message();
}

TEST(GgufReader, MinimalFileParses) {
  const std::vector<uint8_t> bytes = MinimalFile();
  auto parsed = GgufFile::Parse(bytes.data(), bytes.size(), "x.gguf");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed.value()->data_offset_bytes(), 96u);
  const GgufTensorInfo& w = parsed.value()->tensors().at(0);
  EXPECT_EQ(w.name, "w");
  const auto* data = reinterpret_cast<const float*>(parsed.value()->TensorData(w));
  EXPECT_EQ(data[7], 8.0f);
}

TEST(GgufReader, WrongMagicNamesTheMagic) {
  std::vector<uint8_t> bytes = MinimalFile();
  bytes[0] = 'X';
  EXPECT_THAT(ParseError(bytes), HasSubstr("x.gguf: magic at offset 0 is not \"GGUF\""));
}

TEST(GgufReader, VersionOneIsRejectedClearly) {
  std::vector<uint8_t> bytes = MinimalFile();
  Patch<uint32_t>(&bytes, 4, 1);
  EXPECT_THAT(ParseError(bytes), HasSubstr("version at offset 4 is 1; GGUF v1"));
  Patch<uint32_t>(&bytes, 4, 7);
  EXPECT_THAT(ParseError(bytes), HasSubstr("version at offset 4 is 7"));
}

TEST(GgufReader, VersionTwoIsAccepted) {
  std::vector<uint8_t> bytes = MinimalFile();
  Patch<uint32_t>(&bytes, 4, 2);
  EXPECT_TRUE(GgufFile::Parse(bytes.data(), bytes.size(), "x.gguf").ok());
}

TEST(GgufReader, HugeCountsFailBeforeAllocating) {
  std::vector<uint8_t> bytes = MinimalFile();
  Patch<uint64_t>(&bytes, 8, uint64_t{1} << 40);
  EXPECT_THAT(ParseError(bytes), HasSubstr("tensor_count at offset 8 1099511627776 cannot fit"));
  bytes = MinimalFile();
  Patch<uint64_t>(&bytes, 16, ~uint64_t{0});
  EXPECT_THAT(ParseError(bytes), HasSubstr("kv_count at offset 16"));
}

TEST(GgufReader, StringLengthPastEndNamesTheString) {
  std::vector<uint8_t> bytes = MinimalFile();
  Patch<uint64_t>(&bytes, 24, 1000);
  EXPECT_THAT(ParseError(bytes),
              HasSubstr("tensor #0 name length at offset 24 1000 runs past the end"));
}

TEST(GgufReader, TooManyDimsNamesTheTensor) {
  std::vector<uint8_t> bytes = MinimalFile();
  Patch<uint32_t>(&bytes, 33, 5);
  EXPECT_THAT(ParseError(bytes), HasSubstr("tensor 'w' n_dims at offset 33 is 5"));
}

TEST(GgufReader, ZeroAndOverflowingDimsAreRejected) {
  std::vector<uint8_t> bytes = MinimalFile();
  Patch<uint64_t>(&bytes, 45, 0);
  EXPECT_THAT(ParseError(bytes), HasSubstr("tensor 'w' ne[1] at offset 45 is 0"));
  Patch<uint64_t>(&bytes, 45, uint64_t{1} << 62);
  EXPECT_THAT(ParseError(bytes), HasSubstr("tensor 'w' ne[1] at offset 45 makes the element"));
}

TEST(GgufReader, UnknownTensorTypeNamesTypeIdAndTensor) {
  std::vector<uint8_t> bytes = MinimalFile();
  Patch<uint32_t>(&bytes, 53, 99);
  EXPECT_THAT(ParseError(bytes),
              HasSubstr("tensor 'w' type at offset 53 is 99, not a known GGML type"));
}

TEST(GgufReader, QuantizedRowMustHoldWholeBlocks) {
  std::vector<uint8_t> bytes = MinimalFile();
  Patch<uint32_t>(&bytes, 53, HWINFER_DTYPE_Q8_0);  // ne[0] = 4 is not a multiple of 32
  EXPECT_THAT(ParseError(bytes), HasSubstr("tensor 'w' ne[0] at offset 37 is 4, not a multiple"));
}

// K-quants: a row must hold whole 256-value super-blocks, and the data must hold every byte of
// them (a file whose tensor says Q6_K but holds the bytes of an F32 tensor is cut short).
TEST(GgufReader, SuperBlockTypesNeedWholeSuperBlocksAndTheirBytes) {
  std::vector<uint8_t> bytes = MinimalFile();
  Patch<uint32_t>(&bytes, 53, HWINFER_DTYPE_Q4_K);  // ne[0] = 4
  EXPECT_THAT(ParseError(bytes), HasSubstr("tensor 'w' ne[0] at offset 37 is 4, not a multiple "
                                           "of the Q4_K block (256 values)"));
  bytes = MinimalFile();
  Patch<uint64_t>(&bytes, 37, 288);  // ne[0]: 9 blocks of 32, not whole super-blocks
  Patch<uint32_t>(&bytes, 53, HWINFER_DTYPE_Q6_K);
  EXPECT_THAT(ParseError(bytes),
              HasSubstr("is 288, not a multiple of the Q6_K block (256 values)"));
  bytes = MinimalFile();
  Patch<uint64_t>(&bytes, 37, 256);  // [2, 256] Q6_K: 2 x 210 bytes; the file holds 32
  Patch<uint32_t>(&bytes, 53, HWINFER_DTYPE_Q6_K);
  EXPECT_THAT(ParseError(bytes), HasSubstr("tensor 'w' data [offset 96, 420 bytes] runs past the "
                                           "end of the file (128 bytes)"));
}

// F32 data labelled Q4_K: the dims still hold whole super-blocks, but the type says 288 bytes
// where the tensor has 2048 before the next one.
TEST(GgufReader, ATypeThatDoesNotMatchTheDataIsRejected) {
  static const std::vector<float> kValues(512, 0.5f);
  GgufWriter writer;
  ASSERT_TRUE(writer.AddTensor("w", HWINFER_DTYPE_F32, {256, 2}, kValues.data(), 2048).ok());
  ASSERT_TRUE(writer.AddTensor("v", HWINFER_DTYPE_F32, {256, 2}, kValues.data(), 2048).ok());
  std::vector<uint8_t> bytes = writer.Serialize().value();
  ASSERT_TRUE(test::SetTensorType(bytes, "w", HWINFER_DTYPE_Q4_K));
  EXPECT_THAT(ParseError(bytes),
              HasSubstr("x.gguf: tensor 'w' is Q4_K of 288 bytes, but its data runs 2048 bytes up "
                        "to tensor 'v': its type or shape does not match its data"));
}

TEST(GgufReader, MisalignedOffsetNamesTheOffset) {
  std::vector<uint8_t> bytes = MinimalFile();
  Patch<uint64_t>(&bytes, 57, 4);
  EXPECT_THAT(ParseError(bytes),
              HasSubstr("tensor 'w' offset at offset 57 is 4, not a multiple of the 32-byte"));
}

TEST(GgufReader, DataPastEndNamesTensorOffsetAndSize) {
  std::vector<uint8_t> bytes = MinimalFile();
  bytes.resize(100);
  EXPECT_THAT(ParseError(bytes), HasSubstr("x.gguf: tensor 'w' data [offset 96, 32 bytes] runs "
                                           "past the end of the file (100 bytes)"));
  bytes = MinimalFile();
  Patch<uint64_t>(&bytes, 57, uint64_t{1} << 63);  // aligned but far outside
  EXPECT_THAT(ParseError(bytes), HasSubstr("tensor 'w' data [offset"));
}

TEST(GgufReader, DuplicateTensorNameIsRejected) {
  std::vector<uint8_t> bytes = MinimalFile(2);
  bytes[65 + 8] = 'w';  // the second tensor info starts at 65; its name "v" becomes "w"
  EXPECT_THAT(ParseError(bytes), HasSubstr("tensor 'w' at offset 65 is a duplicate tensor name"));
}

TEST(GgufReader, BadMetadataIsNamedByKey) {
  GgufWriter writer;
  ASSERT_TRUE(writer.AddKv("a.flag", GgufValue::Bool(true)).ok());
  ASSERT_TRUE(writer.AddKv("a.list", GgufValue::Array(GgufType::kUint32, {})).ok());
  std::vector<uint8_t> good = writer.Serialize().value();
  // KV 0: key length 24, key 32..38, type 38, value 42. KV 1: key length 43, key 51..57, type 57,
  // element type 61, count 65.
  std::vector<uint8_t> bytes = good;
  bytes[42] = 2;
  EXPECT_THAT(ParseError(bytes), HasSubstr("metadata 'a.flag' at offset 42 is a bool of value 2"));
  bytes = good;
  Patch<uint32_t>(&bytes, 38, 13);
  EXPECT_THAT(ParseError(bytes), HasSubstr("metadata 'a.flag' type at offset 38 is 13"));
  bytes = good;
  Patch<uint64_t>(&bytes, 65, uint64_t{1} << 61);
  EXPECT_THAT(ParseError(bytes), HasSubstr("metadata 'a.list' length at offset 65"));
  bytes = good;
  std::memcpy(bytes.data() + 51, "a.flag", 6);
  EXPECT_THAT(ParseError(bytes), HasSubstr("metadata 'a.flag' at offset 43 is a duplicate key"));
}

TEST(GgufReader, ArraysNestedDeeperThanEightLevelsAreRejected) {
  GgufValue value = GgufValue::Array(GgufType::kUint8, {GgufValue::Uint8(7)});
  for (int depth = 1; depth < 8; ++depth) value = GgufValue::Array(GgufType::kArray, {value});
  GgufWriter ok_writer;
  ASSERT_TRUE(ok_writer.AddKv("deep", value).ok());
  std::vector<uint8_t> bytes = ok_writer.Serialize().value();
  auto parsed = GgufFile::Parse(bytes.data(), bytes.size(), "x.gguf");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();  // 8 levels are fine
  EXPECT_TRUE(*parsed.value()->Find("deep") == value);
  GgufWriter deep_writer;
  ASSERT_TRUE(
      deep_writer.AddKv("deep", GgufValue::Array(GgufType::kArray, {std::move(value)})).ok());
  bytes = deep_writer.Serialize().value();
  EXPECT_THAT(ParseError(bytes), HasSubstr("metadata 'deep'[0][0][0][0][0][0][0][0] at offset"));
}

// Two tensors sharing bytes (a hostile file; no writer does it) were accepted as two weights.
TEST(GgufReader, TensorsWhoseDataOverlapAreRejected) {
  auto bytes = test::EditedGguf(DataPath("tiny-llama-f32.gguf"), [](auto&, auto&) {});
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  ASSERT_TRUE(test::AliasTensorData(*bytes, "blk.0.attn_v.weight", "blk.0.attn_k.weight"));
  auto parsed = GgufFile::Parse(bytes->data(), bytes->size(), "aliased.gguf");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(parsed.status().message(), HasSubstr("overlaps tensor"));
  EXPECT_THAT(parsed.status().message(), HasSubstr("every tensor needs bytes of its own"));
}

// open() of a FIFO blocks until a writer comes: the type is checked first, and never blocks.
TEST(GgufReader, OpenRefusesWhatIsNotARegularFile) {
  const std::string dir = ::testing::TempDir() + "gguf_not_regular_" + std::to_string(::getpid());
  ASSERT_EQ(::mkdir(dir.c_str(), 0700), 0);
  const std::string fifo = dir + "/model.gguf";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const struct {
    std::string path, kind;
  } cases[] = {{fifo, "is a FIFO (named pipe), not a regular file"},
               {dir, "is a directory, not a regular file"},
               {"/dev/zero", "is a character device, not a regular file"}};
  for (const auto& c : cases) {
    auto opened = GgufFile::Open(c.path);
    ASSERT_FALSE(opened.ok()) << c.path;
    EXPECT_EQ(opened.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(opened.status().message(), HasSubstr("model file '" + c.path + "' " + c.kind));
  }
  ::unlink(fifo.c_str());
  ::rmdir(dir.c_str());
}

TEST(GgufReader, BadAlignmentIsRejected) {
  GgufWriter writer;
  ASSERT_TRUE(writer.AddKv("general.alignment", GgufValue::Uint32(64)).ok());
  std::vector<uint8_t> bytes = writer.Serialize().value();
  auto parsed = GgufFile::Parse(bytes.data(), bytes.size(), "x.gguf");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed.value()->alignment(), 64u);
  // The value sits after header (24), key length (8), key (17) and type (4).
  Patch<uint32_t>(&bytes, 24 + 8 + 17 + 4, 48);
  EXPECT_THAT(ParseError(bytes), HasSubstr("'general.alignment' must be a uint32 power of two"));
}

}  // namespace
}  // namespace hwinfer
