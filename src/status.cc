#include "xwires/core/status.h"

#include <cstdio>
#include <cstdlib>

namespace xw {

namespace {
const char* CodeName(Status::Code c) {
  switch (c) {
    case Status::Code::kOk: return "OK";
    case Status::Code::kInvalidArgument: return "invalid argument";
    case Status::Code::kNotFound: return "not found";
    case Status::Code::kIOError: return "I/O error";
    case Status::Code::kCorruption: return "corruption";
    case Status::Code::kNotSupported: return "not supported";
    case Status::Code::kAlreadyExists: return "already exists";
    case Status::Code::kFailedPrecondition: return "failed precondition";
    case Status::Code::kInternal: return "internal error";
    case Status::Code::kCancelled: return "cancelled";
  }
  return "unknown";
}
}  // namespace

std::string Status::ToString() const {
  if (ok()) return "OK";
  return std::string(CodeName(code_)) + ": " + message_;
}

Status Status::WithContext(const std::string& context) const {
  if (ok() || context.empty()) return *this;
  return Status(code_, context + ": " + message_);
}

void DieWithStatus(const Status& s) {
  std::fprintf(stderr, "xwires: fatal: value() of a failed Result: %s\n",
               s.ToString().c_str());
  std::abort();
}

}  // namespace xw
