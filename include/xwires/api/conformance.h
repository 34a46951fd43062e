// Conformance of the numerics profiles with the frameworks they model, run
// on this machine (`xwires conformance`, tests/conformance/).
//
// For each framework and architecture: xwires initialises the model under
// the framework's profile (seed 0), writes those weights and the first
// steps x 50 training images of scikit-learn's handwritten digits
// (scripts/make_digits.py, MNIST IDX files), and the framework's own runner
// (a subprocess) loads the same weights and trains `steps` Adam steps on the
// same batches in the same order (lr 1e-3, eps 1e-2, no shuffle), writing
// every weight and buffer after each step. xwires trains the same steps on
// every requested SIMD target and compares every tensor after each step:
//   tfjs    TensorFlow.js 4.22.0's Keras layers (tests/conformance/
//           tfjs_steps.js, pure-JS CPU backend) against TfjsProfile():
//           simple_cnn, resnet20, vgg11;
//   pytorch PyTorch 1.13 (Debian python3-torch, tests/conformance/
//           torch_steps.py) against the `torch` profile: mlp, simple_cnn,
//           resnet20, vgg11; plus the logits of the models loaded from the
//           initial and the final weights (xwires' Predict, which
//           `xwires predict` runs, against the package's torch twin).
// A framework whose runner cannot start (node or @tensorflow/tfjs, python3
// or torch, python3-sklearn missing) is skipped with a message saying how
// to install it. Thread-safety: one call at a time per process (it switches
// the process's SIMD target, see simd_target.h).
#ifndef XWIRES_API_CONFORMANCE_H_
#define XWIRES_API_CONFORMANCE_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "xwires/core/status.h"
#include "xwires/trainers/profile.h"

