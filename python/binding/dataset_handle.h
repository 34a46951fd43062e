// DatasetHandle: an open xw::Dataset for Python (xwires._xwires.Dataset).
// Every method releases the GIL while the library works, holds the handle's
// mutex (a Dataset is used by one thread at a time), and converts results
// and failed Statuses with the GIL held again. After Close() every method
// raises xwires.ClosedError.
#ifndef XWIRES_PYTHON_BINDING_DATASET_HANDLE_H_
#define XWIRES_PYTHON_BINDING_DATASET_HANDLE_H_

#include <pybind11/pybind11.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "xwires/dataset/query/query.h"
#include "xwires/dataset/store/dataset.h"

namespace xw::python {

namespace py = pybind11;

// The filter options shared by the read methods (query.h's TrialQuery).
struct Filter {
  std::string where;
  std::vector<std::string> archs, profiles, statuses;
};

class DatasetHandle {
 public:
  // mode "r": read-only (never creates or changes a file); "w": read-write,
  // creating the dataset if missing.
  DatasetHandle(const std::string& path, const std::string& mode);

  void Close();
  bool closed() const;
  const std::string& path() const { return path_; }
  bool read_only() const { return read_only_; }

  py::dict Query(const Filter& f, const std::vector<std::string>& sort, int64_t limit,
                 int64_t offset);
  int64_t Count(const Filter& f);
  // `target`: "lr=0.05,adam_eps=0.2" as `xwires query --near` takes it.
  py::dict Near(const std::string& target, const Filter& f, int64_t k);
  py::dict Stats(const std::string& by, double threshold, const Filter& f);
  py::dict Top(int k, bool bottom, const Filter& f);
  py::dict Mi(const Filter& f, bool pairs, bool log_scale, bool ksg, int repeats, double jitter,
              int k, uint64_t seed);
  py::dict Searches(bool with_config);
  // ReplicaTable / ReplicaStatsTable of a trial (api/replica_tables.h).
  py::dict Replicas(int64_t trial_id);
  py::dict ReplicaStats(int64_t trial_id);
  // (`show --format json [--curves]` text, [curve arrays of each model]);
  // without curves no HDF5 file is read and the list is empty.
  py::tuple Trial(int64_t id, bool curves);
  // (profile, sha256, [(name, array), ...]) of the trial's model under
  // `profile` ("" = its first model).
  py::tuple Weights(int64_t trial_id, const std::string& profile);
  // arch, width, depth, dropout, input_shape, num_classes of a stored trial.
  py::dict ModelSpec(int64_t trial_id);
  py::dict ImportCrossedWires(const std::string& csv, const std::string& arch);
  // `xwires compare` / `attribute` (compare.h, attribute.h): {"json", the
  // tables as TableColumns, "analysis_id": the stored row's id or None}.
  // Storing needs a read-write handle (FailedPrecondition otherwise).
  py::dict Compare(int64_t trial_id, const std::string& profile_a, const std::string& profile_b,
                   int64_t probe, double rtol, double atol, double acc_tol, bool store);
  py::dict Attribute(int64_t trial_id, const std::string& profile_a,
                     const std::string& profile_b, const std::vector<std::string>& knobs,
                     int jobs, int threads, bool store);
  // Stored analyses (analysis.h LoadAnalyses; trial_id < 0: all, kind "":
  // any): id, kind, created_at, toolkit, trials, summary, result_json.
  py::dict Analyses(int64_t trial_id, const std::string& kind);

 private:
  // Runs `fn(dataset)` without the GIL under the mutex; raises ClosedError
  // when closed.
  template <typename Fn>
  auto Locked(Fn fn);

  std::string path_;
  bool read_only_ = true;
  mutable std::mutex mu_;
  std::unique_ptr<Dataset> ds_;
};

}  // namespace xw::python

#endif  // XWIRES_PYTHON_BINDING_DATASET_HANDLE_H_
