// Import of the CrossedWires study's published per-trial results (one CSV per
// architecture, e.g. vgg16_cifar10_results.csv): hyperparameters, both test
// accuracies, the accuracy difference and the per-epoch training-loss curves
// of the PyTorch and TensorFlow runs. Profiles are named "pytorch" and
// "tensorflow" and marked external; no weights.
//
// Every row is imported (never silently dropped): the run State maps to the
// models' status (finished -> ok, crashed/failed/killed -> failed, anything
// else, e.g. running -> incomplete) and the original State, Created, Runtime
// and W&B project go to the trial's extra_json. Loss lists may hold huge
// numbers (parsed as double), NaN/Infinity/null (stored as NaN) or be empty.
// Rows whose Name is already in the dataset for that architecture are skipped
// (counted), so importing a file twice changes nothing.
#ifndef XWIRES_DATASET_STORE_CROSSEDWIRES_H_
#define XWIRES_DATASET_STORE_CROSSEDWIRES_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "xwires/core/status.h"
#include "xwires/dataset/store/dataset.h"
#include "xwires/dataset/store/run_record.h"

namespace xw {

// Columns an input file must have.
extern const std::vector<std::string> kCrossedWiresRequiredColumns;

struct CrossedWiresFile {
  std::vector<TrialRecord> trials;          // one per CSV row, in file order
  std::map<std::string, int64_t> by_state;  // "finished" -> 399, ...
  int64_t rows_without_curves = 0;          // rows whose loss lists are empty
};

// Parses and validates the whole file without touching any dataset.
// InvalidArgument naming the file (and line/column) for a missing column, a
// non-numeric value, a malformed loss list or a duplicate Name; NotFound if
// the file does not exist.
Result<CrossedWiresFile> ParseCrossedWiresCsv(const std::string& path,
                                              const std::string& arch);

struct ImportReport {
  int64_t rows = 0;
  int64_t imported = 0;
  int64_t skipped_existing = 0;  // Name already stored for this architecture
  std::map<std::string, int64_t> by_state;
  int64_t rows_without_curves = 0;
};

// Adds the trials of a parsed file that are not stored yet, in one
// transaction (all or nothing). The dataset must be open read-write.
Result<ImportReport> ImportCrossedWires(Dataset& ds, CrossedWiresFile file,
                                        const std::string& arch);
// Parses `path` completely, then imports it as above.
Result<ImportReport> ImportCrossedWires(Dataset& ds, const std::string& path,
                                        const std::string& arch);

}  // namespace xw

#endif  // XWIRES_DATASET_STORE_CROSSEDWIRES_H_
