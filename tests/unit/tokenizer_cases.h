// tokenizer_cases.h — llama.cpp's tokenizer test files for the tokenizer tests: texts separated by
// "\n__ggml_vocab_test__\n" in a .inp file, one line of ids (no BOS) per text in a .out file.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "hwinfer/gguf.h"
#include "hwinfer/tokenizer.h"

namespace hwinfer::test {

inline std::string ReadFileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << path;
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

inline std::vector<std::pair<std::string, std::vector<int32_t>>> ReadTokenizerCases(
    const std::string& inp_path, const std::string& out_path) {
  const std::string inp = ReadFileBytes(inp_path);
  const std::string separator = "\n__ggml_vocab_test__\n";
  std::vector<std::string> texts;
  for (size_t start = 0, end; (end = inp.find(separator, start)) != std::string::npos;
       start = end + separator.size()) {
    texts.push_back(inp.substr(start, end - start));
  }
  std::istringstream out(ReadFileBytes(out_path));
  std::vector<std::pair<std::string, std::vector<int32_t>>> cases;
  std::string line;
  for (const std::string& text : texts) {
    EXPECT_TRUE(std::getline(out, line)) << out_path << ": fewer lines than texts";
    std::istringstream ids(line);
    std::vector<int32_t> want;
    for (int32_t id; ids >> id;) want.push_back(id);
    cases.emplace_back(text, want);
  }
  return cases;
}

inline std::unique_ptr<Tokenizer> LoadTokenizer(const std::string& path) {
  auto gguf = GgufFile::Open(path);
  EXPECT_TRUE(gguf.ok()) << gguf.status().ToString();
  if (!gguf.ok()) return nullptr;
  auto tokenizer = Tokenizer::FromGguf(**gguf);
  EXPECT_TRUE(tokenizer.ok()) << tokenizer.status().ToString();
  return tokenizer.ok() ? std::move(*tokenizer) : nullptr;
}

// |n| code points from ASCII, Latin, Cyrillic, CJK and emoji ranges, as UTF-8.
inline std::string RandomUtf8(std::mt19937& rng, int n) {
  const char32_t kRanges[][2] = {
      {0x20, 0x7e}, {0xa0, 0x24f}, {0x400, 0x4ff}, {0x4e00, 0x4fff}, {0x1f300, 0x1f64f}};
  std::string text;
  for (int c = 0; c < n; ++c) {
    const auto& range = kRanges[rng() % 5];
    const auto cp = static_cast<char32_t>(range[0] + rng() % (range[1] - range[0] + 1));
    if (cp < 0x80) {
      text += static_cast<char>(cp);
    } else if (cp < 0x800) {
      text += static_cast<char>(0xc0 | (cp >> 6));
      text += static_cast<char>(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
      text += static_cast<char>(0xe0 | (cp >> 12));
      text += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      text += static_cast<char>(0x80 | (cp & 0x3f));
    } else {
      text += static_cast<char>(0xf0 | (cp >> 18));
      text += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
      text += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      text += static_cast<char>(0x80 | (cp & 0x3f));
    }
  }
  return text;
}

}  // namespace hwinfer::test
