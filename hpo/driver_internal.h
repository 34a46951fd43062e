// Internals of the search driver (include/xwires/hpo/search_driver.h), shared
// by hpo/driver*.cc and tested by tests/hpo/driver_*_test.cc. Not part of the
// public API.
#ifndef XWIRES_HPO_DRIVER_INTERNAL_H_
#define XWIRES_HPO_DRIVER_INTERNAL_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "xwires/core/data.h"
#include "xwires/core/status.h"
#include "xwires/dataset/store/run_record.h"
#include "xwires/dataset/store/tensor_file.h"
#include "xwires/hpo/optimizer.h"
#include "xwires/hpo/search_driver.h"
#include "xwires/trainers/profile.h"
#include "xwires/trainers/trainer.h"

namespace xw::hpo::internal {

// ---- configuration (driver_config.cc) -------------------------------------

// Searchable dimension names, in documentation order.
const std::vector<std::string>& SearchableNames();
// Training options of one trial: the config's settings with the point's
// values (x in config.search.space order) filled in. threads: per trial.
TrainOptions TrialTrainOptions(const DriverConfig& c,
                               const std::vector<double>& x, int threads);
// "lr=0.001 epochs=3 adam_eps=1e-05 batch_size=128" (space order).
std::string PointText(const SearchSpace& space, const std::vector<double>& x);

// ---- one trial (driver_trial.cc)
// ---------------------------------------------

// What a trial needs that is shared by every trial of a search: loaded once,
// read-only afterwards (shared by the worker threads).
struct TrialContext {
  DriverConfig config;
  std::vector<Profile> profiles;  // the config's pair, loaded
  DataSplits data;
  InputSpec input;
  NamedTensors init;  // train.init_weights, loaded (empty without)
};
Result<TrialContext> PrepareTrials(const DriverConfig& c);

// The objectives of a finished pair (models[0] vs models[1]); NaN where not
// computed. abs_acc_diff is always computed; the other two need the test-set
// predictions (one extra evaluation pass per model) and are computed when
// `all` or when they are the search objective.
struct Objectives {
  double abs_acc_diff, disagreement, max_class_gap;
  double Get(Objective o) const;
};
// Rebuilds both models of `pair` (trained with options `o`) from their
// weights and compares their test-set predictions, with o.threads threads.
Result<Objectives> ComputeObjectives(const TrialContext& ctx,
                                     const TrainOptions& o,
                                     const TrialRecord& pair,
                                     Objective objective, bool all);
// Predicted test labels (argmax) of a model of the trial's architecture
// (options `o`) holding `weights`, evaluated under `profile`.
Result<std::vector<int32_t>> PredictTestLabels(const TrialContext& ctx,
                                               const TrainOptions& o,
                                               const Profile& profile,
                                               const NamedTensors& weights);
// max over classes of |acc_A(class) - acc_B(class)| and the disagreement rate
// from predicted labels (exposed for tests).
double DisagreementRate(const std::vector<int32_t>& a,
                        const std::vector<int32_t>& b);
double MaxClassGap(const std::vector<int32_t>& a, const std::vector<int32_t>& b,
                   const std::vector<int32_t>& labels, int num_classes);

// Trains the pair at point x with `threads` threads and measures the
// objective. The record's divergence is the objective; extra_json has
// {"objectives": {...}}; weights dropped unless train.store_weights.
// Cancelled when `should_stop` (TrainOptions::should_stop) stopped it.
Result<TrialRecord> RunTrial(const TrialContext& ctx,
                             const std::vector<double>& x, int threads,
                             std::function<bool()> should_stop = {});

// ---- history of a search in the dataset (driver_history.cc)
// ---------------------

// One row of a search as the driver sees it.
struct HistoryEntry {
  int64_t id = 0;
  int subspace = 0;
  std::vector<double> x;    // native point, config.search.space order
  std::string status;       // "done" | "failed" | "pending"
  double objective = 0;     // done only
  int64_t pending_ref = 0;  // done: the pending row it completed (0: none)
  // The subspace optimizer's state right after the Ask that proposed x
  // (OptimizerStateJson; "" when the row has none, e.g. written by an older
  // xwires). Restoring the latest one makes a resumed search ask exactly
  // what the uninterrupted one would.
  std::string optimizer_state;
  // done: how many of the search's trials had finished before it (-1:
  // unrecorded; rows written before done rows kept their pending row's id,
  // whose id order was their finishing order). Not sent over MPI.
  int64_t finished = -1;
  bool degenerate = false;  // done: a model collapsed or at chance
};
// extra_json "search" object of a trial row of the driver; a non-empty
// `optimizer_state` (a JSON object) is stored as its "optimizer";
// `finished`: see HistoryEntry (< 0 leaves it out).
std::string SearchExtraJson(int subspace, const std::vector<double>& x,
                            int64_t pending_ref, const std::string& objective,
                            const std::string& optimizer_state = "",
                            int64_t finished = -1);
// The state of `opt` that its observations do not determine (the gp_hedge
// portfolio: gains, last proposals; see optimizer.h), as a JSON object
// text; "" for an optimizer without such state (EI, PI, LCB).
std::string OptimizerStateJson(const GpOptimizer& opt);
// Sets what OptimizerStateJson returned. InvalidArgument if it does not fit
// the optimizer.
Status RestoreOptimizerState(GpOptimizer& opt, const std::string& state);
// Parses a trial row's status/extra_json/divergence into an entry;
// InvalidArgument if the row is not a driver row.
Result<HistoryEntry> EntryOfRow(int64_t id, const std::string& status,
                                const std::string& extra_json,
                                double divergence);

// Serialisation of histories and trial records for MPI (driver_wire.cc).
std::string EncodeHistory(const std::vector<HistoryEntry>& h);
Result<std::vector<HistoryEntry>> DecodeHistory(const std::string& bytes);
std::string EncodeTrialRecord(const TrialRecord& r);
Result<TrialRecord> DecodeTrialRecord(const std::string& bytes);

// A little-endian byte stream used by the encoders (driver_wire.cc).
class ByteWriter {
 public:
  void U64(uint64_t v);
  void I64(int64_t v) { U64(static_cast<uint64_t>(v)); }
  void F64(double v);
  void Str(const std::string& s);
  void Floats(const float* p, int64_t n);
  std::string& bytes() { return out_; }

 private:
  std::string out_;
};
class ByteReader {
 public:
  explicit ByteReader(const std::string& b) : b_(b) {}
  uint64_t U64();
  int64_t I64() { return static_cast<int64_t>(U64()); }
  double F64();
  std::string Str();
  void Floats(float* p, int64_t n);
  // False once a read ran past the end (reads then return zeros).
  bool ok() const { return ok_; }
  bool at_end() const { return pos_ == b_.size(); }
  size_t remaining() const { return b_.size() - pos_; }

 private:
  bool Take(size_t n);
  const std::string& b_;
  size_t pos_ = 0;
  bool ok_ = true;
};

}  // namespace xw::hpo::internal

#endif  // XWIRES_HPO_DRIVER_INTERNAL_H_
