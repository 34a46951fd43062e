#include "dataset_handle.h"

#include <optional>
#include <utility>

#include "convert.h"
#include "status_bridge.h"
#include "xwires/api/attribute.h"
#include "xwires/api/compare.h"
#include "xwires/api/mi_analysis.h"
#include "xwires/api/query_tables.h"
#include "xwires/api/replica_tables.h"
#include "xwires/api/search_run.h"
#include "xwires/api/train_run.h"
#include "xwires/api/trial_setup.h"
#include "xwires/dataset/query/export.h"
#include "xwires/dataset/query/query.h"
#include "xwires/dataset/query/stats.h"
#include "xwires/dataset/store/analysis.h"
#include "xwires/dataset/store/crossedwires.h"

namespace xw::python {
namespace {

TrialQuery QueryOf(const Filter& f) {
  TrialQuery q;
  q.where = f.where;
  q.archs = f.archs;
  q.profiles = f.profiles;
  q.statuses = f.statuses;
  return q;
}

// What Python needs to show one trial: show's JSON and each model's curves.
struct TrialData {
  std::string json;
  std::vector<std::vector<EpochMetrics>> curves;
};

struct WeightsData {
  std::string profile, sha256;
  NamedTensors tensors;
};

}  // namespace

DatasetHandle::DatasetHandle(const std::string& path, const std::string& mode) : path_(path) {
  if (mode != "r" && mode != "w") {
    RaiseStatus(Status::InvalidArgument("mode must be 'r' (read-only) or 'w' (read-write), got '" +
                                        mode + "'"));
  }
  read_only_ = mode == "r";
  Result<std::unique_ptr<Dataset>> ds = Status::Internal("not opened");
  {
    py::gil_scoped_release nogil;
    ds = Dataset::Open(path, read_only_ ? OpenMode::kReadOnly : OpenMode::kCreate);
  }
  ds_ = Unwrap(std::move(ds));
}

void DatasetHandle::Close() {
  std::unique_ptr<Dataset> gone;
  {
    py::gil_scoped_release nogil;
    std::lock_guard<std::mutex> lock(mu_);
    gone = std::move(ds_);
    gone.reset();
  }
}

bool DatasetHandle::closed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return ds_ == nullptr;
}

template <typename Fn>
auto DatasetHandle::Locked(Fn fn) {
  using R = decltype(fn(*ds_));
  std::optional<R> r;
  {
    py::gil_scoped_release nogil;
    std::lock_guard<std::mutex> lock(mu_);
    if (ds_) r.emplace(fn(*ds_));
  }
  if (!r) {
    py::object cls = py::module_::import("xwires.errors").attr("ClosedError");
    PyErr_SetString(cls.ptr(), ("dataset " + path_ + " is closed").c_str());
    throw py::error_already_set();
  }
  return Unwrap(std::move(*r));
}

py::dict DatasetHandle::Query(const Filter& f, const std::vector<std::string>& sort,
                              int64_t limit, int64_t offset) {
  TrialQuery q = QueryOf(f);
  q.order_by = sort;
  q.limit = limit;
  q.offset = offset;
  return TableColumns(Locked([&](Dataset& ds) -> Result<Table> {
    XW_ASSIGN_OR_RETURN(auto rows, ds.Query(q));
    Table t = TrialsTable(rows);
    XW_RETURN_IF_ERROR(AddSignificanceColumns(ds, &t));
    return t;
  }));
}

int64_t DatasetHandle::Count(const Filter& f) {
  const TrialQuery q = QueryOf(f);
  return Locked([&](Dataset& ds) { return ds.Count(q); });
}

py::dict DatasetHandle::Near(const std::string& target, const Filter& f, int64_t k) {
  TrialQuery q = QueryOf(f);
  q.limit = k;
  return TableColumns(Locked([&](Dataset& ds) -> Result<Table> {
    XW_ASSIGN_OR_RETURN(NearTarget t, ParseNearTarget(target));
    XW_ASSIGN_OR_RETURN(auto near, ds.Near(t, q));
    Table table = NearTable(near);
    XW_RETURN_IF_ERROR(AddSignificanceColumns(ds, &table));
    return table;
  }));
}

py::dict DatasetHandle::Stats(const std::string& by, double threshold, const Filter& f) {
  StatsOptions opt;
  opt.by = by;
  opt.threshold = threshold;
  opt.filter = QueryOf(f);
  return TableColumns(Locked([&](Dataset& ds) -> Result<Table> {
    XW_ASSIGN_OR_RETURN(auto stats, ComputeStats(ds, opt));
    return StatsTable(stats, opt);
  }));
}

