// One training run as `xwires train` does it, callable from the CLI and the
// Python package alike: one architecture trained under several numerics
// profiles from the same data, seed and hyperparameters, optionally written
// to DIR/<profile>.h5 + DIR/metrics.json and stored in a dataset.
//
// Every input is checked before training starts (profiles, options, init
// weights, data, architecture, output directory, dataset), and files are
// written only after every profile has trained, each atomically, so a bad
// input, a failure or a stop request leaves existing files untouched.
//
// Thread-safety: RunTraining may run concurrently with distinct requests;
// callbacks run on the calling thread.
#ifndef XWIRES_API_TRAIN_RUN_H_
#define XWIRES_API_TRAIN_RUN_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "xwires/core/data.h"
#include "xwires/core/status.h"
#include "xwires/dataset/store/run_record.h"
#include "xwires/trainers/architectures.h"
#include "xwires/trainers/optimizer.h"
#include "xwires/trainers/profile.h"
#include "xwires/trainers/trainer.h"

namespace xw {

// What `xwires train` takes; defaults are the CLI's.
struct TrainRequest {
  std::string arch = "simple_cnn";
  // Loaded profiles (LoadProfile or ParseProfileJson), trained in this order.
  std::vector<Profile> profiles;
  std::string data = "synthetic";  // a data spec (core/data.h)
  std::string init_weights;  // weights file every profile starts from ("": own init)
  std::string out;           // write <profile>.h5 and metrics.json here ("": no files)
  std::string dataset;       // also store the trial in this dataset ("": none)
  int64_t epochs = 1, batch_size = 32, eval_batch_size = 256;
  int64_t train_limit = -1, test_limit = -1;  // first N images (-1: all)
  AdamOptions adam;
  ArchOptions arch_options;
  uint64_t seed = 0;
  int threads = 0;  // per training; 0: all cores
  // Progress reports and stop requests (TrainOptions::on_progress and
  // TrainOptions::should_stop).
  std::function<void(const TrainProgress&)> on_progress;
  std::function<bool()> should_stop;
};

struct TrainOutcome {
  TrialRecord trial;  // models[i] trained under profiles[i], weights included
  int64_t trial_id = -1;  // id in the request's dataset; -1 when not stored
  std::vector<std::string> weights_files;  // <profile>.h5 names (in `out`)
  InputSpec input;  // image shape and classes of the data trained on
  double wall_s = 0;  // from the start of the checks to the last write
};

// Checks the request, trains, writes the files and stores the trial.
// Errors name the option at fault the way the CLI spells it ("--profiles:
// two profiles are named 'torch'"); Cancelled when should_stop stopped it.
Result<TrainOutcome> RunTraining(const TrainRequest& request);

// The input spec (image shape, classes) of loaded data.
InputSpec InputOfData(const DataSplits& data);

// Root attributes of a weights file written by a training run: arch, width,
// depth, dropout, num_classes, input_shape "C,H,W", profile, status,
// weights_sha256, data.
std::map<std::string, std::string> WeightsAttrs(const std::string& arch,
                                                const ArchOptions& options,
                                                const DataSplits& data, const ModelRecord& m);

}  // namespace xw

#endif  // XWIRES_API_TRAIN_RUN_H_