namespace xw {

// The error measure: for each tensor, max |xwires - framework| over the
// largest element of its module's tensors in the framework's state (the
// module of "layer1.0.bn1.bias" is "layer1.0.bn1"), so that a bias or BN
// shift that starts at zero is measured on its layer's scale (BN: gamma = 1)
// rather than on its first updates; the row reports the worst tensor.
//
// The error bound after `step` Adam steps:
//   bound(step) = kConformanceUlpsPerStep * step * 2^-23
//                 + 2 * max(r(step), g(step)),
// r(step) = how far the framework's own float32 run is from the same steps
// in float64 with the float32 run's ReLU decisions (measured the same way;
// PyTorch only: TF.js's CPU backend has
// no float64, r = 0 there), g(step) = how far xwires' own run moves from
// itself when its initial weights move by one ulp, its ReLUs shadowed by
// the same framework decisions (the largest over kConformancePerturbedRuns
// runs, measured on the first target).
// Why a few ulps per step. With lr 1e-3 and eps 1e-2 an Adam step moves a
// weight by at most lr = 1e-3, and its sensitivity to the gradient is at
// most lr/eps = 0.1 (d/dg of lr*g/(|g|+eps)), so each step adds to the
// difference of two implementations: the final rounding of p + update
// (half an ulp of max|p| on each side: one unit of 2^-23), the gradients'
// summation-order differences scaled by 0.1 (a few ulps of the gradient,
// which is at most ~|p| here: under one unit) and the BN running statistics'
// moving update (0.01 or 0.1 of a batch statistic whose summation order
// differs: under one unit). Differences carried from earlier steps are
// scaled by the steps' Jacobians, close to 1 at this learning rate, so they
// add rather than grow: c = 4 units per step leaves room for those three and
// one more for the forward pass's reordering.
// Why the ReLUs are shadowed. A ReLU whose input lies within rounding of
// zero decides by the accident of a summation order: the two sides' forward
// passes agree to an ulp, but one passes that element's gradient and the
// other drops it, so the gradients differ by a whole element's contribution
// (1e-3 relative), not by ulps, and the weights jump apart (the tf family's
// ResNet-20 against TF.js at step 3: layer2.1's output, image 36, channel
// 7, (5, 9), -5.6e-7 there and +4.8e-7 here, moved the weights 2e-5 apart;
// PyTorch's own float32 and float64 runs of ResNet-20 differ by 1.3e-5
// after one step for the same reason). That is not a difference of meaning,
// so the checks take it out: each runner records the input z of every ReLU
// of its training forward passes (relu.xwt), and xwires' training follows
// the framework's decision wherever they differ and |z| is within
// kConformanceShadowTolerance of the call's largest |z| (TrainOptions::
// relu_shadow; api/conformance_shadow.h). A differing decision further from
// zero is left alone and shows in the error. PyTorch's float64 run takes
// every decision of its float32 run, and the one-ulp runs behind g take the
// same framework decisions as the unperturbed run, so r and g, too, measure
// arithmetic under fixed decisions. Each row counts the decisions aligned.
// Why the second term. The first term holds where the problem is well
// conditioned. Where it amplifies rounding (PyTorch's BN eps 1e-5 over
// channels of near-constant activations), two implementations that are
// each as accurate as the framework may differ by twice the amplified
// rounding error, whatever their arithmetic's meaning; r (PyTorch) and g
// (both; TF.js has no float64) measure that amplification.
// What the checks can tell apart. A change of meaning (BN eps 1e-3 ->
// 1.1e-3, TF 'same' padding made symmetric, Adam's eps placement) moves
// the weights 3e-3 to 1e-2 at step 1, far above every bound. With the ReLUs
// shadowed, every architecture's error, ResNet-20's included, is a few ulps
// per step against both frameworks, and so is every bound but the tf
// family's ResNet-20 after step 2, where g still grows (2e-5 at step 3:
// its one-ulp runs drift from TF.js's decisions faster than xwires' own
// run does; docs/profiles.md, "Conformance").
inline constexpr double kConformanceUlpsPerStep = 4.0;
// Logits of a loaded model: one forward pass, each output a sum of terms
// whose order differs between implementations. Relative to max |logit|,
// bound = kConformanceLogitUlpsPerLayer * layers * 2^-23, layers = the
// weight layers on the longest path (mlp 3, simple_cnn 4, resnet20 19 + fc,
// vgg11 11): each layer's reordered sums add a few ulps of its output.
inline constexpr double kConformanceLogitUlpsPerLayer = 4.0;
// Runs behind g(step): each flips the direction of its one-ulp moves
// independently (Philox), with the ReLU decisions shadowed as above.
inline constexpr int kConformancePerturbedRuns = 3;

// ReLU shadowing's reach: a ReLU input z is within rounding of zero when
// |z| <= kConformanceShadowTolerance * max |z| over its call (2^-16).
inline constexpr double kConformanceShadowTolerance = 1.0 / 65536;

// The first term of the bound: kConformanceUlpsPerStep * step * 2^-23.
double ConformanceWeightBound(int64_t step);

struct ConformanceOptions {
  // "tfjs" and/or "pytorch"; empty: both.
  std::vector<std::string> frameworks;
  // Architectures; empty: every one the framework supports (above). An
  // architecture a framework does not support is an error.
  std::vector<std::string> archs;
  // SIMD targets xwires trains on, each against the same reference run;
  // empty: the one dispatched now; "all": every target of KernelTargets().
  std::vector<std::string> targets;
  int64_t steps = 4;  // Adam steps of batch 50, 1..30
  // Where scripts/make_digits.py and tests/conformance/ are; empty: the
  // source tree this binary was built from.
  std::string source_dir;
  // Scratch (data, exchange files, runner logs); empty: a fresh directory
  // under the system's temp dir, removed afterwards.
  std::string work_dir;
  std::string python = "/usr/bin/python3";  // Debian's, with torch and sklearn
  std::string node = "node";                // searched on PATH
  int threads = 0;                          // xwires' threads; 0: all
};

// One comparison. kind "weights": every tensor after Adam step `step`
// (worst = the tensor with the largest error); "logits": the loaded model's
// logits on the 297 test images, step 0 = the initial weights, step =
// steps: the framework's final weights.
struct ConformanceRow {
  std::string framework, arch, target, kind;
  int64_t step = 0;
  double error = 0, bound = 0;
  double reference_error = 0;  // r(step) in the bound (weights, pytorch)
  double ulp_growth = 0;       // g(step) in the bound (weights)
  // xwires' distance from PyTorch's float64 run of the same steps, measured
  // as error is (weights, pytorch; -1 elsewhere): next to reference_error,
  // PyTorch float32's distance from it, it tells whether xwires sits as
  // close to the exact answer as PyTorch does. Not part of the bound.
  double exact_error = -1;
  // ReLU shadowing at this step (weights; 0 elsewhere): xwires' ReLU
  // decisions aligned with the framework's (inputs within
  // kConformanceShadowTolerance of zero), the largest such |z| over the max
  // |z| of its call, and the differing decisions beyond the tolerance, left
  // as they were.
  int64_t shadowed = 0, unaligned = 0;
  double shadow_max_rel = 0;
  std::string worst;           // tensor name
  bool pass() const { return error <= bound; }
};

struct ConformanceSkip {
  std::string framework, reason;
};

struct ConformanceReport {
  std::vector<ConformanceRow> rows;
  std::vector<ConformanceSkip> skipped;
  std::string cpu;  // KernelTargetVariant() and the CPU model, for the record
  bool passed() const;  // every row within its bound
};

// The profile xwires trains under against TensorFlow.js: `tf` with the two
// places where TF.js 4.22.0 itself differs from tf.keras (docs/profiles.md,
// "Conformance"): Adam adds eps to sqrt(v_hat) as PyTorch does
// (adam.variant torch, float32 bias correction, no FMA), and BatchNorm
// stores the biased batch variance in its moving variance.
Result<Profile> TfjsProfile();

// Runs the checks. on_row (optional) sees each row as it is produced;
// on_skip each skipped framework. Errors: bad options, a runner that
// started but failed (its log's tail in the message), data that cannot be
// made. A row over its bound is not an error: see report.passed().
Result<ConformanceReport> RunConformance(
    const ConformanceOptions& options,
    const std::function<void(const ConformanceRow&)>& on_row = nullptr,
    const std::function<void(const ConformanceSkip&)>& on_skip = nullptr);

// The report as a text table: framework, arch, target, check, step, error,
// bound, pass/FAIL; then one line per skipped framework.
std::string FormatConformanceRow(const ConformanceRow& row);
std::string ConformanceTableHeader();

}  // namespace xw

#endif  // XWIRES_API_CONFORMANCE_H_