py::dict DatasetHandle::Top(int k, bool bottom, const Filter& f) {
  TopOptions opt;
  opt.k = k;
  opt.bottom = bottom;
  opt.filter = QueryOf(f);
  return TableColumns(Locked([&](Dataset& ds) -> Result<Table> {
    XW_ASSIGN_OR_RETURN(auto top, TopTrials(ds, opt));
    Table t = TopTable(top);
    XW_RETURN_IF_ERROR(AddSignificanceColumns(ds, &t));
    return t;
  }));
}

py::dict DatasetHandle::Mi(const Filter& f, bool pairs, bool log_scale, bool ksg, int repeats,
                           double jitter, int k, uint64_t seed) {
  MiAnalysisOptions opt;
  opt.archs = f.archs;
  opt.where = f.where;
  opt.pairs = pairs;
  // Python's log_scale=False is the CLI's default scale (auto).
  opt.scale = log_scale ? MiScale::kLog : MiScale::kAuto;
  opt.mi.estimator = ksg ? MiEstimator::kKsg : MiEstimator::kBinned;
  opt.mi.repeats = repeats;
  opt.mi.jitter = jitter;
  opt.mi.ksg_k = k;
  opt.mi.seed = seed;
  return TableColumns(Locked([&](Dataset& ds) -> Result<Table> {
    XW_ASSIGN_OR_RETURN(auto rows, ComputeDatasetMi(ds, opt));
    return MiTable(rows);
  }));
}

py::dict DatasetHandle::Searches(bool with_config) {
  return TableColumns(Locked([&](Dataset& ds) { return SearchesTable(ds, with_config); }));
}

py::dict DatasetHandle::Replicas(int64_t trial_id) {
  return TableColumns(Locked([&](Dataset& ds) { return ReplicaTable(ds, trial_id); }));
}

py::dict DatasetHandle::ReplicaStats(int64_t trial_id) {
  return TableColumns(Locked([&](Dataset& ds) { return ReplicaStatsTable(ds, trial_id); }));
}

py::tuple DatasetHandle::Trial(int64_t id, bool curves) {
  TrialData d = Locked([&](Dataset& ds) -> Result<TrialData> {
    TrialData out;
    XW_ASSIGN_OR_RETURN(TrialRow t, ds.GetTrial(id));
    for (size_t i = 0; curves && i < t.models.size(); ++i) {
      XW_ASSIGN_OR_RETURN(auto c, ds.LoadCurves(t.models[i].id));
      out.curves.push_back(std::move(c));
    }
    out.json = TrialJson(t, curves ? &out.curves : nullptr);
    return out;
  });
  py::list arrays;
  for (const auto& c : d.curves) arrays.append(CurveArrays(c));
  return py::make_tuple(d.json, arrays);
}

py::tuple DatasetHandle::Weights(int64_t trial_id, const std::string& profile) {
  WeightsData w = Locked([&](Dataset& ds) -> Result<WeightsData> {
    XW_ASSIGN_OR_RETURN(TrialRow t, ds.GetTrial(trial_id));
    XW_ASSIGN_OR_RETURN(size_t i, PickModel(t, profile, 0));
    const ModelRow& m = t.models[i];
    if (!m.has_weights) {
      return Status::FailedPrecondition("trial " + std::to_string(t.id) + ": model '" +
                                        m.profile + "' has no stored weights");
    }
    WeightsData out{m.profile, m.weights_sha256, {}};
    XW_ASSIGN_OR_RETURN(out.tensors, ds.LoadWeights(m.id));
    return out;
  });
  return py::make_tuple(w.profile, w.sha256, NamedArrays(std::move(w.tensors)));
}

py::dict DatasetHandle::ModelSpec(int64_t trial_id) {
  struct Spec {
    TrainOptions options;
    InputSpec input;
  };
  Spec s = Locked([&](Dataset& ds) -> Result<Spec> {
    XW_ASSIGN_OR_RETURN(TrialRow t, ds.GetTrial(trial_id));
    Spec out;
    XW_ASSIGN_OR_RETURN(out.options, OptionsFromTrial(t));
    // One image of each split is enough for the shape and class count.
    DataOptions d;
    d.train_limit = 1;
    d.test_limit = 1;
    d.seed = DataSeed(out.options);
    auto data = LoadDataSpec(out.options.data_spec, d);
    if (!data.ok()) {
      return data.status().WithContext("trial " + std::to_string(t.id) + ": data '" +
                                       out.options.data_spec + "'");
    }
    out.input = InputOfData(*data);
    return out;
  });
  py::dict d;
  d["arch"] = s.options.arch;
  d["width"] = s.options.arch_options.width;
  d["depth"] = s.options.arch_options.depth;
  d["dropout"] = s.options.arch_options.dropout;
  d["input_shape"] = py::make_tuple(s.input.channels, s.input.height, s.input.width);
  d["num_classes"] = s.input.num_classes;
  return d;
}

