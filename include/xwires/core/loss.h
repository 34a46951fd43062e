// Softmax cross-entropy over logits with integer labels, mean over the batch,
// in the two numerics the frameworks use.
//
// Shapes: logits and dlogits [N, K]; labels points to N int32 values in
// [0, K). Work is split over samples with xw::ParallelFor and each sample's
// sums run through xw::Sum with the caller's ReduceSpec; the batch mean is
// Sum(per-sample losses) / N. exp and log are std::exp / std::log on float.
// Results are therefore bitwise identical for any thread count.
// Thread-compatible.
#ifndef XWIRES_CORE_LOSS_H_
#define XWIRES_CORE_LOSS_H_

#include <cstdint>
#include <vector>

#include "xwires/core/reduce.h"
#include "xwires/core/status.h"
#include "xwires/core/tensor.h"

namespace xw {

enum class LossNumerics {
  // PyTorch cross_entropy: m = max(x); lse = log(Sum(exp(x - m)));
  // logp = x - m - lse; loss = -logp[label].
  // Gradient as ATen computes it (log_softmax backward of the NLL gradient
  // g = -1/N at the label): dx_k = g_k - exp(logp_k) * Sum(g).
  kFusedLogSoftmax,
  // Keras probability path (softmax output + sparse_categorical_crossentropy):
  // e = exp(x - max); q = e * (1 / Sum(e)) (TF's softmax multiplies by the
  // reciprocal); p = q / Sum(q); c = clip(p, eps, 1 - eps); loss = -log
  // c[label].
  // The gradient follows TF's autodiff chain through each op: the clip passes
  // gradient only where eps <= p <= 1 - eps, so a sample whose target
  // probability was clipped gets a zero gradient (its loss is capped at
  // -log(eps) ~= 16.118 for eps = 1e-7).
  kClippedSoftmax,
};

struct LossSpec {
  LossNumerics numerics = LossNumerics::kFusedLogSoftmax;
  float clip_eps = 1e-7f;  // kClippedSoftmax only (Keras backend epsilon)
};

// Returns the mean loss over the batch. dlogits, when non-null, is resized to
// [N, K] and receives d(mean loss)/d logits. per_sample, when non-null, is
// resized to N and receives each sample's loss. Returns InvalidArgument for
// logits that are not rank 2 with N, K >= 1, a null labels pointer, or a label
// outside [0, K) (the message names the sample and the label).
Result<float> SoftmaxCrossEntropy(const Tensor& logits, const int32_t* labels,
                                  const LossSpec& spec,
                                  const ReduceSpec& reduce, Tensor* dlogits,
                                  std::vector<float>* per_sample = nullptr);

}  // namespace xw

#endif  // XWIRES_CORE_LOSS_H_
