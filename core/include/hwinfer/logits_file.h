// hwinfer/logits_file.h — a reference run's next-token log-probabilities, saved by `hwinfer eval
// --save-logits` and read back by `--reference` to compare another run with it (another weight
// type, KV dtype or backend: docs/evaluation.md).
//
// Little-endian, version 1: "HWLOGITS", u32 version, vocab_size, ctx, first_scored, windows; the
// model's shape and a description, each as u32 length + bytes; i32 tokens [windows * ctx]; then
// per window the F32 log-probabilities [ctx - 1 - first_scored, vocab_size] of its scored
// positions. The writer fills PATH.partial and renames it when complete; the reader checks the
// size against the header before anything is read and reads one window at a time.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "hwinfer/input_file.h"
#include "hwinfer/model_shape.h"
#include "hwinfer/status.h"

namespace hwinfer {

inline constexpr uint32_t kLogitsFileVersion = 1;

struct LogitsFileHeader {
  uint32_t version = kLogitsFileVersion;
  int64_t vocab_size = 0;
  int64_t ctx = 0;           // tokens per window
  int64_t first_scored = 0;  // the window's first scored position
  int64_t windows = 0;
  std::string shape;            // ShapeSignature of the model
  std::string about;            // what made it: model file, weight type, KV dtype, device
  std::vector<int32_t> tokens;  // [windows * ctx]
  int64_t scored_per_window() const { return ctx - 1 - first_scored; }
  // The bytes of the whole file this header describes.
  uint64_t FileBytes() const;
};

// "llama layers=22 d_model=2048 heads=32 kv_heads=4 ffn=5632 vocab=32000": what two runs must
// share to be compared (the weight type may differ; the model may not).
std::string ShapeSignature(const ModelShape& shape);

// InvalidArgument naming |reference| (the file) and the first thing that differs between its
// header and the run's: version, vocabulary size, context, first scored position, window count,
// a field of the shape, or the first token that differs.
Status CheckSameRun(const LogitsFileHeader& reference, const LogitsFileHeader& run,
                    const std::string& path);

class LogitsFileWriter {
 public:
  // Creates |path|.partial and writes the header. Errors name the path and the reason.
  static StatusOr<std::unique_ptr<LogitsFileWriter>> Create(const std::string& path,
                                                            const LogitsFileHeader& header);
  // Removes the partial file unless Finish succeeded.
  ~LogitsFileWriter();
  // The next window's log-probabilities [scored_per_window, vocab_size].
  Status WriteWindow(const std::vector<float>& log_probs);
  // Checks every window was written, closes and renames the file to |path|.
  Status Finish();

 private:
  LogitsFileWriter(std::string path, LogitsFileHeader header, std::FILE* file)
      : path_(std::move(path)), header_(std::move(header)), file_(file) {}
  std::string path_;
  LogitsFileHeader header_;
  std::FILE* file_ = nullptr;
  int64_t windows_written_ = 0;
  bool finished_ = false;
};

class LogitsFileReader {
 public:
  // Opens |path| and reads its header. InvalidArgument naming the file for a bad magic, an
  // unknown version, values out of range, or a size that is not the header's (truncated).
  static StatusOr<std::unique_ptr<LogitsFileReader>> Open(const std::string& path);
  const LogitsFileHeader& header() const { return header_; }
  const std::string& path() const { return file_.path(); }
  // Window |w|'s log-probabilities [scored_per_window, vocab_size] into |log_probs|.
  Status ReadWindow(int64_t w, std::vector<float>* log_probs) const;

 private:
  LogitsFileReader(InputFile file, LogitsFileHeader header, uint64_t data_offset)
      : file_(std::move(file)), header_(std::move(header)), data_offset_(data_offset) {}
  InputFile file_;
  LogitsFileHeader header_;
  uint64_t data_offset_ = 0;  // where the log-probabilities start
};

}  // namespace hwinfer
