// Status and Result<T>: how the xwires library reports expected failures.
//
// Library code never throws for bad input, missing files or corrupt data; it
// returns a Status naming the problem. Exceptions are reserved for programming
// errors and are turned into one message and an exit code at the CLI boundary.
// Both types are cheap to move and safe to use from any thread.
#ifndef XWIRES_CORE_STATUS_H_
#define XWIRES_CORE_STATUS_H_

#include <string>
#include <utility>
#include <variant>

namespace xw {

class Status {
 public:
  enum class Code {
    kOk = 0,
    kInvalidArgument,  // the caller's input is malformed or out of range
    kNotFound,         // a file, trial, model or field does not exist
    kIOError,          // the operating system or a storage library failed
    kCorruption,       // stored data is truncated, inconsistent or unreadable
    kNotSupported,     // valid request we do not handle (e.g. newer format)
    kAlreadyExists,
    kFailedPrecondition,
    kInternal,
    kCancelled,  // the caller asked the operation to stop (e.g. Ctrl-C)
  };

  Status() = default;  // OK
  Status(Code code, std::string message)
      : code_(code), message_(std::move(message)) {}

  static Status OK() { return Status(); }
  static Status InvalidArgument(std::string m) {
    return Status(Code::kInvalidArgument, std::move(m));
  }
  static Status NotFound(std::string m) {
    return Status(Code::kNotFound, std::move(m));
  }
  static Status IOError(std::string m) {
    return Status(Code::kIOError, std::move(m));
  }
  static Status Corruption(std::string m) {
    return Status(Code::kCorruption, std::move(m));
  }
  static Status NotSupported(std::string m) {
    return Status(Code::kNotSupported, std::move(m));
  }
  static Status AlreadyExists(std::string m) {
    return Status(Code::kAlreadyExists, std::move(m));
  }
  static Status FailedPrecondition(std::string m) {
    return Status(Code::kFailedPrecondition, std::move(m));
  }
  static Status Internal(std::string m) {
    return Status(Code::kInternal, std::move(m));
  }
  static Status Cancelled(std::string m) {
    return Status(Code::kCancelled, std::move(m));
  }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  // "invalid argument: <message>", or "OK".
  std::string ToString() const;
  // Returns a copy whose message is "<context>: <message>"; an OK status,
  // or an empty context (an unnamed child module), is returned unchanged.
  Status WithContext(const std::string& context) const;

 private:
  Code code_ = Code::kOk;
  std::string message_;
};

// Holds either a value or a non-OK Status. Accessing value() of a failed
// Result is a programming error (it aborts with the status message).
template <typename T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {  // NOLINT
    if (std::get<Status>(v_).ok()) {
      v_ = Status::Internal("Result constructed from an OK status");
    }
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & { CheckOk(); return std::get<T>(v_); }
  const T& value() const& { CheckOk(); return std::get<T>(v_); }
  T&& value() && { CheckOk(); return std::get<T>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  void CheckOk() const;
  std::variant<T, Status> v_;
};

[[noreturn]] void DieWithStatus(const Status& s);

template <typename T>
void Result<T>::CheckOk() const {
  if (!ok()) DieWithStatus(std::get<Status>(v_));
}

}  // namespace xw

#define XW_CONCAT_INNER_(a, b) a##b
#define XW_CONCAT_(a, b) XW_CONCAT_INNER_(a, b)

// Returns the Status of `expr` from the enclosing function if it is not OK.
#define XW_RETURN_IF_ERROR(expr)                 \
  do {                                           \
    ::xw::Status xw_status_ = (expr);            \
    if (!xw_status_.ok()) return xw_status_;     \
  } while (0)

// `XW_ASSIGN_OR_RETURN(auto x, MakeX());` declares x from a Result or returns
// its Status.
#define XW_ASSIGN_OR_RETURN(lhs, expr) \
  XW_ASSIGN_OR_RETURN_IMPL_(XW_CONCAT_(xw_result_, __LINE__), lhs, expr)
#define XW_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                              \
  if (!tmp.ok()) return tmp.status();             \
  lhs = std::move(tmp).value()

#endif  // XWIRES_CORE_STATUS_H_
