// Training, searches and profiles for Python: xwires._xwires.train / search /
// profile_json / shipped_profiles. The library does the work (RunTraining,
// RunSearch, as the CLI); here the GIL is released around it, progress goes
// to sys.stderr and Ctrl-C stops it between steps (interrupt.h).
#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <vector>

#include "convert.h"
#include "interrupt.h"
#include "status_bridge.h"
#include "xwires/api/progress_text.h"
#include "xwires/api/replicate_run.h"
#include "xwires/api/search_run.h"
#include "xwires/api/train_run.h"
#include "xwires/dataset/query/export.h"
#include "xwires/dataset/store/dataset.h"

namespace xw::python {
namespace {

// A shipped name, a .json path, or the JSON text itself ("{...}").
Result<Profile> ResolveProfile(const std::string& spec) {
  const size_t first = spec.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && spec[first] == '{') {
    auto p = ParseProfileJson(spec);
    if (!p.ok()) return p.status().WithContext("profile JSON");
    return p;
  }
  return LoadProfile(spec);
}

// The JSON `xwires show --format json --curves` prints, for a trial that was
// trained but not stored (id 0, no creation time, no HDF5 location). Trained
// models are "ok" or "diverged"; the trial takes the worse.
std::string UnstoredTrialJson(const TrialRecord& r,
                              const std::vector<std::vector<EpochMetrics>>& curves) {
  TrialRow t;
  t.arch = r.arch;
  t.data_spec = r.data_spec;
  t.status = "ok";
  t.external_id = r.external_id;
  t.provenance = r.provenance;
  t.lr = r.lr;
  t.adam_eps = r.adam_eps;
  t.beta1 = r.beta1;
  t.beta2 = r.beta2;
  t.weight_decay = r.weight_decay;
  t.divergence = r.divergence;
  t.batch_size = r.batch_size;
  t.epochs = r.epochs;
  t.seed = r.seed;
  t.search_id = r.search_id;
  t.hparams_json = r.hparams_json;
  t.extra_json = r.extra_json;
  for (const ModelRecord& m : r.models) {
    if (m.status != "ok") t.status = m.status;
    ModelRow row;
    row.profile = m.profile;
    row.external = m.external;
    row.status = m.status;
    row.train_acc = m.train_acc;
    row.test_acc = m.test_acc;
    row.train_loss = m.train_loss;
    row.test_loss = m.test_loss;
    row.n_epochs = static_cast<int64_t>(m.curves.size());
    row.has_weights = !m.weights.empty();
    row.weights_sha256 = m.weights_sha256;
    row.param_count = m.param_count;
    row.wall_time_s = m.wall_time_s;
    row.fingerprint_json = m.fingerprint_json;
    row.threads = m.threads;
    t.models.push_back(std::move(row));
  }
  return TrialJson(t, &curves);
}

py::tuple Train(const std::string& arch, const std::vector<std::string>& profiles,
                const std::string& data, const std::string& init_weights, const std::string& out,
                const std::string& dataset, int64_t epochs, int64_t batch_size,
                int64_t eval_batch_size, int64_t train_limit, int64_t test_limit, double lr,
                double adam_eps, double beta1, double beta2, double weight_decay, double width,
                int depth, double dropout, uint64_t seed, std::optional<uint64_t> data_seed,
                int threads, bool quiet) {
  TrainRequest r;
  r.arch = arch;
  for (const std::string& p : profiles) r.profiles.push_back(Unwrap(ResolveProfile(p)));
  r.data = data;
  r.init_weights = init_weights;
  r.out = out;
  r.dataset = dataset;
  r.epochs = epochs;
  r.batch_size = batch_size;
  r.eval_batch_size = eval_batch_size;
  r.train_limit = train_limit;
  r.test_limit = test_limit;
  r.adam = AdamOptions{lr, beta1, beta2, adam_eps, weight_decay};
  r.arch_options.width = width;
  r.arch_options.depth = depth;
  r.arch_options.dropout = dropout;
  r.seed = seed;
  r.data_seed = data_seed;
  r.threads = threads;
  InterruptPoller poller;
  TrainProgressText progress(PythonStderrIsTerminal(), quiet, PythonStderrWriter());
  r.on_progress = [&](const TrainProgress& p) { progress.Update(p); };
  r.should_stop = [&] { return poller.StopRequested(); };
  Result<TrainOutcome> run = Status::Internal("not run");
  {
    py::gil_scoped_release nogil;
    run = RunTraining(r);
    progress.Finish();
  }
  poller.RethrowIfRaised();
  TrainOutcome o = Unwrap(std::move(run));
  std::vector<std::vector<EpochMetrics>> curves;
  for (const ModelRecord& m : o.trial.models) curves.push_back(m.curves);
  py::list curve_arrays, weights;
  for (const auto& c : curves) curve_arrays.append(CurveArrays(c));
  for (ModelRecord& m : o.trial.models) {
    weights.append(py::make_tuple(m.profile, m.weights_sha256, NamedArrays(std::move(m.weights))));
  }
  py::dict spec;
  spec["arch"] = arch;
  spec["width"] = width;
  spec["depth"] = depth;
  spec["dropout"] = dropout;
  spec["input_shape"] = py::make_tuple(o.input.channels, o.input.height, o.input.width);
  spec["num_classes"] = o.input.num_classes;
  return py::make_tuple(o.trial_id, UnstoredTrialJson(o.trial, curves), curve_arrays, weights,
                        spec);
}

py::dict Search(const std::string& config_file, const std::string& config_json,
                const std::string& dataset, const std::string& objective, int64_t resume,
                int64_t max_trials, int trials_per_subspace, int jobs, int threads,
                double max_seconds, std::optional<int64_t> seed, bool no_subspaces, int top,
                bool quiet) {
  SearchRequest r;
  r.config_file = config_file;
  r.config_json = config_json;
  r.dataset = dataset;
  r.objective = objective;
  r.resume = resume;
  r.max_trials = max_trials;
  r.trials_per_subspace = trials_per_subspace;
  r.jobs = jobs;
  r.threads = threads;
  r.max_seconds = max_seconds;
  r.seed = seed;
  r.no_subspaces = no_subspaces;
  const hpo::DriverConfig config = Unwrap(SearchConfigOf(r));
  if (top < 0) RaiseStatus(Status::InvalidArgument("top must be >= 0"));
  hpo::DriverOptions o = Unwrap(SearchOptionsOf(r));
  InterruptPoller poller;
  SearchProgressText progress(PythonStderrIsTerminal(), quiet, PythonStderrWriter());
  o.on_progress = [&](const hpo::SearchProgress& p) { progress.Update(p); };
  o.on_message = [&](const std::string& m) { progress.Message(m); };
  o.should_stop = [&] { return poller.StopRequested(); };
  Result<hpo::SearchSummary> result = Status::Internal("not run");
  Result<Table> top_table = Table{};
  {
    py::gil_scoped_release nogil;
    // One process: MPI is the CLI's business (docs/cluster.md).
    std::unique_ptr<hpo::Cluster> cluster = hpo::LocalCluster();
    result = hpo::RunSearch(config, o, *cluster);
    progress.Finish();
    if (result.ok() && top > 0) top_table = SearchTopTable(dataset, result->search_id, top);
  }
  poller.RethrowIfRaised();
  const hpo::SearchSummary s = Unwrap(std::move(result));
  py::dict d;
  d["search_id"] = s.search_id;
  d["status"] = s.status;
  d["finished"] = s.finished;
  d["failed"] = s.failed;
  d["best"] = s.best >= 0 ? py::object(py::float_(s.best)) : py::object(py::none());
  d["best_trial"] = s.best >= 0 ? py::object(py::int_(s.best_trial)) : py::object(py::none());
  d["top"] = TableColumns(Unwrap(std::move(top_table)));
  return d;
}

// xw::RunReplicate; returns the statistics table (ReplicaStatsTable
// columns plus trial_id) and the counts.
py::dict Replicate(const std::string& dataset, const std::vector<int64_t>& trials, int64_t top,
                   const std::string& where, int replicas, const std::string& perturb, int jobs,
                   int threads, bool store_weights, bool quiet) {
  ReplicateRequest r;
  r.dataset = dataset;
  r.trials = trials;
  r.top = top;
  r.where = where;
  r.replicas = replicas;
  r.perturb = perturb;
  r.jobs = jobs;
  r.threads = threads;
  r.store_weights = store_weights;
  InterruptPoller poller;
  auto write = PythonStderrWriter();
  r.on_progress = [&](const ReplicateRequest::Progress& p) {
    if (quiet) return;
    write("replica " + std::to_string(p.done) + "/" + std::to_string(p.total) + ": trial " +
          std::to_string(p.trial_id) + " " + p.profile + " r=" + std::to_string(p.replica) +
          " | ETA " + DurationText(p.eta_s) + "\n");
  };
  r.should_stop = [&] { return poller.StopRequested(); };
  Result<ReplicateSummary> run = Status::Internal("not run");
  {
    py::gil_scoped_release nogil;
    run = RunReplicate(r);
  }
  poller.RethrowIfRaised();
  const ReplicateSummary s = Unwrap(std::move(run));
  Table t;
  t.columns = {"trial_id", "profile_a", "profile_b", "family", "k", "mean_a", "mean_b",
               "mean_diff", "p_value", "diff_lcb", "noise_sd", "verdict"};
  for (const ReplicaStatsRecord& x : s.stats) {
    t.rows.push_back({x.trial_id, x.profile_a, x.profile_b, x.family, x.k_a, x.stats.a.mean,
                      x.stats.b.mean, x.stats.mean_diff, x.stats.permutation_p, x.stats.lcb,
                      x.NoiseSd(), std::string(stats::VerdictName(x.stats.verdict))});
  }
  py::dict out;
  out["stats"] = TableColumns(t);
  out["trained"] = s.trained;
  out["skipped"] = s.skipped;
  out["wall_s"] = s.wall_s;
  return out;
}

std::string ProfileJson(const std::string& spec) { return Unwrap(ResolveProfile(spec)).json; }

}  // namespace

