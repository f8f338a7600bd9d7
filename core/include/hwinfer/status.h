// hwinfer/status.h — Status and StatusOr<T>, the error values of the C++ core.
//
// Library code never throws across its public API, never calls exit() and never prints: it
// returns a Status (code + message) that the caller either handles or passes up with
// HWINFER_RETURN_IF_ERROR / HWINFER_ASSIGN_OR_RETURN. Codes mirror the ABI's HWINFER_STATUS_*
// values so a plugin error converts without loss.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace hwinfer {

enum class StatusCode : int {
  kOk = 0,
  kInvalidArgument = 1,     // caller passed something malformed; retrying fails the same way
  kUnsupported = 2,         // well-formed but this build/plugin/device cannot do it
  kOutOfMemory = 3,         // an allocation failed
  kUnavailable = 4,         // a resource is not there right now (no device, driver missing)
  kFailedPrecondition = 5,  // wrong state for the call
  kOutOfRange = 6,          // an offset/size/index lies outside its object
  kInternal = 7,            // a bug or driver failure
  kNotFound = 8,            // a named file, plugin, device or key does not exist
};

// "INVALID_ARGUMENT", "NOT_FOUND", ...
const char* StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "NOT_FOUND: plugin file /x/y.so does not exist"
  std::string ToString() const;

  // Returns a copy whose message is "|context|: <message>" (for adding what was being done).
  Status WithContext(const std::string& context) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status InvalidArgument(std::string m) {
  return {StatusCode::kInvalidArgument, std::move(m)};
}
inline Status Unsupported(std::string m) { return {StatusCode::kUnsupported, std::move(m)}; }
inline Status OutOfMemory(std::string m) { return {StatusCode::kOutOfMemory, std::move(m)}; }
inline Status Unavailable(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
inline Status FailedPrecondition(std::string m) {
  return {StatusCode::kFailedPrecondition, std::move(m)};
}
inline Status OutOfRange(std::string m) { return {StatusCode::kOutOfRange, std::move(m)}; }
inline Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }
inline Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }

// A value or the Status explaining why there is none. Accessing value() of an error is a bug
// (asserted in debug builds).
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(Status status) : status_(std::move(status)) { assert(!status_.ok()); }  // NOLINT
  StatusOr(T value) : value_(std::move(value)) {}                                  // NOLINT

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }

  T& value() & {
    assert(ok());
    return *value_;
  }
  const T& value() const& {
    assert(ok());
    return *value_;
  }
  T&& value() && {
    assert(ok());
    return std::move(*value_);
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace hwinfer

#define HWINFER_CONCAT_INNER_(a, b) a##b
#define HWINFER_CONCAT_(a, b) HWINFER_CONCAT_INNER_(a, b)

// Returns the Status of |expr| from the enclosing function when it is not OK.
#define HWINFER_RETURN_IF_ERROR(expr)                  \
  do {                                                 \
    ::hwinfer::Status hwinfer_status_ = (expr);        \
    if (!hwinfer_status_.ok()) return hwinfer_status_; \
  } while (0)

// `HWINFER_ASSIGN_OR_RETURN(auto x, MakeX());` declares x from a StatusOr or returns its error.
#define HWINFER_ASSIGN_OR_RETURN(lhs, expr) \
  HWINFER_ASSIGN_OR_RETURN_IMPL_(HWINFER_CONCAT_(hwinfer_statusor_, __LINE__), lhs, expr)
#define HWINFER_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                   \
  if (!tmp.ok()) return tmp.status();                  \
  lhs = std::move(tmp).value()
