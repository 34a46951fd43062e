#include "xwires/api/train_run.h"

#include <chrono>
#include <cstdio>
#include <memory>

#include "xwires/api/output_files.h"
#include "xwires/dataset/store/dataset.h"
#include "xwires/dataset/store/trial_check.h"
#include "xwires/dataset/store/tensor_file.h"
#include "xwires/trainers/metrics.h"

namespace xw {
namespace {

// What the run needs, loaded and checked before any training.
struct Prepared {
  std::vector<std::string> weights_files;
  DataSplits data;
  NamedTensors init;
  std::unique_ptr<Dataset> store;
  TrainOptions options;
};

Result<Prepared> Prepare(const TrainRequest& r) {
  Prepared p;
  for (const Profile& profile : r.profiles) {
    const std::string file = SafeFileName(profile.name) + ".h5";
    for (const std::string& f : p.weights_files) {
      if (f == file) {
        return Status::InvalidArgument("--profiles: two profiles are named '" + profile.name +
                                       "'");
      }
    }
    p.weights_files.push_back(file);
  }
  if (r.profiles.empty()) return Status::InvalidArgument("--profiles: no profile given");

  TrainOptions& o = p.options;
  o.arch = r.arch;
  o.arch_options = r.arch_options;
  o.epochs = r.epochs;
  o.batch_size = r.batch_size;
  o.adam = r.adam;
  o.seed = r.seed;
  o.data_seed = r.data_seed;
  o.threads = r.threads;
  o.eval_batch_size = r.eval_batch_size;
  o.data_spec = r.data;
  o.train_limit = r.train_limit;
  o.test_limit = r.test_limit;
  XW_RETURN_IF_ERROR(ValidateTrainOptions(o));
  if (!r.dataset.empty()) {
    // The trial as the store will receive it, results still unknown: the
    // store's own rules (lr > 0, profile names, ...) refuse it now rather
    // than after the training.
    TrialRecord plan = TrialRecordFor(o);
    for (const Profile& profile : r.profiles) {
      ModelRecord m;
      m.profile = profile.name;
      m.status = "incomplete";
      plan.models.push_back(std::move(m));
    }
    XW_RETURN_IF_ERROR(CheckTrialForStore(plan, "trial"));
  }

  if (!r.init_weights.empty()) {
    XW_ASSIGN_OR_RETURN(p.init, ReadTensorFile(r.init_weights));
    o.init_weights_source = r.init_weights;
  }
  DataOptions data_options;
  data_options.train_limit = r.train_limit;
  data_options.test_limit = r.test_limit;
  data_options.seed = DataSeed(o);
  XW_ASSIGN_OR_RETURN(p.data, LoadDataSpec(r.data, data_options));
  // The architecture must fit the data and the init weights the architecture.
  XW_ASSIGN_OR_RETURN(auto model, BuildModel(r.arch, InputOfData(p.data), r.arch_options));
  if (!r.init_weights.empty()) XW_RETURN_IF_ERROR(model->LoadState(p.init, r.init_weights));
  // Directories are created last, once every other input has been accepted.
  if (!r.out.empty()) XW_RETURN_IF_ERROR(PrepareOutputDir(r.out));
  if (!r.dataset.empty()) {
    XW_ASSIGN_OR_RETURN(p.store, Dataset::Open(r.dataset, OpenMode::kCreate));
  }
  o.on_progress = r.on_progress;
  o.should_stop = r.should_stop;
  return p;
}

}  // namespace

Result<TrainOutcome> RunTraining(const TrainRequest& r) {
  const auto start = std::chrono::steady_clock::now();
  XW_ASSIGN_OR_RETURN(Prepared p, Prepare(r));
  // Set only now: `p` has reached its final address.
  if (!r.init_weights.empty()) p.options.init_weights = &p.init;
  TrainOutcome out;
  XW_ASSIGN_OR_RETURN(out.trial, TrainTrial(r.profiles, p.data, p.options));
  out.weights_files = p.weights_files;
  out.input = InputOfData(p.data);
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!r.out.empty()) {
    const TrialRecord& trial = out.trial;
    for (size_t i = 0; i < trial.models.size(); ++i) {
      XW_RETURN_IF_ERROR(WriteTensorFile(
          r.out + "/" + p.weights_files[i], trial.models[i].weights,
          WeightsAttrs(r.arch, r.arch_options, p.data, trial.models[i])));
    }
    const int threads = trial.models.front().threads;
    XW_RETURN_IF_ERROR(WriteFileAtomic(
        r.out + "/metrics.json",
        MetricsJson(trial, p.data, p.weights_files, wall, threads) + "\n"));
  }
  if (p.store) {
    XW_ASSIGN_OR_RETURN(out.trial_id, p.store->AddTrial(out.trial));
  }
  out.wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

InputSpec InputOfData(const DataSplits& data) {
  InputSpec in;
  in.channels = data.train.channels();
  in.height = data.train.height();
  in.width = data.train.width();
  in.num_classes = data.train.num_classes;
  return in;
}

std::map<std::string, std::string> WeightsAttrs(const std::string& arch,
                                                const ArchOptions& options,
                                                const DataSplits& data, const ModelRecord& m) {
  char width[32], dropout[32];
  std::snprintf(width, sizeof width, "%.17g", options.width);
  std::snprintf(dropout, sizeof dropout, "%.17g", options.dropout);
  return {{"arch", arch},
          {"width", width},
          {"depth", std::to_string(options.depth)},
          {"dropout", dropout},
          {"num_classes", std::to_string(data.train.num_classes)},
          {"input_shape", std::to_string(data.train.channels()) + "," +
                              std::to_string(data.train.height()) + "," +
                              std::to_string(data.train.width())},
          {"profile", m.profile},
          {"status", m.status},
          {"weights_sha256", m.weights_sha256},
          {"data", data.name}};
}

}  // namespace xw
