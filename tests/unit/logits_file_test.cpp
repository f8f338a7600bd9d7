// logits_file_test.cpp — the reference files of `hwinfer eval` (hwinfer/logits_file.h): what is
// written reads back, a file that is not whole never appears under its name, and every mismatch
// or damage is refused naming the file and what differs.
#include "hwinfer/logits_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace hwinfer {
namespace {

using ::testing::HasSubstr;

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "/logits-file-" + std::to_string(::getpid()) + "-" + name;
}

ModelShape TinyShape() {
  ModelShape s;
  s.n_layers = 2;
  s.d_model = 256;
  s.n_heads = 8;
  s.n_kv_heads = 2;
  s.ffn_dim = 768;
  s.vocab_size = 5;
  return s;
}

// Two windows of 6 tokens over a vocabulary of 5: positions 3 and 4 scored.
LogitsFileHeader SmallHeader() {
  return {kLogitsFileVersion,
          5,
          6,
          3,
          2,
          ShapeSignature(TinyShape()),
          "test run",
          {1, 2, 3, 4, 0, 1, 1, 4, 4, 3, 2, 1}};
}

std::vector<float> WindowValues(float base) {
  std::vector<float> values(2 * 5);
  for (size_t i = 0; i < values.size(); ++i) values[i] = base - static_cast<float>(i);
  return values;
}

void WriteSmallFile(const std::string& path) {
  auto writer = LogitsFileWriter::Create(path, SmallHeader());
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  ASSERT_TRUE((*writer)->WriteWindow(WindowValues(-1)).ok());
  ASSERT_TRUE((*writer)->WriteWindow(WindowValues(-20)).ok());
  ASSERT_TRUE((*writer)->Finish().ok());
}

TEST(LogitsFile, ReadsBackWhatWasWritten) {
  const std::string path = TempPath("good.bin");
  WriteSmallFile(path);
  EXPECT_FALSE(std::filesystem::exists(path + ".partial"));
  auto reader = LogitsFileReader::Open(path);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  const LogitsFileHeader& h = (*reader)->header();
  EXPECT_EQ(h.shape, "llama layers=2 d_model=256 heads=8 kv_heads=2 ffn=768 vocab=5");
  EXPECT_EQ(h.about, "test run");
  EXPECT_EQ(h.tokens, SmallHeader().tokens);
  EXPECT_EQ(std::filesystem::file_size(path), h.FileBytes());
  std::vector<float> values;
  ASSERT_TRUE((*reader)->ReadWindow(1, &values).ok());
  EXPECT_EQ(values, WindowValues(-20));
  ASSERT_TRUE((*reader)->ReadWindow(0, &values).ok());
  EXPECT_EQ(values, WindowValues(-1));
  EXPECT_TRUE(CheckSameRun(h, SmallHeader(), path).ok());
  std::remove(path.c_str());
}

TEST(LogitsFile, AnUnfinishedFileLeavesNothingBehind) {
  const std::string path = TempPath("unfinished.bin");
  {
    auto writer = LogitsFileWriter::Create(path, SmallHeader());
    ASSERT_TRUE(writer.ok());
    ASSERT_TRUE((*writer)->WriteWindow(WindowValues(-1)).ok());
    EXPECT_TRUE(std::filesystem::exists(path + ".partial"));
    auto early = (*writer)->Finish();
    ASSERT_FALSE(early.ok());
    EXPECT_THAT(early.message(), HasSubstr("1 of 2 windows written"));
  }
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_FALSE(std::filesystem::exists(path + ".partial"));
}

TEST(LogitsFile, RefusesDamagedFiles) {
  const std::string path = TempPath("damaged.bin");
  WriteSmallFile(path);
  const auto size = std::filesystem::file_size(path);
  auto expect_refused = [&path](const std::string& message) {
    auto reader = LogitsFileReader::Open(path);
    ASSERT_FALSE(reader.ok()) << message;
    EXPECT_THAT(reader.status().message(), HasSubstr("reference file '" + path + "'"));
    EXPECT_THAT(reader.status().message(), HasSubstr(message));
  };
  std::filesystem::resize_file(path, size - 4);
  expect_refused(std::to_string(size - 4) +
                 " bytes; its header (2 windows of 2 scored positions "
                 "x 5 log-probabilities) says " +
                 std::to_string(size) + ": truncated");
  std::filesystem::resize_file(path, 20);
  expect_refused("has 20 bytes: too short for a header");
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << "GGUF and then some more bytes of another file";
  }
  expect_refused("does not start with HWLOGITS");
  WriteSmallFile(path);
  {
    std::fstream patch(path, std::ios::binary | std::ios::in | std::ios::out);
    patch.seekp(8);
    const char version[4] = {7, 0, 0, 0};
    patch.write(version, 4);
  }
  expect_refused("is version 7; this hwinfer reads version 1");
  WriteSmallFile(path);
  {
    std::fstream patch(path, std::ios::binary | std::ios::in | std::ios::out);
    patch.seekp(20);  // first_scored
    const char first[4] = {9, 0, 0, 0};
    patch.write(first, 4);
  }
  expect_refused("has a header out of range: vocab 5, ctx 6, first scored 9");
  std::remove(path.c_str());
  auto missing = LogitsFileReader::Open(path);
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("does not exist"));
}

TEST(LogitsFile, RefusesAReferenceOfAnotherRun) {
  const LogitsFileHeader reference = SmallHeader();
  auto expect_mismatch = [&reference](const LogitsFileHeader& run, const std::string& message) {
    const Status same = CheckSameRun(reference, run, "ref.bin");
    ASSERT_FALSE(same.ok()) << message;
    EXPECT_THAT(same.message(), HasSubstr("reference file 'ref.bin'"));
    EXPECT_THAT(same.message(), HasSubstr(message));
  };
  LogitsFileHeader run = SmallHeader();
  ModelShape other = TinyShape();
  other.n_layers = 3;
  run.shape = ShapeSignature(other);
  expect_mismatch(run, "was made with another model: its layers is 2, this model's is 3");
  other = TinyShape();
  other.vocab_size = 7;
  run.shape = ShapeSignature(other);
  expect_mismatch(run, "its vocab is 5, this model's is 7");
  run = SmallHeader();
  run.vocab_size = 7;
  expect_mismatch(run, "has a vocabulary size of 5; this run's is 7");
  run = SmallHeader();
  run.ctx = 8;
  expect_mismatch(run, "has a context (--ctx) of 6; this run's is 8");
  run = SmallHeader();
  run.windows = 1;
  expect_mismatch(run, "has a window count of 2; this run's is 1");
  run = SmallHeader();
  run.tokens[8] = 0;
  expect_mismatch(run, "token 8 (window 1, position 2) is 4 there and 0 here");
}

}  // namespace
}  // namespace hwinfer
