// What a training run produces: the one interface between the trainer and the
// dataset store. The trainer fills a TrialRecord; `xw::Dataset::AddTrial`
// (dataset.h) stores it atomically (weights and curves to HDF5 first, then the
// SQL rows in one transaction). Plain data, no behaviour; copyable and movable.
#ifndef XWIRES_DATASET_STORE_RUN_RECORD_H_
#define XWIRES_DATASET_STORE_RUN_RECORD_H_

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "xwires/dataset/store/tensor_file.h"

namespace xw {

inline constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();

// One epoch of one model's training. Unknown values are NaN (imported
// CrossedWires rows only carry training losses).
struct EpochMetrics {
  int epoch = 0;                      // 1-based
  double train_loss_mean = kUnknown;  // mean loss over the epoch's batches
  double train_loss_last = kUnknown;  // loss of the epoch's last batch
  double train_acc = kUnknown;
  double test_loss = kUnknown;
  double test_acc = kUnknown;
};

// One profile's training inside a trial.
struct ModelRecord {
  std::string profile;  // "torch", "tf", "reference", "pytorch" (imported) ...
  std::string
      profile_json;       // full profile definition; "" for external profiles
  bool external = false;  // produced outside xwires (e.g. CrossedWires import)
  std::string status = "ok";    // "ok" | "diverged" | "failed"
  double train_acc = kUnknown;  // final values, accuracies in [0, 1]
  double test_acc = kUnknown;
  double train_loss = kUnknown;
  double test_loss = kUnknown;
  std::vector<EpochMetrics> curves;
  NamedTensors weights;  // may be empty (imported runs have none)
  std::string
      weights_sha256;  // WeightsSha256(weights); filled by AddTrial if empty
  // Number of trainable parameters; 0 means "not recorded" (imported results:
  // no real model has 0 parameters). models.param_count is NOT NULL.
  int64_t param_count = 0;
  double wall_time_s = kUnknown;
  std::string fingerprint_json;  // xw::MachineFingerprintJson(threads)
  int threads = 0;
};

struct TrialRecord {
  std::string arch;       // "vgg16", "resnet50", "simple_cnn", ...
  std::string data_spec;  // "synthetic", "cifar10:...", "cifar10" (imported)
  std::string
      hparams_json;  // full JSON object of every hyperparameter ("" = {})
  // Typed, indexed copies of the common hyperparameters (NaN / 0 if unused).
  double lr = kUnknown;
  double adam_eps = kUnknown;
  double beta1 = kUnknown;
  double beta2 = kUnknown;
  double weight_decay = kUnknown;
  int64_t batch_size = 0;
  int64_t epochs = 0;
  // Seed of init, dropout and shuffling; empty when unknown (imported
  // CrossedWires results), stored as SQL NULL. Trainer-produced trials always
  // have one.
  std::optional<int64_t> seed;
  std::vector<ModelRecord> models;   // usually 2 (profile A, profile B)
  double divergence = kUnknown;      // |acc_A - acc_B| or the search objective
  std::optional<int64_t> search_id;  // searches.id when produced by a search
  std::string provenance;            // who/what produced or imported it
  std::string external_id;           // e.g. the CrossedWires trial name
  std::string extra_json;            // JSON object of other facts about the run
                           // (e.g. an import's original state and times)
};

}  // namespace xw

#endif  // XWIRES_DATASET_STORE_RUN_RECORD_H_