py::dict DatasetHandle::ImportCrossedWires(const std::string& csv, const std::string& arch) {
  ImportReport r = Locked([&](Dataset& ds) { return xw::ImportCrossedWires(ds, csv, arch); });
  py::dict d;
  d["rows"] = r.rows;
  d["imported"] = r.imported;
  d["skipped_existing"] = r.skipped_existing;
  d["rows_without_curves"] = r.rows_without_curves;
  py::dict states;
  for (const auto& [state, n] : r.by_state) states[py::str(state)] = n;
  d["by_state"] = states;
  return d;
}

namespace {

// A result's JSON, its tables and the stored row's id (-1: not stored).
struct AnalysisOut {
  std::string json;
  std::vector<std::pair<std::string, Table>> tables;
  int64_t id = -1;
};

py::dict AnalysisDict(const AnalysisOut& r) {
  py::dict d;
  d["json"] = r.json;
  for (const auto& [name, table] : r.tables) d[py::str(name)] = TableColumns(table);
  d["analysis_id"] = r.id >= 0 ? py::object(py::int_(r.id)) : py::object(py::none());
  return d;
}

}  // namespace

py::dict DatasetHandle::Compare(int64_t trial_id, const std::string& profile_a,
                                const std::string& profile_b, int64_t probe, double rtol,
                                double atol, double acc_tol, bool store) {
  CompareOptions opt;
  opt.profile_a = profile_a;
  opt.profile_b = profile_b;
  opt.probe = probe;
  opt.rtol = rtol;
  opt.atol = atol;
  opt.acc_tol = acc_tol;
  const AnalysisOut r = Locked([&](Dataset& ds) -> Result<AnalysisOut> {
    if (store && read_only_) {
      return Status::FailedPrecondition(path_ +
                                        ": opened read-only; open it with mode \"w\" to store");
    }
    XW_ASSIGN_OR_RETURN(CompareReport rep, ComparePair(ds, trial_id, opt));
    CompareTables t = CompareTablesOf(rep);
    AnalysisOut out{CompareJson(rep),
                    {{"tensors", std::move(t.tensors)},
                     {"layers", std::move(t.layers)},
                     {"classes", std::move(t.classes)}},
                    -1};
    if (store) {
      XW_ASSIGN_OR_RETURN(out.id, StoreAnalysis(ds, CompareAnalysisRecord(rep)));
    }
    return out;
  });
  return AnalysisDict(r);
}

py::dict DatasetHandle::Attribute(int64_t trial_id, const std::string& profile_a,
                                  const std::string& profile_b,
                                  const std::vector<std::string>& knobs, int jobs, int threads,
                                  bool store) {
  AttributeOptions opt;
  opt.profile_a = profile_a;
  opt.profile_b = profile_b;
  opt.knobs = knobs;
  opt.jobs = jobs;
  opt.threads = threads;
  const AnalysisOut r = Locked([&](Dataset& ds) -> Result<AnalysisOut> {
    if (store && read_only_) {
      return Status::FailedPrecondition(path_ +
                                        ": opened read-only; open it with mode \"w\" to store");
    }
    XW_ASSIGN_OR_RETURN(AttributionReport rep, AttributeDivergence(ds, trial_id, opt));
    AnalysisOut out{AttributionJson(rep),
                    {{"knobs", AttributionKnobTable(rep)}, {"runs", AttributionRunTable(rep)}},
                    -1};
    if (store) {
      XW_ASSIGN_OR_RETURN(out.id, StoreAnalysis(ds, AttributionAnalysisRecord(rep)));
    }
    return out;
  });
  return AnalysisDict(r);
}

py::dict DatasetHandle::Analyses(int64_t trial_id, const std::string& kind) {
  return TableColumns(Locked([&](Dataset& ds) -> Result<Table> {
    XW_ASSIGN_OR_RETURN(std::vector<AnalysisRecord> rows, LoadAnalyses(ds, trial_id, kind));
    Table t;
    t.columns = {"id", "kind", "created_at", "toolkit", "trials", "summary", "result_json"};
    for (const AnalysisRecord& a : rows) {
      std::string trials;
      for (int64_t id : a.trial_ids) trials += (trials.empty() ? "" : ",") + std::to_string(id);
      t.rows.push_back({a.id, a.kind, a.created_at, a.toolkit, trials, a.summary, a.result_json});
    }
    return t;
  }));
}

}  // namespace xw::python
