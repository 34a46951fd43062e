// xwires._xwires.Dataset: the DatasetHandle methods, called by the
// pure-Python xwires.Dataset (python/xwires/dataset.py), which documents them
// and checks argument types first.
#include <pybind11/stl.h>

#include "dataset_handle.h"

namespace xw::python {

void RegisterDataset(py::module_& m) {
  py::class_<Filter>(m, "Filter", "Which trials a read considers (query.h's TrialQuery).")
      .def(py::init<>())
      .def_readwrite("where", &Filter::where)
      .def_readwrite("archs", &Filter::archs)
      .def_readwrite("profiles", &Filter::profiles)
      .def_readwrite("statuses", &Filter::statuses);

  py::class_<DatasetHandle>(m, "Dataset", "An open xwires dataset (see xwires.open).")
      .def(py::init<const std::string&, const std::string&>(), py::arg("path"),
           py::arg("mode") = "r")
      .def("close", &DatasetHandle::Close)
      .def_property_readonly("closed", &DatasetHandle::closed)
      .def_property_readonly("path", &DatasetHandle::path)
      .def_property_readonly("read_only", &DatasetHandle::read_only)
      .def("query", &DatasetHandle::Query, py::arg("filter"), py::arg("sort"), py::arg("limit"),
           py::arg("offset"))
      .def("count", &DatasetHandle::Count, py::arg("filter"))
      .def("near", &DatasetHandle::Near, py::arg("target"), py::arg("filter"), py::arg("k"))
      .def("stats", &DatasetHandle::Stats, py::arg("by"), py::arg("threshold"),
           py::arg("filter"))
      .def("top", &DatasetHandle::Top, py::arg("k"), py::arg("bottom"), py::arg("filter"))
      .def("mi", &DatasetHandle::Mi, py::arg("filter"), py::arg("pairs"), py::arg("log_scale"),
           py::arg("ksg"), py::arg("repeats"), py::arg("jitter"), py::arg("k"), py::arg("seed"))
      .def("searches", &DatasetHandle::Searches, py::arg("with_config"))
      .def("replicas", &DatasetHandle::Replicas, py::arg("trial_id"))
      .def("replica_stats", &DatasetHandle::ReplicaStats, py::arg("trial_id"))
      .def("trial", &DatasetHandle::Trial, py::arg("trial_id"), py::arg("curves"))
      .def("weights", &DatasetHandle::Weights, py::arg("trial_id"), py::arg("profile"))
      .def("model_spec", &DatasetHandle::ModelSpec, py::arg("trial_id"))
      .def("import_crossedwires", &DatasetHandle::ImportCrossedWires, py::arg("csv"),
           py::arg("arch"))
      .def("compare", &DatasetHandle::Compare, py::arg("trial_id"), py::arg("profile_a"),
           py::arg("profile_b"), py::arg("probe"), py::arg("rtol"), py::arg("atol"),
           py::arg("acc_tol"), py::arg("store"))
      .def("attribute", &DatasetHandle::Attribute, py::arg("trial_id"), py::arg("profile_a"),
           py::arg("profile_b"), py::arg("knobs"), py::arg("jobs"), py::arg("threads"),
           py::arg("store"))
      .def("analyses", &DatasetHandle::Analyses, py::arg("trial_id"), py::arg("kind"));
}

}  // namespace xw::python
