#include "status_bridge.h"

namespace xw::python {

namespace py = pybind11;

const char* StatusCodeName(Status::Code code) {
  switch (code) {
    case Status::Code::kOk: return "ok";
    case Status::Code::kInvalidArgument: return "invalid_argument";
    case Status::Code::kNotFound: return "not_found";
    case Status::Code::kIOError: return "io_error";
    case Status::Code::kCorruption: return "corruption";
    case Status::Code::kNotSupported: return "not_supported";
    case Status::Code::kAlreadyExists: return "already_exists";
    case Status::Code::kFailedPrecondition: return "failed_precondition";
    case Status::Code::kInternal: return "internal";
    case Status::Code::kCancelled: return "cancelled";
  }
  return "internal";
}

void RaiseStatus(const Status& s) {
  py::object cls =
      py::module_::import("xwires.errors").attr("error_class")(StatusCodeName(s.code()));
  PyErr_SetString(cls.ptr(), s.message().c_str());
  throw py::error_already_set();
}

}  // namespace xw::python
