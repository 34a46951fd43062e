// Trial rows of a running search that are not (yet) a finished pair: the
// divergence search records every suggested point before training it, so a
// crash never loses or repeats a trial (hpo/driver*.cc, docs/search.md).
//
//   pending  a trial row with status "pending" and no models: the point is
//            being trained. Written by AddPendingTrial.
//   failed   a pending row whose training failed: MarkTrialFailed sets
//            status "failed" and stores the reason in extra_json.
//   done     the finished pair replaces its pending row under the same id
//            (CompletePendingTrial, one transaction), so a search's trials
//            are numbered 1, 2, 3, ... in the order they were suggested.
//            (Datasets written before that stored the pair as a new row
//            naming the pending row in extra_json.search.pending_trial, and
//            then deleted the pending row; the search driver still resolves
//            a crash between the two on resume.)
//
// Pending and failed rows carry the hyperparameters (typed columns,
// hparams_json), search_id, provenance and extra_json of the trial, indexed
// like every other trial row (divergence unknown).
//
// Thread-safety: as Dataset (one thread at a time per Dataset object).
#ifndef XWIRES_DATASET_STORE_SEARCH_LOG_H_
#define XWIRES_DATASET_STORE_SEARCH_LOG_H_

#include <cstdint>
#include <string>

#include "xwires/core/status.h"
#include "xwires/dataset/store/dataset.h"
#include "xwires/dataset/store/run_record.h"

namespace xw {

// Stores `trial` (which must have no models; divergence is ignored) as a
// "pending" row in one transaction and returns its id. InvalidArgument for an
// empty arch, models present, or hparams_json/extra_json that are not JSON
// objects; FailedPrecondition on a read-only dataset.
Result<int64_t> AddPendingTrial(Dataset& ds, const TrialRecord& trial);

// Stores finished trial `trial` in place of pending row `pending_id`, with
// the id of that row: Dataset::AddTrial's checks, HDF5 bundle and index,
// and the removal of the pending row in one transaction. Returns the id
// (== pending_id). NotFound if there is no pending row with that id (the
// trial is then not stored); the errors of AddTrial otherwise.
Result<int64_t> CompletePendingTrial(Dataset& ds, int64_t pending_id,
                                     const TrialRecord& trial);

// Turns pending row `trial_id` into a "failed" row whose extra_json becomes
// `extra_json` (a JSON object). NotFound if there is no pending row with
// that id (a finished or failed trial is never changed).
Status MarkTrialFailed(Dataset& ds, int64_t trial_id, const std::string& extra_json);

// Removes pending row `trial_id`. NotFound if there is no
// pending row with that id.
Status DeletePendingTrial(Dataset& ds, int64_t trial_id);

}  // namespace xw

#endif  // XWIRES_DATASET_STORE_SEARCH_LOG_H_
