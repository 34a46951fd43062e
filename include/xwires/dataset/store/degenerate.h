// Degenerate models: the facts every producer of a trial records, and the
// two flags derived from them (docs/analysis.md, "Degenerate models"):
//   collapsed   the model's loss became non-finite or exploded: its status is
//               "diverged", or a recorded loss (any epoch's, or the final
//               train / test loss) is non-finite or above
//               stats::kExplodingLossMultiple x ln(k) (stats::LossExploded);
//   at_chance   its test accuracy is within 3 binomial standard errors of
//               chance on the trial's test set, or below (stats::AtChance).
// The formulas live once in the significance library (significance.h); the
// replicas' collapse rule uses the same AtChance. A trial is flagged when any
// of its models is.
//
// Facts, in the trial's extra_json (written by the trainer, the search and
// the CrossedWires import before the trial is stored, so bundles carry them):
//   "test_set":  {"classes": k, "examples": n}
//   "loss_peak": {"<profile>": the largest recorded loss of that model, or
//                 "nan" / "inf" when a recorded loss was non-finite}
// Trials stored without them (older datasets, foreign bundles) fall back to
// the test set named by data_spec and hparams_json.test_limit (synthetic:
// 10 classes, 1000 examples; cifar10, mnist, fashion-mnist: 10 and 10,000;
// cifar100: 100 and 10,000; a smaller test_limit wins), and to the final
// train / test losses; an unknown test set or accuracy leaves a flag unknown.
//
// Pure functions; thread-safe.
#ifndef XWIRES_DATASET_STORE_DEGENERATE_H_
#define XWIRES_DATASET_STORE_DEGENERATE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "xwires/dataset/store/dataset.h"
#include "xwires/dataset/store/run_record.h"

namespace xw {

// The largest of `losses`, skipping NaN when nan_is_unknown (trainer curves,
// where NaN means "not measured"); otherwise a NaN is a recorded non-finite
// loss (CrossedWires loss lists) and gives NaN. Empty (or all skipped):
// nullopt.
std::optional<double> LossPeak(const std::vector<double>& losses,
                               bool nan_is_unknown);

// Adds "test_set" and "loss_peak" to t->extra_json (kept as a JSON object;
// other keys untouched). peaks[i] is model i's peak (nullopt: no loss known);
// without `peaks`, each model's peak is LossPeak over its curves' losses and
// final losses, NaN skipped.
void RecordDegeneracyFacts(
    TrialRecord* t, int num_classes, int64_t test_examples,
    const std::vector<std::optional<double>>* peaks = nullptr);

// Test set of a stored trial: classes 0 / examples 0 when unknown.
struct TestSetSize {
  int classes = 0;
  int64_t examples = 0;
};
TestSetSize TestSetOfTrial(const TrialRow& t);

// One model's flags: 1, 0, or -1 when unknown.
struct ModelFlags {
  int collapsed = -1;
  int at_chance = -1;
};
// Flags of each model of `t`, in t.models order (a record before it is
// stored, as the search sees it, or a stored row).
std::vector<ModelFlags> DegenerateFlags(const TrialRecord& t);
std::vector<ModelFlags> DegenerateFlags(const TrialRow& t);
// True if any model of the trial is collapsed or at chance.
bool IsDegenerate(const std::vector<ModelFlags>& models);
// The trial's flags: 1 if any model's is, else 0 if any is known, else -1.
ModelFlags TrialFlags(const std::vector<ModelFlags>& models);

// The query fields `collapsed` and `at_chance` compute the same flags in
// SQL through the function xw_model_flag (dataset/store/degenerate_sql.h),
// which calls ModelFlagOf.

// One model's flag from its stored values (NaN = unknown; peak: nullopt =
// none recorded, NaN = non-finite recorded).
int ModelFlagOf(bool at_chance, const std::string& status, double test_acc,
                double train_loss, double test_loss,
                std::optional<double> peak, TestSetSize test_set);

// Test set from data_spec and test_limit (-1: whole split) when the trial
// recorded none.
TestSetSize TestSetOfSpec(const std::string& data_spec, int64_t test_limit);

}  // namespace xw

#endif  // XWIRES_DATASET_STORE_DEGENERATE_H_
