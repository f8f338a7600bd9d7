// text_bench.cpp — the tokenizers' speed (issue 16's targets: tokenizing 1 MB of English text in
// under 1 s on one core; building the 128k-token Llama 3 tokenizer in under 200 ms). The text is
// the license texts every Debian/Ubuntu system has in /usr/share/common-licenses, repeated to
// 1 MiB; the vocabularies are the test data (the Llama 3 one as decompressed into the build tree).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "hwinfer/gguf.h"
#include "hwinfer/tokenizer.h"

namespace hwinfer {
namespace {

const std::string kSpmVocab =
    std::string(HWINFER_SOURCE_DIR) + "/tests/data/text/ggml-vocab-llama-spm.gguf";
const std::string kBpeVocab =
    std::string(HWINFER_TEST_DATA_BUILD_DIR) + "/text/ggml-vocab-llama-bpe.gguf";

const std::string& EnglishMiB() {
  static const std::string text = [] {
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::directory_iterator("/usr/share/common-licenses")) {
      if (entry.is_regular_file()) files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    std::string all;
    for (const auto& path : files) {
      std::ifstream in(path, std::ios::binary);
      all.append(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    std::string out;
    while (!all.empty() && out.size() < (1u << 20)) out += all;
    out.resize(std::min<size_t>(out.size(), 1u << 20));
    return out;
  }();
  return text;
}

std::unique_ptr<GgufFile> OpenOrSkip(benchmark::State& state, const std::string& path) {
  auto file = GgufFile::Open(path);
  if (!file.ok()) state.SkipWithError(file.status().ToString().c_str());
  return file.ok() ? std::move(*file) : nullptr;
}

const std::string& VocabFor(const benchmark::State& state) {
  return state.range(0) == 0 ? kSpmVocab : kBpeVocab;
}

// Reading the GGUF metadata (tokens, scores, merges) into memory.
void BM_OpenVocab(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(OpenOrSkip(state, VocabFor(state)));
  state.SetLabel(state.range(0) == 0 ? "llama-spm" : "llama-bpe");
}

// Building the tokenizer from the parsed metadata (maps, merges, pre-tokenizer).
void BM_BuildTokenizer(benchmark::State& state) {
  auto file = OpenOrSkip(state, VocabFor(state));
  if (!file) return;
  for (auto _ : state) benchmark::DoNotOptimize(Tokenizer::FromGguf(*file));
  state.SetLabel(state.range(0) == 0 ? "llama-spm" : "llama-bpe");
}

void BM_Encode1MiB(benchmark::State& state) {
  auto file = OpenOrSkip(state, VocabFor(state));
  if (!file) return;
  auto tokenizer = Tokenizer::FromGguf(*file);
  if (!tokenizer.ok()) return state.SkipWithError(tokenizer.status().ToString().c_str());
  const std::string& text = EnglishMiB();
  size_t tokens = 0;
  for (auto _ : state) {
    const std::vector<int32_t> ids = (*tokenizer)->Encode(text, true, false);
    tokens = ids.size();
    benchmark::DoNotOptimize(ids.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
  state.counters["tokens"] = static_cast<double>(tokens);
  state.SetLabel(state.range(0) == 0 ? "llama-spm" : "llama-bpe");
}

BENCHMARK(BM_OpenVocab)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_BuildTokenizer)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Encode1MiB)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace hwinfer

BENCHMARK_MAIN();