void RegisterRuns(py::module_& m) {
  m.def("train", &Train, py::arg("arch"), py::arg("profiles"), py::arg("data"),
        py::arg("init_weights"), py::arg("out"), py::arg("dataset"), py::arg("epochs"),
        py::arg("batch_size"), py::arg("eval_batch_size"), py::arg("train_limit"),
        py::arg("test_limit"), py::arg("lr"), py::arg("adam_eps"), py::arg("beta1"),
        py::arg("beta2"), py::arg("weight_decay"), py::arg("width"), py::arg("depth"),
        py::arg("dropout"), py::arg("seed"), py::arg("data_seed"), py::arg("threads"),
        py::arg("quiet"), "Trains one architecture under several profiles (xw::RunTraining).");
  m.def("replicate", &Replicate, py::arg("dataset"), py::arg("trials"), py::arg("top"),
        py::arg("where"), py::arg("replicas"), py::arg("perturb"), py::arg("jobs"),
        py::arg("threads"), py::arg("store_weights"), py::arg("quiet"),
        "Replicas of stored trials and their verdicts (xw::RunReplicate).");
  m.def("search", &Search, py::arg("config_file"), py::arg("config_json"), py::arg("dataset"),
        py::arg("objective"), py::arg("resume"), py::arg("max_trials"),
        py::arg("trials_per_subspace"), py::arg("jobs"), py::arg("threads"),
        py::arg("max_seconds"), py::arg("seed"), py::arg("no_subspaces"), py::arg("top"),
        py::arg("quiet"), "Runs or resumes a divergence search (xw::hpo::RunSearch).");
  m.def("profile_json", &ProfileJson, py::arg("spec"),
        "Canonical JSON of a shipped profile, a .json file or profile JSON text.");
  m.def("shipped_profiles", &ShippedProfileNames, "Names of the shipped fp32 profiles.");
  m.def("accelerator_profiles", &AcceleratorProfileNames,
        "Names of the shipped accelerator (GPU/TPU numerics) profiles.");
}

}  // namespace xw::python
