// The compiled half of the Python package: xwires._xwires. See
// python/xwires/__init__.py for the public API.
#include <pybind11/pybind11.h>

#include "status_bridge.h"
#include "xwires/core/build_info.h"
#include "xwires/core/simd_target.h"

namespace xw::python {
void RegisterDataset(pybind11::module_& m);
void RegisterRuns(pybind11::module_& m);
void RegisterStats(pybind11::module_& m);
void RegisterReport(pybind11::module_& m);
}  // namespace xw::python

PYBIND11_MODULE(_xwires, m) {
  m.doc() = "C++ core of the xwires package (use the xwires module).";
  // XWIRES_SIMD_TARGET=AVX2 (say) runs the kernels as on a CPU of that
  // class, as it does for the CLI.
  xw::python::Check(xw::SetKernelTargetFromEnv());
  xw::python::RegisterDataset(m);
  xw::python::RegisterRuns(m);
  xw::python::RegisterStats(m);
  xw::python::RegisterReport(m);
  m.attr("__version__") = xw::GetBuildInfo().toolkit_version;
}
