// Whole-trial renderings for `xwires export` and `xwires show`.
#ifndef XWIRES_DATASET_EXPORT_H_
#define XWIRES_DATASET_EXPORT_H_

#include <string>
#include <vector>

#include "xwires/dataset/dataset.h"
#include "xwires/dataset/table.h"

namespace xw {

// One row per trial: every trial column (hyperparameters, divergence, status,
// provenance, ...) and per profile P: status_P, train_acc_P, acc_P,
// train_loss_P, loss_P, sha256_P. Profiles are those in `rows`, sorted.
Table ExportTable(const std::vector<TrialRow>& rows);

// JSON array of trial objects with nested "hparams", "extra" and "models"
// (fingerprints parsed); unknown numbers are null. Pretty-printed.
std::string ExportJson(const std::vector<TrialRow>& rows);

// The same object as ExportJson for one trial, plus "curves" per model when
// `curves` is given (curves[i] belongs to trial.models[i]).
std::string TrialJson(const TrialRow& trial, const std::vector<std::vector<EpochMetrics>>* curves);

}  // namespace xw

#endif  // XWIRES_DATASET_EXPORT_H_
