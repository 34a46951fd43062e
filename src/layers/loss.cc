// Softmax cross-entropy in PyTorch's fused log-softmax form and in Keras'
// clipped-probability form; each sample's forward and gradient follow the
// op sequence (and rounding points) of the framework's own kernels.
#include "xwires/core/loss.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "xwires/core/parallel.h"

namespace xw {

namespace {

// Per-sample inputs and scratch for one row of K logits.
struct Row {
  const float* x;
  int32_t label;
  int64_t k;
  float inv_n;  // 1 / N, the batch-mean gradient seed
};

float RowMax(const float* x, int64_t k) {
  float m = x[0];
  for (int64_t j = 1; j < k; ++j) m = std::max(m, x[j]);
  return m;
}

// PyTorch: logp = x - max - log(sum exp(x - max)); NLL at the label.
// Backward (ATen): g = -1/N at the label, dx = g - exp(logp) * Sum(g).
float FusedRow(const Row& r, const ReduceSpec& reduce, float* buf, float* dx) {
  const float m = RowMax(r.x, r.k);
  for (int64_t j = 0; j < r.k; ++j) buf[j] = std::exp(r.x[j] - m);
  const float lse = std::log(Sum(buf, r.k, reduce));
  const float loss = -((r.x[r.label] - m) - lse);
  if (dx) {
    const float g = -r.inv_n;
    for (int64_t j = 0; j < r.k; ++j) buf[j] = j == r.label ? g : 0.0f;
    const float gsum = Sum(buf, r.k, reduce);
    for (int64_t j = 0; j < r.k; ++j) {
      const float logp = (r.x[j] - m) - lse;
      dx[j] = buf[j] - std::exp(logp) * gsum;
    }
  }
  return loss;
}

// Keras: q = softmax(x) (TF multiplies by 1 / sum), p = q / Sum(q),
// c = clip(p, eps, 1 - eps), loss = -log(c[label]). The gradient replays
// TF's autodiff: Neg, Log (g * 1/c), clip (pass iff eps <= p <= 1 - eps),
// RealDiv (to q and to Sum(q)), Sum's broadcast, then SoftmaxGrad
// (g_q - Dot(g_q, q)) * q.
float ClippedRow(const Row& r, float eps, const ReduceSpec& reduce, float* q,
                 float* g, float* dx) {
  const float m = RowMax(r.x, r.k);
  for (int64_t j = 0; j < r.k; ++j) q[j] = std::exp(r.x[j] - m);
  const float inv = 1.0f / Sum(q, r.k, reduce);
  for (int64_t j = 0; j < r.k; ++j) q[j] = q[j] * inv;
  const float s = Sum(q, r.k, reduce);
  const float p = q[r.label] / s;
  const float hi = 1.0f - eps;
  const float c = std::min(std::max(p, eps), hi);
  const float loss = -std::log(c);
  if (dx) {
    const bool passes = p >= eps && p <= hi;
    const float g_c = -r.inv_n * (1.0f / c);
    const float g_p = passes ? g_c : 0.0f;
    // d(q_l / s)/dq_j = [j == l] / s;  d(q_l / s)/ds = (-q_l / s) / s.
    const float g_s = g_p * ((-q[r.label] / s) / s);
    for (int64_t j = 0; j < r.k; ++j)
      g[j] = (j == r.label ? g_p / s : 0.0f) + g_s;
    const float dot = Dot(g, q, r.k, reduce);
    for (int64_t j = 0; j < r.k; ++j) dx[j] = (g[j] - dot) * q[j];
  }
  return loss;
}

}  // namespace

Result<float> SoftmaxCrossEntropy(const Tensor& logits, const int32_t* labels,
                                  const LossSpec& spec,
                                  const ReduceSpec& reduce, Tensor* dlogits,
                                  std::vector<float>* per_sample) {
  if (logits.rank() != 2 || logits.dim(0) < 1 || logits.dim(1) < 1) {
    return Status::InvalidArgument(
        "SoftmaxCrossEntropy: logits must be [N, K] with N, K >= 1, got " +
        ShapeToString(logits.shape()));
  }
  if (labels == nullptr)
    return Status::InvalidArgument("SoftmaxCrossEntropy: labels is null");
  const int64_t n = logits.dim(0), k = logits.dim(1);
  for (int64_t i = 0; i < n; ++i) {
    if (labels[i] < 0 || labels[i] >= k) {
      return Status::InvalidArgument("SoftmaxCrossEntropy: label " +
                                     std::to_string(labels[i]) + " of sample " +
                                     std::to_string(i) + " is outside [0, " +
                                     std::to_string(k) + ")");
    }
  }
  if (spec.numerics == LossNumerics::kClippedSoftmax &&
      !(spec.clip_eps > 0.0f && spec.clip_eps < 0.5f)) {
    return Status::InvalidArgument("SoftmaxCrossEntropy: clip_eps " +
                                   std::to_string(spec.clip_eps) +
                                   " is outside (0, 0.5)");
  }
  if (dlogits) dlogits->Resize(logits.shape());
  std::vector<float> losses(n);
  const float inv_n = 1.0f / static_cast<float>(n);
  ParallelFor(n, GrainFor(n, 8), [&](int64_t b, int64_t e) {
    std::vector<float> q(k), g(k);
    for (int64_t i = b; i < e; ++i) {
      const Row row{logits.data() + i * k, labels[i], k, inv_n};
      float* dx = dlogits ? dlogits->data() + i * k : nullptr;
      losses[i] =
          spec.numerics == LossNumerics::kFusedLogSoftmax
              ? FusedRow(row, reduce, q.data(), dx)
              : ClippedRow(row, spec.clip_eps, reduce, q.data(), g.data(), dx);
    }
  });
  const float mean = Sum(losses.data(), n, reduce) / static_cast<float>(n);
  if (per_sample) *per_sample = std::move(losses);
  return mean;
}

}  // namespace xw
