// Errors as values: Status and StatusOr<T>.
//
// Every fallible operation in airlock returns a Status (success or an error
// with a code and a human-readable message) or a StatusOr<T> (a value or such
// an error). Exceptions are used only at the outermost boundaries (CLI, JSON
// parsing of untrusted input) and are converted to Status there.
//
//   StatusOr<UniqueFd> fd = OpenNoFollow(dir, "out.txt");
//   if (!fd.ok()) return fd.status();
//
// The macros AIRLOCK_RETURN_IF_ERROR and AIRLOCK_ASSIGN_OR_RETURN shorten the
// common propagation patterns.
#ifndef AIRLOCK_BASE_STATUS_H_
#define AIRLOCK_BASE_STATUS_H_

#include <cerrno>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace airlock {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,     // the caller asked for something malformed
  kNotFound,            // a named thing does not exist
  kFailedPrecondition,  // the host cannot do this (e.g. no user namespaces)
  kPermissionDenied,    // policy refuses it
  kResourceExhausted,   // a limit or queue is full
  kUnavailable,         // a dependency (runner, downstream) is down
  kDeadlineExceeded,    // ran out of time
  kCancelled,           // the caller gave up
  kInternal,            // a bug or an unexpected system failure
};

const char* StatusCodeName(StatusCode code);
// The inverse of StatusCodeName; kInternal for an unknown name.
StatusCode StatusCodeFromName(const std::string& name);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // "INVALID_ARGUMENT: message" (or "OK").
  std::string ToString() const;

  // Returns a copy whose message is prefixed with `context: `.
  Status WithContext(const std::string& context) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status OkStatus() { return Status(); }
inline Status InvalidArgument(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
inline Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
inline Status FailedPrecondition(std::string m) { return {StatusCode::kFailedPrecondition, std::move(m)}; }
inline Status PermissionDenied(std::string m) { return {StatusCode::kPermissionDenied, std::move(m)}; }
inline Status ResourceExhausted(std::string m) { return {StatusCode::kResourceExhausted, std::move(m)}; }
inline Status Unavailable(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
inline Status DeadlineExceeded(std::string m) { return {StatusCode::kDeadlineExceeded, std::move(m)}; }
inline Status Cancelled(std::string m) { return {StatusCode::kCancelled, std::move(m)}; }
inline Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }

// An internal error carrying strerror(errno) of the failed call `what`.
Status ErrnoError(const std::string& what, int err = errno);

template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(T value) : v_(std::move(value)) {}            // NOLINT(implicit)
  StatusOr(Status status) : v_(std::move(status)) {      // NOLINT(implicit)
    if (std::get<Status>(v_).ok()) v_ = Status(StatusCode::kInternal, "StatusOr built from OK status");
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  Status status() const { return ok() ? Status() : std::get<Status>(v_); }

  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace airlock

#define AIRLOCK_CONCAT_INNER_(a, b) a##b
#define AIRLOCK_CONCAT_(a, b) AIRLOCK_CONCAT_INNER_(a, b)

#define AIRLOCK_RETURN_IF_ERROR(expr)          \
  do {                                         \
    ::airlock::Status _st = (expr);            \
    if (!_st.ok()) return _st;                 \
  } while (0)

#define AIRLOCK_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                   \
  if (!tmp.ok()) return tmp.status();                  \
  lhs = std::move(tmp).value()

#define AIRLOCK_ASSIGN_OR_RETURN(lhs, expr) \
  AIRLOCK_ASSIGN_OR_RETURN_IMPL_(AIRLOCK_CONCAT_(_status_or_, __LINE__), lhs, expr)

#endif  // AIRLOCK_BASE_STATUS_H_
