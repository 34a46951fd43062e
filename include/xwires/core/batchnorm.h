// Batch normalisation, forward (train and eval) and backward.
//
// Statistics are per channel: over N*H*W for rank-4 NCHW input, over N for
// rank-2 [N, C] input. Shapes: x, y, dy, dx are [N, C] or [N, C, H, W];
// gamma, beta, running_mean, running_var, dgamma, dbeta and the cache
// tensors are [C].
//
// Numerics (the framework-visible choices are knobs in BatchNormSpec):
//  - mean = Sum(x_c) / count, var = Dot(x_c - mean, x_c - mean) / count
//    (two passes, biased). Under BatchNormAccumulate::kFloat both
//    reductions run through xw::Sum / xw::Dot with the caller's ReduceSpec
//    over the channel's values gathered in (n, h, w) row-major order;
//    ReduceSpec::fma applies to the variance. Under kDouble they follow
//    PyTorch's CPU kernel instead (see BatchNormAccumulate).
//  - invstd = 1 / std::sqrt(var + eps) in float (kDouble: in double).
//  - y = x * a + b with a = gamma * invstd and b = beta - mean * a, the
//    folded scale/shift form both PyTorch (CPU) and TensorFlow use; two
//    roundings per element (the build never contracts to FMA), one under
//    BatchNormSpec::fma.
//  - backward: dbeta = Sum(dy_c), dotp = Dot(x_c - mean, dy_c),
//    dgamma = dotp * invstd, and
//    dx = (dy - dbeta / count - (x - mean) * (dotp * invstd^2 / count)) *
//    (invstd * gamma) (PyTorch's CPU formula).
// Work is split over channels with xw::ParallelFor, so results are bitwise
// identical for any thread count. Calls are thread-compatible: concurrent
// calls on distinct output tensors are safe.
#ifndef XWIRES_CORE_BATCHNORM_H_
#define XWIRES_CORE_BATCHNORM_H_

#include "xwires/core/reduce.h"
#include "xwires/core/status.h"
#include "xwires/core/tensor.h"

namespace xw {

// How running statistics absorb a batch statistic b with momentum m.
enum class RunningUpdate {
  kLerp,      // r = (1 - m) * r + m * b        (PyTorch)
  kSubtract,  // r = r - (r - b) * m             (TF assign_moving_average)
};

// Precision of the per-channel accumulators (docs/profiles.md,
// "batch_norm.accumulate").
enum class BatchNormAccumulate {
  // float32 sums in the ReduceSpec's order (the header comment above).
  kFloat,
  // PyTorch 1.13's CPU kernels (aten/src/ATen/native/cpu/
  // batch_norm_kernel.cpp, acc_type<float, false> = double), NCHW path:
  // forward, sum += x and var_sum += float((x - mean) * (x - mean)) into one
  // double each, sequentially over (n, h, w); mean = float(sum / count);
  // invstd = float(1 / sqrt(double(float(var_sum) / count) + eps)) with eps
  // the double of its shortest decimal; running_var = float(m * double(
  // float(var_sum) / (count - 1)) + double((1 - m) * r)). Backward: per
  // image plane, Sum(dy) and Dot(x - mean, dy) in the ReduceSpec's float
  // order (a plane shorter than kLanes' width summed sequentially, as
  // ATen's vec_reduce_all does), each added to a double over the images;
  // mean(dy) = float(sum / count), dgamma = float(dotp * invstd).
  // Deterministic, the same bits on every SIMD target and thread count.
  kDouble,
};

struct BatchNormSpec {
  float eps = 1e-5f;
  // Weight of the NEW batch statistic (PyTorch convention). Keras'
  // momentum=0.99 is 0.01 here.
  float momentum = 0.1f;
  // PyTorch stores the unbiased variance (sum of squared deviations divided
  // by count - 1) in running_var; Keras stores the biased one (divided by
  // count). Normalisation always uses the biased batch variance.
  bool unbiased_running_var = true;
  RunningUpdate update = RunningUpdate::kLerp;
  // Default: float32 accumulators (TensorFlow, PyTorch on CUDA).
  BatchNormAccumulate accumulate = BatchNormAccumulate::kFloat;
  // One rounding where ATen's CPU kernel, compiled by GCC with FMA
  // (-ffp-contract=fast), contracts: b = fma(-mean, a, beta), y = fma(x, a,
  // b) (train and eval), and in backward dx = fma(-(x - mean), k, dy -
  // mean(dy)) * invstd * gamma. Default: false (two roundings each).
  bool fma = false;
};

// What the training forward pass saves for the backward pass; both [C].
struct BatchNormCache {
  Tensor mean;    // batch mean
  Tensor invstd;  // 1 / sqrt(biased batch var + eps)
  // How the forward accumulated and fused; the backward does the same.
  BatchNormAccumulate accumulate = BatchNormAccumulate::kFloat;
  bool fma = false;
};

// What the training forward applies to each normalised value as it writes
// it, instead of separate passes over y: the same bits as AddForward /
// ReluForward / AddReluForward run on y afterwards (each op rounds as it
// would alone), one pass over memory fewer per op.
struct BatchNormEpilogue {
  // Added to the normalised value (not owned; x's shape; may be y itself
  // but not x). Default: none.
  const Tensor* residual = nullptr;
  // Then max(., 0) with ReluForward's rule (NaN passes). Default: off.
  bool relu = false;
};

// Training-mode forward: normalises with the batch statistics and, when
// running_mean / running_var are non-null ([C], updated in place), folds the
// batch statistics into them, then applies `epilogue` to each value as it is
// written. y (required) is resized to x's shape; cache (required) is resized
// to [C] each. Returns InvalidArgument for a rank other than 2 or 4,
// mismatched [C] tensors, a residual not shaped like x, an empty batch, or a
// single value per channel when unbiased_running_var needs n/(n-1). y must
// not alias x.
Status BatchNormForwardTrain(const Tensor& x, const Tensor& gamma,
                             const Tensor& beta, const BatchNormSpec& spec,
                             const ReduceSpec& reduce, Tensor* y,
                             Tensor* running_mean, Tensor* running_var,
                             BatchNormCache* cache,
                             const BatchNormEpilogue& epilogue = {});

// Eval-mode forward: normalises with running_mean / running_var (spec.eps
// applies; momentum is unused). y is resized to x's shape and may alias x.
Status BatchNormForwardEval(const Tensor& x, const Tensor& gamma,
                            const Tensor& beta, const Tensor& running_mean,
                            const Tensor& running_var,
                            const BatchNormSpec& spec, Tensor* y);

// Backward of BatchNormForwardTrain given the input x, gamma, the upstream
// gradient dy (x's shape) and the cache of that forward call. Each of dx
// (x's shape), dgamma and dbeta ([C]) is resized and written when non-null.
// Outputs must not alias inputs.
Status BatchNormBackward(const Tensor& x, const Tensor& gamma, const Tensor& dy,
                         const BatchNormCache& cache, const ReduceSpec& reduce,
                         Tensor* dx, Tensor* dgamma, Tensor* dbeta);

}  // namespace xw

#endif  // XWIRES_CORE_BATCHNORM_H_
