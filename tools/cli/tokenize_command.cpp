// tokenize_command.cpp — `hwinfer tokenize -m F [--ids] [--no-bos] [--parse-special] (TEXT |
// --file F)` and `hwinfer detokenize -m F IDS`: the model's own tokenizer (hwinfer/tokenizer.h,
// built from the GGUF metadata; vocabulary-only files do), as llama.cpp's llama-tokenize shows
// it: one "id -> 'piece'" line per token, or with --ids the ids as a list. A file is read as its
// bytes exactly (no newline stripped), and only if it is a regular file (hwinfer/input_file.h).
#include <fmt/format.h>

#include "commands.h"
#include "hwinfer/gguf.h"
#include "hwinfer/input_file.h"
#include "hwinfer/text_escape.h"
#include "hwinfer/tokenizer.h"

namespace hwinfer::cli {
namespace {

StatusOr<std::unique_ptr<Tokenizer>> OpenTokenizer(const std::string& path) {
  auto file = GgufFile::Open(path);
  if (!file.ok()) return file.status();
  return Tokenizer::FromGguf(**file);
}

// The most `tokenize --file` reads: far more text than any context holds.
constexpr uint64_t kMaxTextFileBytes = uint64_t{256} << 20;

}  // namespace

int RunTokenize(const TokenizeOptions& options) {
  auto tokenizer = OpenTokenizer(options.model);
  if (!tokenizer.ok()) return ReportError(tokenizer.status());
  std::string text = options.text;
  if (!options.file.empty()) {
    auto bytes = ReadInputFile(options.file, "text file", kMaxTextFileBytes);
    if (!bytes.ok()) return ReportError(bytes.status());
    text = *bytes;
  }
  const std::vector<int32_t> ids =
      (*tokenizer)->Encode(text, !options.no_bos, options.parse_special);
  if (options.ids_only) {
    fmt::print("[{}]\n", fmt::join(ids, ", "));
    return 0;
  }
  for (int32_t id : ids) {
    fmt::print("{:6} -> '{}'\n", id, EscapeControlCharacters((*tokenizer)->Piece(id, true)));
  }
  return 0;
}

int RunDetokenize(const DetokenizeOptions& options) {
  auto tokenizer = OpenTokenizer(options.model);
  if (!tokenizer.ok()) return ReportError(tokenizer.status());
  auto ids = ParseTokenIds(options.ids, "IDS");
  if (!ids.ok()) return ReportError(ids.status());
  for (int32_t id : *ids) {
    if (id >= (*tokenizer)->vocab_size()) {
      return ReportError(InvalidArgument(fmt::format("token {} is outside the vocabulary [0, {})",
                                                     id, (*tokenizer)->vocab_size())));
    }
  }
  fmt::print("{}\n", EscapeControlCharacters((*tokenizer)->Decode(*ids, false)));
  return 0;
}

}  // namespace hwinfer::cli
