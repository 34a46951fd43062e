// Failed xw::Status values become Python exceptions: the xwires.errors class
// of the status code (InvalidArgumentError, NotFoundError, ...) carrying the
// status message unchanged, so Python shows the CLI's text. Cancelled
// becomes KeyboardInterrupt. Call with the GIL held.
#ifndef XWIRES_PYTHON_BINDING_STATUS_BRIDGE_H_
#define XWIRES_PYTHON_BINDING_STATUS_BRIDGE_H_

#include <pybind11/pybind11.h>

#include <utility>

#include "xwires/core/status.h"

namespace xw::python {

// Sets the Python error for `s` (not OK) and throws py::error_already_set.
[[noreturn]] void RaiseStatus(const Status& s);

inline void Check(const Status& s) {
  if (!s.ok()) RaiseStatus(s);
}

template <typename T>
T Unwrap(Result<T> r) {
  if (!r.ok()) RaiseStatus(r.status());
  return std::move(r).value();
}

// "invalid_argument", "not_found", ... (the codes xwires.errors knows).
const char* StatusCodeName(Status::Code code);

}  // namespace xw::python

#endif  // XWIRES_PYTHON_BINDING_STATUS_BRIDGE_H_
