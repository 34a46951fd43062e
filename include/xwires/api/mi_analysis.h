// Mutual information between a dataset's hyperparameters and its trials'
// divergence (`xwires mi`, the report's MI bars), per architecture.
//
// Variables: the typed hyperparameter columns lr, adam_eps, beta1, beta2,
// weight_decay, batch_size, epochs that take more than one known value in
// the group (constants carry no information), each alone and every pair of
// them. A variable set uses the trials where all its values and the
// divergence are known. Estimation: mutual_info.h (normalised, digitized
// into 0.1 bins or KSG, repeated with jitter, with a permutation null).
//
// Scale. A variable that a search draws log-uniformly (lr over [1e-8, 0.1],
// say) has nearly all its raw values in the top bin, so raw-scale bins see
// almost nothing of it; on a log scale its bins are evenly filled. kAuto (the
// default) takes log10 of a variable in a group when the searches that
// produced the group's trials sample it log-uniformly (their stored
// configs' "log" dimensions) and no such search samples it linearly; trials
// from no search (imported results, `xwires train`) do not vote, so a group
// of imported CrossedWires rows stays on the study's raw scale.
//
// Read-only; thread-safety as Dataset.
#ifndef XWIRES_API_MI_ANALYSIS_H_
#define XWIRES_API_MI_ANALYSIS_H_

#include <string>
#include <vector>

#include "xwires/api/mutual_info.h"
#include "xwires/core/status.h"
#include "xwires/dataset/query/table.h"
#include "xwires/dataset/store/dataset.h"

namespace xw {

enum class MiScale {
  kAuto,  // log10 where the group's searches sample log-uniformly (above)
  kRaw,   // raw values (the CrossedWires study's procedure)
  kLog,   // log10 of lr, adam_eps and weight_decay, whatever their source
};

struct MiAnalysisOptions {
  std::vector<std::string> archs;  // only these architectures ("" = every one)
  std::string where;               // filter language of query.h
  bool pairs = true;               // also every pair of variables
  MiScale scale = MiScale::kAuto;
  MiOptions mi;
};

struct MiRow {
  std::string group;     // architecture, or "all" over every architecture
  std::string variable;  // "lr", or "lr+adam_eps" for a pair
  std::string scale;     // "log" or "raw" per variable, "log+raw" for a pair
  MiEstimate estimate;
};

// One group per architecture, plus "all" when there are several. Rows of a
// group: single variables in column order, then pairs. InvalidArgument for a
// bad filter or options; NotFound if no trial has a known divergence.
// `trial_ids`, if given, receives the trials the estimate was computed over
// (those matching with a known divergence), ascending: what a stored
// result describes (`mi --store`).
Result<std::vector<MiRow>> ComputeDatasetMi(
    const Dataset& ds, const MiAnalysisOptions& opt,
    std::vector<int64_t>* trial_ids = nullptr);

// Columns: group, variable, scale, mi_mean, mi_std, mi_null, mi_corrected,
// p, n (MI in nats; mutual_info.h defines the null, the correction and p).
Table MiTable(const std::vector<MiRow>& rows);

// What the table's numbers are, for a line under it: the unit, estimator,
// repeats, shuffles and the meaning of mi_null, mi_corrected, p and scale.
std::string MiCaption(const MiAnalysisOptions& opt);

// One warning per group and variable count (single variables, pairs) whose
// binned estimates have too few samples for their bins (few_samples): n, the
// joint bins, and the plug-in bias (Bx - 1)(By - 1) / (2n) it implies.
std::vector<std::string> MiWarnings(const std::vector<MiRow>& rows);

// The stored form of a result: {"unit": "nats", "estimator", "repeats",
// "jitter", "k", "seed", "shuffles", "scale", "pairs", "archs", "where",
// "warnings", "rows": [{"group", "variable", "scale", "mi_mean", "mi_std",
// "mi_null", "mi_corrected", "p", "n", "few_samples"}, ...]} (a JSON object),
// and a one-line summary naming each group's most informative single
// variable by the bias-corrected estimate.
std::string MiResultJson(const std::vector<MiRow>& rows,
                         const MiAnalysisOptions& opt);
std::string MiSummary(const std::vector<MiRow>& rows,
                      const MiAnalysisOptions& opt);

// Names of the hyperparameter columns considered, in order.
const std::vector<std::string>& MiVariableNames();

// Value of hyperparameter column `name` (one of MiVariableNames()) of a
// trial; NaN if unknown (with `log`, its log10; NaN if not positive).
double TrialVariable(const TrialRow& t, const std::string& name,
                     bool log = false);

}  // namespace xw

#endif  // XWIRES_API_MI_ANALYSIS_H_
