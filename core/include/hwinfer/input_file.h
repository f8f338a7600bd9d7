// hwinfer/input_file.h — opening a file a user named (a model, config, hardware or workload file,
// a result, a plugin) without trusting what is at that path.
//
// Only regular files are read. The type is checked with stat() before anything opens the path
// (open() of a FIFO blocks until a writer comes; /dev/zero never ends), then the file is opened
// with O_NONBLOCK and checked again on the open descriptor, so a path swapped for a FIFO in
// between is refused too. Text is read only up to a stated limit. Every error is one line naming
// |what| ("config file"), the path, what is there and what was expected; nothing here blocks.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "hwinfer/status.h"

namespace hwinfer {

// Checks that |path| is a regular file without opening it. NotFound "<what> '<path>' does not
// exist"; InvalidArgument "<what> '<path>' is a directory, not a regular file" (or a FIFO, a
// character device, a socket, ...), or "cannot be read: <reason>".
Status CheckRegularFile(const std::string& path, const std::string& what);

// A regular file open for reading, closed when destroyed. Move-only.
class InputFile {
 public:
  // Errors: those of CheckRegularFile, and "cannot be opened: <reason>".
  static StatusOr<InputFile> Open(const std::string& path, const std::string& what);

  InputFile(InputFile&& other) noexcept;
  InputFile& operator=(InputFile&& other) noexcept;
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;
  ~InputFile();

  int fd() const { return fd_; }
  uint64_t size_bytes() const { return size_bytes_; }
  const std::string& path() const { return path_; }

  // The whole file. InvalidArgument when it holds more than |max_bytes| ("<what> '<path>' is
  // 20.0 GiB; at most 16.0 MiB is read"), or when reading fails.
  StatusOr<std::string> ReadAll(uint64_t max_bytes) const;

  // The next line (without its '\n'; a final line without one counts), reading from where the
  // previous call stopped. False at the end of the file. InvalidArgument when a line is longer
  // than |max_line_bytes| (naming the line number) or reading fails.
  StatusOr<bool> ReadLine(std::string* line, uint64_t max_line_bytes);

 private:
  InputFile(int fd, uint64_t size_bytes, std::string path, std::string what)
      : fd_(fd), size_bytes_(size_bytes), path_(std::move(path)), what_(std::move(what)) {}

  int fd_ = -1;
  uint64_t size_bytes_ = 0;
  std::string path_;
  std::string what_;
  std::string pending_;  // bytes read past the last line returned
  bool at_end_ = false;
  int64_t lines_read_ = 0;
};

// InputFile::Open(path, what) then ReadAll(max_bytes).
StatusOr<std::string> ReadInputFile(const std::string& path, const std::string& what,
                                    uint64_t max_bytes);

// Limits for the text inputs hwinfer reads whole.
inline constexpr uint64_t kMaxConfigFileBytes = 16ull << 20;    // YAML configs, shapes, hardware
inline constexpr uint64_t kMaxResultFileBytes = 256ull << 20;   // result JSON given to compare
inline constexpr uint64_t kMaxWorkloadLineBytes = 16ull << 20;  // one JSONL request

}  // namespace hwinfer
