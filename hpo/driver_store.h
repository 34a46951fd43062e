// SearchStore: the dataset side of a search (rank 0 only). Creates or
// resumes the `searches` row and writes every trial event as it happens:
// pending row before training, finished trial (Dataset::AddTrial, then the
// pending row is deleted) or failed row after. See search_log.h for the row
// life cycle and search_driver.h for the resume rules.
//
// Not thread-safe: one thread (the driver's main thread) uses it.
#ifndef XWIRES_HPO_DRIVER_STORE_H_
#define XWIRES_HPO_DRIVER_STORE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "driver_internal.h"
#include "xwires/dataset/store/dataset.h"
#include "xwires/dataset/store/search_lock.h"

namespace xw::hpo::internal {

class SearchStore {
 public:
  // Both hold the search's SearchWriterLock until destroyed: Resume of a
  // search another process is running is FailedPrecondition naming it.
  // Creates (if needed) the dataset in `dir` and a new search row for `c`.
  static Result<std::unique_ptr<SearchStore>> Create(const std::string& dir,
                                                     const DriverConfig& c);
  // Opens search `id` of the dataset in `dir`: its stored config and its
  // trial rows. A pending row that a finished trial names as the one it
  // completes (a crash between the two writes) is deleted here.
  static Result<std::unique_ptr<SearchStore>> Resume(const std::string& dir,
                                                     int64_t id);

  int64_t search_id() const { return id_; }
  const DriverConfig& config() const { return config_; }
  // The search's rows in id order (done, failed and pending).
  const std::vector<HistoryEntry>& history() const { return history_; }

  // Pending row for point x of `subspace`; hyperparameters as the trial
  // will record them (threads: the trial's thread count). The finished or
  // failed row that replaces it keeps `optimizer_state`.
  Result<int64_t> AddPending(int subspace, const std::vector<double>& x,
                             int threads,
                             const std::string& optimizer_state = "");
  // Stores finished trial `r` (completing pending row `pending_id`), then
  // deletes the pending row. Returns the new trial id.
  Result<int64_t> AddDone(int64_t pending_id, int subspace,
                          const std::vector<double>& x, TrialRecord r);
  Status AddFailed(int64_t pending_id, int subspace,
                   const std::vector<double>& x, const std::string& message);
  Status SetStatus(const std::string& status);

 private:
  SearchStore() = default;
  std::unique_ptr<Dataset> ds_;
  DriverConfig config_;
  int64_t id_ = 0;
  std::string provenance_;
  std::vector<HistoryEntry> history_;
  std::map<int64_t, std::string> states_;  // pending id -> optimizer state
  // Held from Create/Resume to the end: one writer per search.
  std::optional<SearchWriterLock> lock_;
};

}  // namespace xw::hpo::internal

#endif  // XWIRES_HPO_DRIVER_STORE_H_
