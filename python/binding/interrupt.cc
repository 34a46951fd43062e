#include "interrupt.h"

#include <pythread.h>

#include <string>

namespace xw::python {

InterruptPoller::InterruptPoller() {
  py::object main = py::module_::import("threading").attr("main_thread")();
  main_thread_ = main.attr("ident").cast<unsigned long>() == PyThread_get_thread_ident();
}

bool InterruptPoller::StopRequested() {
  if (raised_) return true;
  if (!main_thread_) return false;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_poll_ < std::chrono::milliseconds(50)) return false;
  last_poll_ = now;
  py::gil_scoped_acquire gil;
  if (PyErr_CheckSignals() != 0) raised_.emplace();  // fetches the error
  return raised_.has_value();
}

void InterruptPoller::RethrowIfRaised() {
  if (!raised_) return;
  py::error_already_set e = std::move(*raised_);
  raised_.reset();
  e.restore();
  throw py::error_already_set();
}

TextWriter PythonStderrWriter() {
  return [](const std::string& text) {
    py::gil_scoped_acquire gil;
    try {
      py::object err = py::module_::import("sys").attr("stderr");
      if (err.is_none()) return;
      err.attr("write")(text);
      err.attr("flush")();
    } catch (py::error_already_set&) {
      // Dropped with the GIL held (the destructor needs it).
    }
  };
}

bool PythonStderrIsTerminal() {
  try {
    py::object err = py::module_::import("sys").attr("stderr");
    return !err.is_none() && err.attr("isatty")().cast<bool>();
  } catch (py::error_already_set&) {
    return false;
  }
}

}  // namespace xw::python
