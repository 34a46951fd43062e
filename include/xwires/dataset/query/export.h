// Whole-trial renderings for `xwires export` and `xwires show`.
#ifndef XWIRES_DATASET_QUERY_EXPORT_H_
#define XWIRES_DATASET_QUERY_EXPORT_H_

#include <ostream>
#include <string>
#include <vector>

#include "xwires/dataset/query/table.h"
#include "xwires/dataset/store/dataset.h"

namespace xw {

// One row per trial: every trial column (hyperparameters, divergence, status,
// provenance, ...) and per profile P: status_P, train_acc_P, acc_P,
// train_loss_P, loss_P, sha256_P. Profiles are those in `rows`, sorted,
// unless given.
Table ExportTable(const std::vector<TrialRow>& rows);
Table ExportTable(const std::vector<TrialRow>& rows,
                  const std::vector<std::string>& profiles);

// JSON array of trial objects with nested "hparams", "extra" and "models"
// (fingerprints parsed); unknown numbers are null. Pretty-printed.
std::string ExportJson(const std::vector<TrialRow>& rows);

// Streams every trial matching the filter `where` (query.h language) to `out`
// as CSV (ExportTable columns, every profile of the dataset) or JSON (as
// ExportJson), reading `page` trials at a time so memory stays bounded.
// InvalidArgument for a bad filter or the table format.
Status ExportTrials(const Dataset& ds, const std::string& where,
                    TableFormat format, std::ostream& out,
                    int64_t page = 10000);

// The same object as ExportJson for one trial, plus "curves" per model when
// `curves` is given (curves[i] belongs to trial.models[i]).
std::string TrialJson(const TrialRow& trial,
                      const std::vector<std::vector<EpochMetrics>>* curves);

}  // namespace xw

#endif  // XWIRES_DATASET_QUERY_EXPORT_H_
