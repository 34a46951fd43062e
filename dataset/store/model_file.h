// Internal: HDF5 bundles, the files under DIR/h5/ holding the weights and
// curves of the models stored by one AddTrial(s) call.
//
// Layout: one group per model, "<k>/<j>" (k = trial index in the call, j =
// model index in the trial). A model group has the weights-file layout of
// tensor_file.h (one dataset per state_dict key + "tensor_order"), string
// attributes "profile", "arch", "status", and a "curves" group with 1-D
// float64 datasets epoch, train_loss_mean, train_loss_last, train_acc,
// test_loss, test_acc (NaN = unknown). Call with no HDF5 lock held.
#ifndef XWIRES_DATASET_STORE_MODEL_FILE_H_
#define XWIRES_DATASET_STORE_MODEL_FILE_H_

#include <map>
#include <string>
#include <vector>

#include "xwires/core/status.h"
#include "xwires/dataset/store/run_record.h"

namespace xw {

struct BundleModel {
  std::string group;
  const NamedTensors* weights = nullptr;
  const std::vector<EpochMetrics>* curves = nullptr;
  std::map<std::string, std::string> attrs;
};

// Writes the bundle atomically (temp file, fsync, rename).
Status WriteBundle(const std::string& path,
                   const std::vector<BundleModel>& models);

Result<NamedTensors> ReadBundleWeights(const std::string& path,
                                       const std::string& group);
Result<std::vector<EpochMetrics>> ReadBundleCurves(const std::string& path,
                                                   const std::string& group);

// A fresh bundle path relative to the dataset directory: "h5/<xx>/<32 hex>.h5".
std::string NewBundleName();

}  // namespace xw

#endif  // XWIRES_DATASET_STORE_MODEL_FILE_H_
