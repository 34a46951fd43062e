// Divergence attribution by ablation (`xwires attribute`): which numerics
// knobs of profile A vs profile B make a stored pair diverge.
//
// Knobs are the leaves of the two profiles' canonical JSON (profile.h) whose
// values differ, "name" excepted: "adam.variant", "kernels.reduce",
// "rng_stream", ... For each knob k two profiles are trained, with the
// trial's data, hyperparameters and seed:
//   A_k: A with k set to B's value (one knob switched from A towards B),
//   B_k: B with k set to A's value (= A with every knob but k switched).
// With acc(.) the test accuracy and D0 = |acc(A) - acc(B)| of the retrained
// baselines A and B:
//   alone_a  = |acc(A_k) - acc(A)|  divergence k makes on its own, from A;
//   remain_b = |acc(B_k) - acc(B)|  divergence that remains when all knobs
//                                   but k are switched (only k differs, in
//                                   B's context);
//   share    = (alone_a + remain_b) / (2 D0), the part of the divergence k
//              accounts for (> 1 when k's effect exceeds the pair's: knobs
//              interact; NaN when D0 = 0).
// Prediction disagreement on the test split (the share of test images whose
// predicted class differs) is reported next to each accuracy as a finer
// measure. The main knobs are those with share >= 0.5, else the single
// largest.
//
// Noise floor: alone_a and remain_b each compare two single runs, which
// differ by chance alone (training is chaotic). When the trial has replicas
// of this profile pair (`xwires replicate`; the latest stored statistics),
// sigma = their noise_sd (sqrt((s_A^2 + s_B^2)/2), one run's accuracy sd)
// and the threshold T = F_t,df^-1(0.975) sqrt(2) sigma, df = K_A + K_B - 2,
// is the 95% half-width of the difference of two independent runs. A knob's
// beyond_noise is "both" when alone_a > T and remain_b > T, "alone" or
// "remains" when only that one is, "no" when neither, and "-" without
// replicas (docs/analysis.md).
//
// Runs (2 baselines + 2 per knob) train in parallel: `jobs` worker threads,
// each under its own ThreadScope of `threads` threads. TrainProfile is a pure
// function of its inputs, so the results do not depend on jobs or threads.
// The baselines are checked against the stored weights' sha256
// ("reproduced"); a mismatch (other build or data) is reported, and the
// retrained baselines are used throughout.
//
// Thread-safety: as Dataset.
#ifndef XWIRES_API_ATTRIBUTE_H_
#define XWIRES_API_ATTRIBUTE_H_

#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "xwires/core/status.h"
#include "xwires/dataset/store/analysis.h"
#include "xwires/dataset/store/dataset.h"
#include "xwires/dataset/query/table.h"
#include "xwires/trainers/profile.h"

namespace xw {

// A profile knob on which a and b differ: its JSON path and both values
// (JSON text).
struct Knob {
  std::string path;  // "adam.variant"
  std::string a_value, b_value;
};

// Knobs of a vs b in canonical key order.
std::vector<Knob> DifferingKnobs(const Profile& a, const Profile& b);

// `base` with knob `path` set to `value_json`; the name becomes
// base.name + "+" + path. InvalidArgument if the result is not a valid
// profile or the path does not exist.
Result<Profile> SwitchKnob(const Profile& base, const std::string& path,
                           const std::string& value_json);

struct AttributeOptions {
  std::string profile_a, profile_b;  // "" = the trial's first / second model
  std::vector<std::string> knobs;    // only these ("" = every differing knob)
  int jobs = 0;                      // parallel trainings (0: min(runs, cores))
  int threads = 0;                   // threads per training (0: cores / jobs)
  // Called on the calling thread after each finished run (done, total, label).
  std::function<void(int, int, const std::string&)> on_run;
};

struct AttributionRun {
  std::string knob;        // "" for baselines
  std::string direction;   // baseline | a_to_b | b_to_a
  std::string profile;     // trained profile's name
  std::string value_json;  // the switched knob's value
  std::string status;      // ok | diverged
  double test_acc = 0, test_loss = 0;
  double disagree_a = 0, disagree_b = 0;  // prediction disagreement vs A, B
  std::string weights_sha256;
  double wall_time_s = 0;
};

struct KnobEffect {
  Knob knob;
  double acc_a_switched = 0, acc_b_switched = 0;  // acc(A_k), acc(B_k)
  double alone_a = 0, remain_b = 0, share = 0;
  double disagree_alone_a = 0;   // A_k vs A
  double disagree_remain_b = 0;  // B_k vs B
  std::string beyond_noise = "-";  // both | alone | remains | no | - (above)
};

struct AttributionReport {
  int64_t trial_id = 0;
  std::string arch, profile_a, profile_b;
  double stored_divergence = 0;
  double acc_a = 0, acc_b = 0, divergence = 0;  // retrained baselines
  double disagree_ab = 0;                       // A vs B predictions
  bool reproduced_a = false, reproduced_b = false;
  // The noise floor (above): NaN / 0 / "" without replicas of the pair.
  double noise_sd = NAN, noise_threshold = NAN;
  int64_t noise_df = 0;
  std::string noise_family;
  std::vector<KnobEffect> knobs;  // by share, largest first
  std::vector<std::string> main_knobs;
  std::vector<AttributionRun>
      runs;  // baselines first, then per knob a_to_b, b_to_a
  std::string summary;
};

// Attributes the divergence of stored trial `trial_id` (two models with
// stored profile definitions; imported external pairs cannot be re-run).
// InvalidArgument for bad options or unknown --knob names; FailedPrecondition
// when the profiles do not differ.
Result<AttributionReport> AttributeDivergence(const Dataset& ds,
                                              int64_t trial_id,
                                              const AttributeOptions& opt);

// JSON object (2-space indent) and a text table.
std::string AttributionJson(const AttributionReport& r);
std::string AttributionText(const AttributionReport& r);

// The per-knob table of AttributionText (the CLI's columns: knob, A value,
// B value, acc A_k, acc B_k, alone from A, remains (only k differs), share,
// disagree A_k/A, disagree B_k/B, beyond noise), from a report or from its stored JSON
// (AttributionJson; InvalidArgument if it is not such a document). The HTML
// report shows the same table.
Table AttributionKnobTable(const AttributionReport& r);
Result<Table> AttributionKnobTableFromJson(const std::string& json);

// One row per retraining: knob, direction, profile, value, status, test_acc,
// test_loss, disagree_a, disagree_b, weights_sha256, wall_s.
Table AttributionRunTable(const AttributionReport& r);

// The row `attribute` stores (kind attribute, the trial, the summary,
// AttributionJson(r), one run per retraining).
AnalysisRecord AttributionAnalysisRecord(const AttributionReport& r);

}  // namespace xw

#endif  // XWIRES_API_ATTRIBUTE_H_
