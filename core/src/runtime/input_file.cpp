// input_file.cpp — see hwinfer/input_file.h: stat before open, O_NONBLOCK open, fstat again, and
// bounded reads. Must never block on what is at the path, nor read past the limits it is given.
#include "hwinfer/input_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace hwinfer {
namespace {

// "a directory", "a FIFO (named pipe)", ... for what is not a regular file.
const char* KindOf(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

Status NotRegular(const std::string& path, const std::string& what, mode_t mode) {
  const std::string kind = KindOf(mode);
  if (kind == "not a regular file") return InvalidArgument(what + " '" + path + "' is " + kind);
  return InvalidArgument(what + " '" + path + "' is " + kind + ", not a regular file");
}

std::string Size(uint64_t bytes) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024.0 && unit < 6) {
    value /= 1024.0;
    ++unit;
  }
  return unit == 0 ? fmt::format("{} bytes", bytes) : fmt::format("{:.1f} {}", value, units[unit]);
}

// read() that retries on EINTR; -1 with errno on failure.
ssize_t ReadSome(int fd, char* data, size_t size) {
  while (true) {
    const ssize_t n = ::read(fd, data, size);
    if (n >= 0 || errno != EINTR) return n;
  }
}

}  // namespace

Status CheckRegularFile(const std::string& path, const std::string& what) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    const int err = errno;
    if (err == ENOENT || err == ENOTDIR) return NotFound(what + " '" + path + "' does not exist");
    return InvalidArgument(what + " '" + path + "' cannot be read: " + std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) return NotRegular(path, what, st.st_mode);
  return Status::Ok();
}

StatusOr<InputFile> InputFile::Open(const std::string& path, const std::string& what) {
  HWINFER_RETURN_IF_ERROR(CheckRegularFile(path, what));
  // O_NONBLOCK: had the path become a FIFO since the stat, open() returns at once.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    const int err = errno;
    return InvalidArgument(what + " '" + path + "' cannot be opened: " + std::strerror(err));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return NotRegular(path, what, st.st_mode);
  }
  // Regular files ignore O_NONBLOCK; clear it anyway so reads behave plainly.
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) (void)::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  return InputFile(fd, static_cast<uint64_t>(st.st_size), path, what);
}

InputFile::InputFile(InputFile&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      size_bytes_(other.size_bytes_),
      path_(std::move(other.path_)),
      what_(std::move(other.what_)),
      pending_(std::move(other.pending_)),
      at_end_(other.at_end_),
      lines_read_(other.lines_read_) {}

InputFile& InputFile::operator=(InputFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    size_bytes_ = other.size_bytes_;
    path_ = std::move(other.path_);
    what_ = std::move(other.what_);
    pending_ = std::move(other.pending_);
    at_end_ = other.at_end_;
    lines_read_ = other.lines_read_;
  }
  return *this;
}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

StatusOr<std::string> InputFile::ReadAll(uint64_t max_bytes) const {
  if (size_bytes_ > max_bytes) {
    return InvalidArgument(fmt::format("{} '{}' is {}; at most {} is read", what_, path_,
                                       Size(size_bytes_), Size(max_bytes)));
  }
  std::string text(static_cast<size_t>(size_bytes_), '\0');
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n =
        ::pread(fd_, text.data() + done, text.size() - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return InvalidArgument(what_ + " '" + path_ + "' could not be read: " + std::strerror(errno));
    }
    if (n == 0) break;  // the file shrank while being read
    done += static_cast<size_t>(n);
  }
  text.resize(done);
  return text;
}

StatusOr<bool> InputFile::ReadLine(std::string* line, uint64_t max_line_bytes) {
  constexpr size_t kChunk = 64 << 10;
  size_t searched = 0;  // bytes of pending_ known to hold no '\n'
  while (true) {
    const size_t newline = pending_.find('\n', searched);
    if (newline != std::string::npos || at_end_) {
      if (newline == std::string::npos && pending_.empty()) return false;
      const size_t end = newline == std::string::npos ? pending_.size() : newline;
      ++lines_read_;
      if (end > max_line_bytes) break;
      line->assign(pending_, 0, end);
      pending_.erase(0, newline == std::string::npos ? end : end + 1);
      return true;
    }
    searched = pending_.size();
    if (pending_.size() > max_line_bytes) {
      ++lines_read_;
      break;
    }
    const size_t old = pending_.size();
    pending_.resize(old + kChunk);
    const ssize_t n = ReadSome(fd_, pending_.data() + old, kChunk);
    if (n < 0) {
      return InvalidArgument(what_ + " '" + path_ + "' could not be read: " + std::strerror(errno));
    }
    pending_.resize(old + static_cast<size_t>(n));
    at_end_ = n == 0;
  }
  return InvalidArgument(
      fmt::format("{}:{}: the line is longer than {}, the most one line of a {} "
                  "may hold",
                  path_, lines_read_, Size(max_line_bytes), what_));
}

StatusOr<std::string> ReadInputFile(const std::string& path, const std::string& what,
                                    uint64_t max_bytes) {
  HWINFER_ASSIGN_OR_RETURN(InputFile file, InputFile::Open(path, what));
  return file.ReadAll(max_bytes);
}

}  // namespace hwinfer
