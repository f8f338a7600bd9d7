// logits_file.cpp — see hwinfer/logits_file.h.
#include "hwinfer/logits_file.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sstream>

namespace hwinfer {
namespace {

constexpr char kMagic[8] = {'H', 'W', 'L', 'O', 'G', 'I', 'T', 'S'};
// Bounds that keep every size below far from overflow and refuse nonsense early.
constexpr int64_t kMaxVocab = int64_t{1} << 24;
constexpr int64_t kMaxCtx = int64_t{1} << 24;
constexpr int64_t kMaxWindows = int64_t{1} << 24;
constexpr uint32_t kMaxText = 1u << 16;

// The fixed part: magic, version, vocab, ctx, first_scored, windows.
constexpr uint64_t kFixedBytes = 8 + 5 * 4;

void PutU32(std::string* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint32_t GetU32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}

// The header's bytes up to the tokens (fixed part, shape and about).
std::string EncodeHead(const LogitsFileHeader& h) {
  std::string out(kMagic, sizeof(kMagic));
  for (int64_t v : {int64_t{h.version}, h.vocab_size, h.ctx, h.first_scored, h.windows}) {
    PutU32(&out, static_cast<uint32_t>(v));
  }
  for (const std::string* text : {&h.shape, &h.about}) {
    PutU32(&out, static_cast<uint32_t>(text->size()));
    out += *text;
  }
  return out;
}

Status ReadExactly(const InputFile& file, uint64_t offset, void* out, uint64_t bytes) {
  auto* p = static_cast<uint8_t*>(out);
  while (bytes > 0) {
    const ssize_t n = pread(file.fd(), p, bytes, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return InvalidArgument(
          fmt::format("reference file '{}': cannot read {} bytes at offset {}: {}", file.path(),
                      bytes, offset, n < 0 ? std::strerror(errno) : "end of file"));
    }
    p += n;
    offset += static_cast<uint64_t>(n);
    bytes -= static_cast<uint64_t>(n);
  }
  return Status::Ok();
}

// "key=value" pairs of a shape signature, with the architecture as "architecture=...".
std::vector<std::pair<std::string, std::string>> SignatureFields(const std::string& signature) {
  std::vector<std::pair<std::string, std::string>> fields;
  std::istringstream words(signature);
  std::string word;
  while (words >> word) {
    const size_t eq = word.find('=');
    if (eq == std::string::npos) {
      fields.emplace_back("architecture", word);
    } else {
      fields.emplace_back(word.substr(0, eq), word.substr(eq + 1));
    }
  }
  return fields;
}

Status CheckShapes(const std::string& reference, const std::string& run, const std::string& path) {
  if (reference == run) return Status::Ok();
  const auto theirs = SignatureFields(reference), ours = SignatureFields(run);
  for (size_t i = 0; i < std::min(theirs.size(), ours.size()); ++i) {
    if (theirs[i] != ours[i]) {
      return InvalidArgument(fmt::format(
          "reference file '{}' was made with another model: its {} is {}, this model's is {} "
          "(it has \"{}\", this run \"{}\")",
          path, theirs[i].first, theirs[i].second, ours[i].second, reference, run));
    }
  }
  return InvalidArgument(
      fmt::format("reference file '{}' was made with another model (\"{}\"; this run: \"{}\")",
                  path, reference, run));
}

}  // namespace

uint64_t LogitsFileHeader::FileBytes() const {
  const uint64_t head = kFixedBytes + 8 + shape.size() + about.size();
  const auto n_windows = static_cast<uint64_t>(windows);
  return head + 4 * n_windows * static_cast<uint64_t>(ctx) +
         4 * n_windows * static_cast<uint64_t>(scored_per_window()) *
             static_cast<uint64_t>(vocab_size);
}

std::string ShapeSignature(const ModelShape& s) {
  return fmt::format("{} layers={} d_model={} heads={} kv_heads={} ffn={} vocab={}", s.architecture,
                     s.n_layers, s.d_model, s.n_heads, s.n_kv_heads, s.ffn_dim, s.vocab_size);
}

Status CheckSameRun(const LogitsFileHeader& reference, const LogitsFileHeader& run,
                    const std::string& path) {
  HWINFER_RETURN_IF_ERROR(CheckShapes(reference.shape, run.shape, path));
  const struct {
    const char* what;
    int64_t theirs, ours;
  } numbers[] = {{"vocabulary size", reference.vocab_size, run.vocab_size},
                 {"context (--ctx)", reference.ctx, run.ctx},
                 {"first scored position", reference.first_scored, run.first_scored},
                 {"window count", reference.windows, run.windows}};
  for (const auto& n : numbers) {
    if (n.theirs != n.ours) {
      return InvalidArgument(fmt::format("reference file '{}' has a {} of {}; this run's is {}",
                                         path, n.what, n.theirs, n.ours));
    }
  }
  for (size_t i = 0; i < std::min(reference.tokens.size(), run.tokens.size()); ++i) {
    if (reference.tokens[i] != run.tokens[i]) {
      const auto ctx = static_cast<size_t>(run.ctx);
      return InvalidArgument(fmt::format(
          "reference file '{}' scored other tokens: token {} (window {}, position {}) is {} "
          "there and {} here; give the same text and tokenizer",
          path, i, i / ctx, i % ctx, reference.tokens[i], run.tokens[i]));
    }
  }
  return Status::Ok();
}

StatusOr<std::unique_ptr<LogitsFileWriter>> LogitsFileWriter::Create(
    const std::string& path, const LogitsFileHeader& header) {
  if (header.tokens.size() != static_cast<size_t>(header.windows * header.ctx)) {
    return Internal(fmt::format("logits file '{}': {} tokens for {} windows of {}", path,
                                header.tokens.size(), header.windows, header.ctx));
  }
  const std::string partial = path + ".partial";
  std::FILE* file = std::fopen(partial.c_str(), "wb");
  if (file == nullptr) {
    return InvalidArgument(
        fmt::format("cannot create '{}' (for --save-logits): {}", partial, std::strerror(errno)));
  }
  std::unique_ptr<LogitsFileWriter> writer(new LogitsFileWriter(path, header, file));
  const std::string head = EncodeHead(header);
  if (std::fwrite(head.data(), 1, head.size(), file) != head.size() ||
      std::fwrite(header.tokens.data(), sizeof(int32_t), header.tokens.size(), file) !=
          header.tokens.size()) {
    return InvalidArgument(fmt::format("cannot write '{}': {}", partial, std::strerror(errno)));
  }
  return writer;
}

LogitsFileWriter::~LogitsFileWriter() {
  if (file_ != nullptr) std::fclose(file_);
  if (!finished_) std::remove((path_ + ".partial").c_str());
}

Status LogitsFileWriter::WriteWindow(const std::vector<float>& log_probs) {
  const auto expected = static_cast<size_t>(header_.scored_per_window() * header_.vocab_size);
  if (log_probs.size() != expected || windows_written_ >= header_.windows) {
    return Internal(fmt::format("logits file '{}': window {} of {} with {} values; expected {}",
                                path_, windows_written_, header_.windows, log_probs.size(),
                                expected));
  }
  if (std::fwrite(log_probs.data(), sizeof(float), log_probs.size(), file_) != log_probs.size()) {
    return InvalidArgument(
        fmt::format("cannot write '{}.partial': {}", path_, std::strerror(errno)));
  }
  ++windows_written_;
  return Status::Ok();
}

Status LogitsFileWriter::Finish() {
  if (windows_written_ != header_.windows) {
    return Internal(fmt::format("logits file '{}': {} of {} windows written", path_,
                                windows_written_, header_.windows));
  }
  const int closed = std::fclose(file_);
  file_ = nullptr;
  const std::string partial = path_ + ".partial";
  if (closed != 0 || std::rename(partial.c_str(), path_.c_str()) != 0) {
    return InvalidArgument(
        fmt::format("cannot finish '{}' (from '{}'): {}", path_, partial, std::strerror(errno)));
  }
  finished_ = true;
  return Status::Ok();
}

StatusOr<std::unique_ptr<LogitsFileReader>> LogitsFileReader::Open(const std::string& path) {
  HWINFER_ASSIGN_OR_RETURN(InputFile file, InputFile::Open(path, "reference file"));
  auto bad = [&path](const std::string& why) {
    return InvalidArgument(fmt::format("reference file '{}' {}", path, why));
  };
  uint8_t fixed[kFixedBytes];
  if (file.size_bytes() < kFixedBytes + 8) {
    return bad(
        fmt::format("has {} bytes: too short for a header (written by hwinfer eval "
                    "--save-logits?)",
                    file.size_bytes()));
  }
  HWINFER_RETURN_IF_ERROR(ReadExactly(file, 0, fixed, kFixedBytes));
  if (std::memcmp(fixed, kMagic, sizeof(kMagic)) != 0) {
    return bad("does not start with HWLOGITS: not written by hwinfer eval --save-logits");
  }
  LogitsFileHeader h;
  h.version = GetU32(fixed + 8);
  if (h.version != kLogitsFileVersion) {
    return bad(
        fmt::format("is version {}; this hwinfer reads version {}", h.version, kLogitsFileVersion));
  }
  h.vocab_size = GetU32(fixed + 12);
  h.ctx = GetU32(fixed + 16);
  h.first_scored = GetU32(fixed + 20);
  h.windows = GetU32(fixed + 24);
  if (h.vocab_size < 1 || h.vocab_size > kMaxVocab || h.ctx < 2 || h.ctx > kMaxCtx ||
      h.first_scored >= h.ctx - 1 || h.windows < 1 || h.windows > kMaxWindows) {
    return bad(
        fmt::format("has a header out of range: vocab {}, ctx {}, first scored {}, {} "
                    "windows",
                    h.vocab_size, h.ctx, h.first_scored, h.windows));
  }
  uint64_t offset = kFixedBytes;
  for (std::string* text : {&h.shape, &h.about}) {
    uint8_t length[4];
    HWINFER_RETURN_IF_ERROR(ReadExactly(file, offset, length, 4));
    const uint32_t n = GetU32(length);
    if (n > kMaxText || offset + 4 + n > file.size_bytes()) {
      return bad(fmt::format("has a text field of {} bytes at offset {}: truncated or damaged", n,
                             offset));
    }
    text->resize(n);
    HWINFER_RETURN_IF_ERROR(ReadExactly(file, offset + 4, text->data(), n));
    offset += 4 + n;
  }
  if (h.FileBytes() != file.size_bytes()) {
    return bad(fmt::format(
        "is {} bytes; its header ({} windows of {} scored positions x {} "
        "log-probabilities) says {}: truncated or damaged",
        file.size_bytes(), h.windows, h.scored_per_window(), h.vocab_size, h.FileBytes()));
  }
  h.tokens.resize(static_cast<size_t>(h.windows * h.ctx));
  HWINFER_RETURN_IF_ERROR(ReadExactly(file, offset, h.tokens.data(), 4 * h.tokens.size()));
  offset += 4 * h.tokens.size();
  return std::unique_ptr<LogitsFileReader>(
      new LogitsFileReader(std::move(file), std::move(h), offset));
}

Status LogitsFileReader::ReadWindow(int64_t w, std::vector<float>* log_probs) const {
  const auto values = static_cast<uint64_t>(header_.scored_per_window() * header_.vocab_size);
  log_probs->resize(values);
  return ReadExactly(file_, data_offset_ + 4 * values * static_cast<uint64_t>(w), log_probs->data(),
                     4 * values);
}

}  // namespace hwinfer
