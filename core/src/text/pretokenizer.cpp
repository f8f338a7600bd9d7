// pretokenizer.cpp — see pretokenizer.h. The expressions are those the vocabularies' own
// tokenizer.json files define (and llama.cpp uses for the same `pre` names), compiled once per
// Tokenizer; matching reuses one PCRE2 match block and JIT stack per thread.
#define PCRE2_CODE_UNIT_WIDTH 8
#include "pretokenizer.h"

#include <pcre2.h>

#include <array>

namespace hwinfer::text {
namespace {

constexpr const char* kGpt2 =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S))";
constexpr const char* kLlama3 =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|)"
    R"(\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr const char* kQwen2 =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|)"
    R"(\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

struct PreKind {
  const char* name;
  std::vector<const char*> expressions;
  bool ignore_merges;
};

const std::vector<PreKind>& PreKinds() {
  static const std::vector<PreKind> kinds = {
      // No or an unrecognised-but-default `pre`: punctuation runs, then GPT-2's words, then
      // digit runs cut into threes (what llama.cpp applies to a vocabulary without a `pre`).
      {"default", {R"([\p{P}\$\+<=>\^~\|]+)", kGpt2, R"(\p{N}+)", "[0-9][0-9][0-9]"}, false},
      {"gpt-2", {kGpt2}, false},
      {"llama-bpe", {kLlama3}, true},
      {"llama3", {kLlama3}, true},
      {"qwen2", {kQwen2}, false},
  };
  return kinds;
}

// \s as Unicode's White_Space, which also has U+0085 (PCRE2's \s has the Z categories and
// \t\n\v\f\r only): \s -> [\s\x{85}] (inside a class: \s\x{85}), \S -> [^\s\x{85}].
std::string WithWhiteSpace(std::string_view pattern) {
  std::string out;
  bool in_class = false;
  for (size_t k = 0; k < pattern.size(); ++k) {
    const char c = pattern[k];
    if (c == '\\' && k + 1 < pattern.size()) {
      const char next = pattern[++k];
      if (next == 's') {
        out += in_class ? R"(\s\x{85})" : R"([\s\x{85}])";
      } else if (next == 'S' && !in_class) {
        out += R"([^\s\x{85}])";
      } else {
        out += c;
        out += next;
      }
      continue;
    }
    if (c == '[') in_class = true;
    if (c == ']') in_class = false;
    out += c;
  }
  return out;
}

// One match block (a single pair: no captures are used) and JIT stack per thread.
struct MatchScratch {
  pcre2_match_data* data = pcre2_match_data_create(1, nullptr);
  pcre2_match_context* context = pcre2_match_context_create(nullptr);
  pcre2_jit_stack* stack = pcre2_jit_stack_create(32 * 1024, 8 * 1024 * 1024, nullptr);
  MatchScratch() { pcre2_jit_stack_assign(context, nullptr, stack); }
  ~MatchScratch() {
    pcre2_jit_stack_free(stack);
    pcre2_match_context_free(context);
    pcre2_match_data_free(data);
  }
  MatchScratch(const MatchScratch&) = delete;
  MatchScratch& operator=(const MatchScratch&) = delete;
};

}  // namespace

struct Pretokenizer::Expression {
  pcre2_code* code = nullptr;
  ~Expression() { pcre2_code_free(code); }
};

Pretokenizer::~Pretokenizer() = default;

std::string Pretokenizer::KnownNames() {
  std::string names;
  for (const PreKind& kind : PreKinds())
    names += (names.empty() ? "" : ", ") + std::string(kind.name);
  return names;
}

StatusOr<std::unique_ptr<Pretokenizer>> Pretokenizer::ForName(const std::string& pre) {
  const PreKind* kind = nullptr;
  for (const PreKind& candidate : PreKinds()) {
    if (pre == candidate.name) kind = &candidate;
  }
  if (kind == nullptr) {
    return Unsupported("tokenizer.ggml.pre '" + pre +
                       "' is not a pre-tokenizer known here; known: " + KnownNames());
  }
  std::unique_ptr<Pretokenizer> pretokenizer(new Pretokenizer());
  pretokenizer->ignore_merges_ = kind->ignore_merges;
  for (const char* source : kind->expressions) {
    const std::string pattern = WithWhiteSpace(source);
    int error = 0;
    PCRE2_SIZE error_offset = 0;
    auto expression = std::make_unique<Expression>();
    expression->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                     PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF, &error,
                                     &error_offset, nullptr);
    if (expression->code == nullptr) {
      std::array<PCRE2_UCHAR, 256> message{};
      pcre2_get_error_message(error, message.data(), message.size());
      return Internal("pre-tokenizer '" + pre + "': PCRE2 cannot compile its expression at " +
                      std::to_string(error_offset) + ": " +
                      reinterpret_cast<const char*>(message.data()));
    }
    pcre2_jit_compile(expression->code, PCRE2_JIT_COMPLETE);  // without JIT: interpreted
    pretokenizer->expressions_.push_back(std::move(expression));
  }
  return pretokenizer;
}

void Pretokenizer::SplitWith(const Expression& expression, std::string_view text,
                             std::vector<std::string_view>& out) const {
  thread_local MatchScratch scratch;
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  size_t start = 0;  // of the text not yet given out
  size_t at = 0;     // where the next match is looked for
  while (at < text.size()) {
    const int rc =
        pcre2_match(expression.code, subject, text.size(), at, 0, scratch.data, scratch.context);
    if (rc < 0) break;  // no further match (or a matching limit): the rest is one piece
    const PCRE2_SIZE* span = pcre2_get_ovector_pointer(scratch.data);
    if (span[1] == span[0]) {  // an empty match cannot split: look one byte further
      at = span[1] + 1;
      continue;
    }
    if (span[0] > start) out.push_back(text.substr(start, span[0] - start));
    out.push_back(text.substr(span[0], span[1] - span[0]));
    start = at = span[1];
  }
  if (start < text.size()) out.push_back(text.substr(start));
}

void Pretokenizer::Split(std::string_view text, std::vector<std::string_view>& words) const {
  std::vector<std::string_view> pieces{text}, next;
  for (const auto& expression : expressions_) {
    next.clear();
    for (std::string_view piece : pieces) SplitWith(*expression, piece, next);
    pieces.swap(next);
  }
  words.insert(words.end(), pieces.begin(), pieces.end());
}

}  // namespace hwinfer::text
