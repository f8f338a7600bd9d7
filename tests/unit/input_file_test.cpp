// input_file_test.cpp — InputFile: only regular files are read, never blocking on what else is at
// the path (a FIFO, /dev/zero), and never past the limits the caller gives.
#include "hwinfer/input_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "temp_folder_test.h"

namespace hwinfer {
namespace {

using ::testing::HasSubstr;

class InputFileTest : public test::TempFolderTest {};

TEST_F(InputFileTest, ReadsARegularFileWhole) {
  const std::string path = Write("a.yaml", "backends: []\n");
  auto text = ReadInputFile(path, "config file", 1024);
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_EQ(*text, "backends: []\n");
}

TEST_F(InputFileTest, NamesWhatIsThereInsteadOfAFile) {
  const std::string fifo = (dir_ / "fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string missing = (dir_ / "none.yaml").string();
  EXPECT_EQ(ReadInputFile(missing, "config file", 1024).status().message(),
            "config file '" + missing + "' does not exist");
  EXPECT_EQ(ReadInputFile(missing, "config file", 1024).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(ReadInputFile(fifo, "config file", 1024).status().message(),
            "config file '" + fifo + "' is a FIFO (named pipe), not a regular file");
  EXPECT_EQ(ReadInputFile(dir_.string(), "config file", 1024).status().message(),
            "config file '" + dir_.string() + "' is a directory, not a regular file");
  EXPECT_EQ(ReadInputFile("/dev/zero", "config file", 1024).status().message(),
            "config file '/dev/zero' is a character device, not a regular file");
  EXPECT_EQ(CheckRegularFile("/dev/null", "result file").message(),
            "result file '/dev/null' is a character device, not a regular file");
}

TEST_F(InputFileTest, AFileOverTheLimitIsNotRead) {
  const std::string path = Write("big.yaml", std::string(2048, 'x'));
  const Status status = ReadInputFile(path, "config file", 1024).status();
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "config file '" + path + "' is 2.0 KiB; at most 1.0 KiB is read");
}

TEST_F(InputFileTest, ReadsLinesUpToALimit) {
  const std::string path = Write("r.jsonl", "one\n\ntwo\nthree");
  auto file = InputFile::Open(path, "workload file");
  ASSERT_TRUE(file.ok());
  std::string line;
  std::vector<std::string> lines;
  while (true) {
    auto more = file->ReadLine(&line, 16);
    ASSERT_TRUE(more.ok()) << more.status().ToString();
    if (!*more) break;
    lines.push_back(line);
  }
  EXPECT_EQ(lines, (std::vector<std::string>{"one", "", "two", "three"}));

  const std::string long_path = Write("long.jsonl", "ok\n" + std::string(100, 'y') + "\n");
  auto long_file = InputFile::Open(long_path, "workload file");
  ASSERT_TRUE(long_file.ok());
  ASSERT_TRUE(*long_file->ReadLine(&line, 16));
  const Status too_long = long_file->ReadLine(&line, 16).status();
  EXPECT_THAT(too_long.message(),
              HasSubstr(long_path + ":2: the line is longer than 16 bytes, the most one line of a "
                                    "workload file may hold"));
}

}  // namespace
}  // namespace hwinfer
