// xwires._xwires.report: `xwires report DATASET -o OUT` for Python
// (BuildReport, then the file written through a temp file and a rename, as
// the CLI does); the pure-Python xwires.report checks the arguments.
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "status_bridge.h"
#include "xwires/api/output_files.h"
#include "xwires/api/report.h"

namespace xw::python {
namespace py = pybind11;
namespace {

std::vector<std::string> WriteReport(const std::string& dataset, const std::string& out,
                                     const std::string& title,
                                     const std::vector<std::string>& archs,
                                     const std::string& where, int top, double threshold,
                                     int mi_repeats, double mi_jitter, int mi_shuffles, bool ksg,
                                     bool exclude_degenerate) {
  ReportOptions opt;
  opt.title = title;
  opt.archs = archs;
  opt.where = where;
  opt.top_k = top;
  opt.threshold = threshold;
  opt.mi.repeats = mi_repeats;
  opt.mi.jitter = mi_jitter;
  opt.mi.shuffles = mi_shuffles;
  opt.mi.estimator = ksg ? MiEstimator::kKsg : MiEstimator::kBinned;
  opt.exclude_degenerate = exclude_degenerate;
  Result<std::vector<std::string>> ids = Status::Internal("not run");
  {
    py::gil_scoped_release nogil;
    ids = [&]() -> Result<std::vector<std::string>> {
      XW_ASSIGN_OR_RETURN(auto ds, Dataset::Open(dataset, OpenMode::kReadOnly));
      XW_ASSIGN_OR_RETURN(Report r, BuildReport(*ds, opt));
      XW_RETURN_IF_ERROR(WriteFileAtomic(out, r.html));
      return std::move(r.plot_ids);
    }();
  }
  return Unwrap(std::move(ids));
}

}  // namespace

void RegisterReport(py::module_& m) {
  m.def("report", &WriteReport, py::arg("dataset"), py::arg("out"), py::arg("title"),
        py::arg("archs"), py::arg("where"), py::arg("top"), py::arg("threshold"),
        py::arg("mi_repeats"), py::arg("mi_jitter"), py::arg("mi_shuffles"), py::arg("ksg"),
        py::arg("exclude_degenerate"),
        "Writes the HTML report of a dataset; returns its plot ids (see xwires.report).");
}

}  // namespace xw::python
