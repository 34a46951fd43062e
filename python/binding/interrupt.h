// Ctrl-C and progress text for library calls that run with the GIL released
// (training, searches): the library polls `should_stop` between steps, and
// the poller briefly takes the GIL to run Python's signal handlers. A
// KeyboardInterrupt (or any exception a handler raises) is kept and raised
// again when the call returns.
#ifndef XWIRES_PYTHON_BINDING_INTERRUPT_H_
#define XWIRES_PYTHON_BINDING_INTERRUPT_H_

#include <pybind11/pybind11.h>

#include <chrono>
#include <optional>

#include "xwires/api/progress_text.h"

namespace xw::python {

namespace py = pybind11;

class InterruptPoller {
 public:
  // Call with the GIL held, on the thread that will poll. Python runs signal
  // handlers on its main thread only, so elsewhere the poller never stops.
  InterruptPoller();
  InterruptPoller(const InterruptPoller&) = delete;
  InterruptPoller& operator=(const InterruptPoller&) = delete;

  // Without the GIL, from the constructing thread: true once a signal
  // handler raised. Runs the handlers at most every 50 ms.
  bool StopRequested();
  // With the GIL: raises the kept exception, if any.
  void RethrowIfRaised();

 private:
  bool main_thread_;
  std::chrono::steady_clock::time_point last_poll_{};
  std::optional<py::error_already_set> raised_;
};

// A TextWriter that writes to Python's sys.stderr (so notebooks show the
// progress), taking the GIL for each write. Write errors are dropped: progress
// must never fail a run.
TextWriter PythonStderrWriter();

// sys.stderr.isatty(), with the GIL held; false when it cannot be asked.
bool PythonStderrIsTerminal();

}  // namespace xw::python

#endif  // XWIRES_PYTHON_BINDING_INTERRUPT_H_
