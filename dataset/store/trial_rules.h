// Internal: the value invariants every trial in a dataset satisfies, checked
// by the store's add path for every entry (train, search, import, bundle
// import, merge) before anything is written. One source of truth for the
// rules (docs/dataset.md, "Invariants").
#ifndef XWIRES_DATASET_STORE_TRIAL_RULES_H_
#define XWIRES_DATASET_STORE_TRIAL_RULES_H_

#include <string>

#include "xwires/core/status.h"
#include "xwires/dataset/store/replicas.h"
#include "xwires/dataset/store/run_record.h"

namespace xw {

// The record checks of the add path, then CheckTrialValues: non-empty arch,
// at least one model, profile names 1-64 of [A-Za-z0-9_.-] unique in the
// trial, known statuses, JSON fields that parse (hparams and extra objects),
// weights_sha256 matching the weights when both are given.
Status CheckTrialRecord(const TrialRecord& t, const std::string& what);

// InvalidArgument naming `what` (e.g. "trial 3 (name)"), the model, the
// field and the value at fault; OK if every rule holds:
//  * hyperparameters unknown (NaN / 0) or in domain: lr > 0, adam_eps > 0,
//    0 <= beta1, beta2 < 1, weight_decay >= 0, all finite; batch_size and
//    epochs in [0, 2^53] (0 = not used; exact as doubles, which the --near
//    index and the statistics hold them as);
//  * accuracies (final and per epoch) unknown or in [0, 1]; a model whose
//    status is "ok" has a test accuracy;
//  * losses unknown or finite; +-inf only in a model marked "diverged";
//  * curves: epochs 1, 2, ..., E in order;
//  * divergence: when it and two or more test accuracies are known, it is
//    the largest pairwise |accuracy difference| (within 1e-6), unless the
//    trial records search objectives (extra_json.objectives), where it is one
//    of them and their abs_acc_diff is that largest difference.
Status CheckTrialValues(const TrialRecord& t, const std::string& what);

// The statuses a stored trial can have: a finished trial's (ok, diverged,
// failed, incomplete) and a search's planned point (pending). OK if
// `status` is one, else InvalidArgument "unknown trial status '...' (...)"
// (queries filter on them: a misspelt one would silently match nothing).
Status CheckTrialStatus(const std::string& status);

// The metrics of one retraining recorded with an analysis (an attribution
// run), under the same rules as a model's: test accuracy unknown or in
// [0, 1]; test loss unknown or finite, +-inf only when `diverged`.
Status CheckRunMetrics(double test_acc, double test_loss, bool diverged,
                       const std::string& what);

// The rules every stored replica satisfies (replicas.h, CheckReplica):
// declared in replicas.h, defined here with the trial rules it shares.

}  // namespace xw

#endif  // XWIRES_DATASET_STORE_TRIAL_RULES_H_
