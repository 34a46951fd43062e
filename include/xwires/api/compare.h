// Three-tier comparison of a stored pair of models (`xwires compare`):
//   tier 1, tensors: every state_dict entry of model A against model B --
//           max |a-b|, max |a-b| / max(|a|,|b|) over elements (relative),
//           ||a-b|| / max(||a||, ||b||) (relative L2), cosine similarity;
//   tier 2, activations: both models (each under its own profile's numerics,
//           eval mode) run the same probe batch -- the first `probe` test
//           images -- and every module's output is compared the same way;
//           "parted at" is the first module whose outputs are not close;
//   tier 3, task: both models' predictions on the whole test split --
//           accuracies, prediction agreement, per-class accuracy and
//           confusion matrices (rows = true class, columns = predicted).
// Closeness is numpy.isclose(a, b, rtol, atol): |a-b| <= atol + rtol*|b|
// (B is the reference; NaN is never close). A tier's verdict is
// "identical" (bitwise), "close" (every element within tolerance; tier 3:
// |acc_A - acc_B| <= acc_tol) or "differ".
//
// Statistics accumulate in double in element order (deterministic; they
// measure the models, they are not a training numeric). Thread-safety: as
// Dataset; the model evaluation uses ParallelFor (threads option).
#ifndef XWIRES_API_COMPARE_H_
#define XWIRES_API_COMPARE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "xwires/core/status.h"
#include "xwires/core/tensor.h"
#include "xwires/dataset/query/table.h"
#include "xwires/dataset/store/analysis.h"
#include "xwires/dataset/store/dataset.h"

namespace xw {

struct CompareOptions {
  std::string profile_a, profile_b;  // "" = the trial's first / second model
  int64_t probe = 64;                // tier-2 probe batch size (>= 1)
  double rtol = 1e-5, atol = 1e-8;   // tiers 1 and 2 (>= 0)
  double acc_tol = 0.01;             // tier 3: accuracy difference (>= 0)
  int threads = 0;                   // 0: all hardware threads
  int64_t eval_batch = 256;
};

// Difference statistics of two equally shaped arrays.
struct DiffStats {
  double max_abs = 0;  // max |a-b| (inf if any NaN pairs differ)
  double max_rel = 0;  // max over elements of |a-b| / max(|a|, |b|) (0/0 = 0)
  double rel_l2 = 0;   // ||a-b|| / max(||a||, ||b||) (0 if both are 0)
  double cosine = 1;   // <a,b> / (||a|| ||b||); 1 if both 0, 0 if one is 0
  int64_t not_close = 0;  // elements failing isclose
  bool identical = true;  // bitwise equal
  bool close() const { return not_close == 0; }
};

// Statistics of a against b (the reference); n elements each.
DiffStats Diff(const float* a, const float* b, int64_t n, double rtol,
               double atol);

struct TensorDiff {
  std::string name;
  Shape shape;
  bool buffer = false;  // running statistics, batch counters
  DiffStats stats;
};

struct LayerDiff {
  std::string path, type;
  Shape shape_a, shape_b;
  DiffStats stats;  // meaningful only when the shapes agree
};

struct TaskDiff {
  int classes = 0;
  int64_t n = 0;
  double acc_a = 0, acc_b = 0;
  double stored_acc_a = 0, stored_acc_b = 0;  // as recorded at training
  double agreement = 0;                       // share of equal predictions
  std::vector<double> class_acc_a, class_acc_b;
  std::vector<int64_t> confusion_a,
      confusion_b;  // classes x classes, row = truth
};

struct TierVerdict {
  std::string verdict;  // identical | close | differ
  std::string detail;
};

struct CompareReport {
  int64_t trial_id = 0;
  std::string arch, profile_a, profile_b;
  CompareOptions options;
  std::vector<TensorDiff> tensors;
  TierVerdict tier1;
  int64_t probe = 0;  // probe images used
  std::vector<LayerDiff> layers;
  std::string first_differing;  // first module not bitwise identical ("" none)
  std::string parted_at;        // first module not close ("" none)
  TierVerdict tier2;
  TaskDiff task;
  TierVerdict tier3;
};

// Compares the two models of stored trial `trial_id` (both need weights and
// stored profile definitions). InvalidArgument for bad options; NotFound /
// FailedPrecondition as LoadTrialSetup; Corruption if a weights file does
// not match its recorded hash.
Result<CompareReport> ComparePair(const Dataset& ds, int64_t trial_id,
                                  const CompareOptions& opt);

// JSON object (2-space indent) and a human-readable text rendering.
std::string CompareJson(const CompareReport& r);
std::string CompareText(const CompareReport& r);

// The text rendering's tables: tier 1 (tensor, shape, max_abs, max_rel,
// rel_l2, cosine, close), tier 2 (module, type, shape, max_abs, rel_l2,
// cosine, close; "<- parted" marks parted_at) and tier 3's per-class
// accuracies (class, acc_<A>, acc_<B>).
struct CompareTables {
  Table tensors, layers, classes;
};
CompareTables CompareTablesOf(const CompareReport& r);

// The row `compare --store` keeps (kind compare, the trial, a summary of the
// tier verdicts, CompareJson(r)).
AnalysisRecord CompareAnalysisRecord(const CompareReport& r);

}  // namespace xw

#endif  // XWIRES_API_COMPARE_H_
