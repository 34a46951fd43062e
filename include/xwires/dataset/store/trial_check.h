// The store's value rules for one trial, those Dataset::AddTrial applies
// before it writes anything (dataset/store/trial_rules.h: arch, profile
// names, statuses, JSON fields, hyperparameter domains, accuracies,
// divergence), for callers that check a trial they are about to produce:
// `xwires train --dataset` checks its planned trial before training, so a
// value the store would refuse costs no training and writes no file.
// Plain function; thread-safe.
#ifndef XWIRES_DATASET_STORE_TRIAL_CHECK_H_
#define XWIRES_DATASET_STORE_TRIAL_CHECK_H_

#include <string>

#include "xwires/core/status.h"
#include "xwires/dataset/store/run_record.h"

namespace xw {

// OK if AddTrial's checks accept `t`; else InvalidArgument naming `what`
// ("trial"), the model, the field and the value.
Status CheckTrialForStore(const TrialRecord& t, const std::string& what);

}  // namespace xw

#endif  // XWIRES_DATASET_STORE_TRIAL_CHECK_H_
