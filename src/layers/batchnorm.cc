// Batch normalisation: the layer's entry points, the running statistics'
// update and the scale-shift epilogue; the per-channel reductions are
// batchnorm_stats.cc's (float) and batchnorm_acc64.cc's (double).
#include "xwires/core/batchnorm.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "batchnorm_acc64.h"
#include "batchnorm_stats.h"
#include "layer_util.h"
#include "src/fma_clones.h"
#include "src/fma_scalar.h"
#include "src/kernels/channel_chains.h"
#include "src/kernels/prefetcher.h"
#include "xwires/core/parallel.h"

namespace xw {

namespace {

using layers::ChannelLayout;
using layers::kChains;

// body(s0, s1) over [0, len) in segments of 64 floats, fetching the same
// segment of next_a and next_b (when not null) towards the cache first: a
// run a whole image ahead, which the hardware prefetchers do not follow.
template <typename F>
void SegmentsWithPrefetch(int64_t len, const float* next_a, const float* next_b, F&& body) {
  const int64_t segments = (len + 63) / 64;
  kernels::Prefetcher fetch_a(next_a, len, segments), fetch_b(next_b, len, segments);
  for (int64_t s0 = 0; s0 < len; s0 += 64) {
    fetch_a.Step();
    fetch_b.Step();
    body(s0, std::min(len, s0 + 64));
  }
}

// y[s] = x[s] * a + b (+ r[s], then ReLU) for s in [s0, s1), x * a + b fused
// (the kFma case of ScaleShiftEpilogue). Its own function for XW_FMA_CLONES:
// FmaF (src/fma_scalar.h) stays one vectorized instruction in a portable
// build on FMA hardware rather than a libm call per element, and is the
// exact emulation without FMA; fma is exactly rounded, so every clone gives
// the same bits.
template <bool kResidual, bool kRelu>
XW_FMA_CLONES void FusedScaleShiftRow(const float* xs, const float* rs, float a, float b,
                                      int64_t s0, int64_t s1, float* ys) {
  for (int64_t s = s0; s < s1; ++s) {
    float v = FmaF(xs[s], a, b);
    if constexpr (kResidual) v = v + rs[s];
    if constexpr (kRelu) v = v < 0.0f ? 0.0f : v;
    ys[s] = v;
  }
}

// y = x * a[j] + b[j] over channels c0 + j, j < k (two roundings, or one
// under kFma: FusedScaleShiftRow; the build never contracts), then + r (kResidual; one more rounding) and max(., 0)
// (kRelu, NaN passes as in ReluForward): AddReluForward's bits without its
// pass over y. Image by image over the k channels, whose rows are adjacent:
// one contiguous run per image, where a channel at a time read runs of one
// plane (256 bytes at 8x8) a whole image apart, which the hardware
// prefetchers do not follow; the next image's run is fetched meanwhile.
template <bool kResidual, bool kRelu, bool kFma>
void ScaleShiftEpilogue(const float* x, const float* r, const ChannelLayout& l, int64_t c0,
                        int k, const float* a, const float* b, float* y) {
  const int64_t image = l.c * l.s;
  for (int64_t n = 0; n < l.n; ++n) {
    for (int j = 0; j < k; ++j) {
      const int64_t base = (n * l.c + c0 + j) * l.s;
      const float* xs = x + base;
      const float* rs = kResidual ? r + base : nullptr;
      float* ys = y + base;
      const float aj = a[j], bj = b[j];
      const bool more = n + 1 < l.n;
      SegmentsWithPrefetch(l.s, more ? xs + image : nullptr,
                           more && kResidual ? rs + image : nullptr,
                           [&](int64_t s0, int64_t s1) {
                             if constexpr (kFma) {
                               FusedScaleShiftRow<kResidual, kRelu>(xs, rs, aj, bj, s0, s1, ys);
                             } else {
                               for (int64_t s = s0; s < s1; ++s) {
                                 float v = xs[s] * aj + bj;
                                 if constexpr (kResidual) v = v + rs[s];
                                 if constexpr (kRelu) v = v < 0.0f ? 0.0f : v;
                                 ys[s] = v;
                               }
                             }
                           });
    }
  }
}

template <bool kFma>
void ScaleShiftOf(const float* x, const BatchNormEpilogue& e, const ChannelLayout& l, int64_t c0,
                  int k, const float* a, const float* b, float* y) {
  const float* r = e.residual ? e.residual->data() : nullptr;
  if (r && e.relu) return ScaleShiftEpilogue<true, true, kFma>(x, r, l, c0, k, a, b, y);
  if (r) return ScaleShiftEpilogue<true, false, kFma>(x, r, l, c0, k, a, b, y);
  if (e.relu) return ScaleShiftEpilogue<false, true, kFma>(x, r, l, c0, k, a, b, y);
  ScaleShiftEpilogue<false, false, kFma>(x, r, l, c0, k, a, b, y);
}

void ScaleShift(const float* x, const BatchNormEpilogue& e, const ChannelLayout& l, int64_t c0,
                int k, const float* a, const float* b, bool fma, float* y) {
  if (fma) return ScaleShiftOf<true>(x, e, l, c0, k, a, b, y);
  ScaleShiftOf<false>(x, e, l, c0, k, a, b, y);
}

// dx[s] for s in [s0, s1) of one plane: ATen's `dy - mean_dy - dx`,
// contracted, times invstd and gamma. Its own function for XW_FMA_CLONES
// (FusedScaleShiftRow).
XW_FMA_CLONES void DxFused(const float* xs, const float* gs, float mean, float kj, float mj,
                           float invstd, float w, int64_t s0, int64_t s1, float* out) {
  for (int64_t s = s0; s < s1; ++s) out[s] = FmaF(-(xs[s] - mean), kj, gs[s] - mj) * invstd * w;
}

// beta - mean * a: ATen's `bias_v - mean * alpha`, contracted under fma.
float Shift(float beta, float mean, float a, bool fma) {
  return fma ? FmaF(-mean, a, beta) : beta - mean * a;
}


// ATen's running_var update under acc_type double: `momentum * unbiased_var
// + (1 - momentum) * running_var` with momentum a float and unbiased_var a
// double, so the first product and the sum are in double, the second in
// float.
float LerpWideNew(float r, float b, float m) {
  return static_cast<float>(static_cast<double>(m) * static_cast<double>(b) +
                            static_cast<double>((1.0f - m) * r));
}

float UpdateRunning(float r, float b, const BatchNormSpec& spec) {
  const float m = spec.momentum;
  if (spec.update == RunningUpdate::kSubtract) return r - (r - b) * m;
  return (1.0f - m) * r + m * b;
}

Status CheckParams(const char* op, const ChannelLayout& l, const Tensor& gamma,
                   const Tensor& beta) {
  XW_RETURN_IF_ERROR(layers::CheckShape(op, "gamma", gamma, {l.c}));
  return layers::CheckShape(op, "beta", beta, {l.c});
}

}  // namespace

Status BatchNormForwardTrain(const Tensor& x, const Tensor& gamma,
                             const Tensor& beta, const BatchNormSpec& spec,
                             const ReduceSpec& reduce, Tensor* y,
                             Tensor* running_mean, Tensor* running_var,
                             BatchNormCache* cache,
                             const BatchNormEpilogue& epilogue) {
  constexpr const char* kOp = "BatchNormForwardTrain";
  XW_ASSIGN_OR_RETURN(const ChannelLayout l, layers::ChannelLayoutOf(kOp, x));
  XW_RETURN_IF_ERROR(CheckParams(kOp, l, gamma, beta));
  XW_RETURN_IF_ERROR(layers::CheckNotNull(kOp, "y", y));
  XW_RETURN_IF_ERROR(layers::CheckNotNull(kOp, "cache", cache));
  if (epilogue.residual) {
    XW_RETURN_IF_ERROR(
        layers::CheckShape(kOp, "residual", *epilogue.residual, x.shape()));
    if (epilogue.residual == &x) {
      return Status::InvalidArgument(std::string(kOp) +
                                     ": residual must not alias x");
    }
  }
  if (running_mean)
    XW_RETURN_IF_ERROR(
        layers::CheckShape(kOp, "running_mean", *running_mean, {l.c}));
  if (running_var)
    XW_RETURN_IF_ERROR(
        layers::CheckShape(kOp, "running_var", *running_var, {l.c}));
  if (running_var && spec.unbiased_running_var && l.count() < 2) {
    return Status::InvalidArgument(
        std::string(kOp) + ": the unbiased running variance needs " +
        "more than one value per channel, input " + ShapeToString(x.shape()));
  }
  y->Resize(x.shape());
  cache->mean.Resize({l.c});
  cache->invstd.Resize({l.c});
  const float count = static_cast<float>(l.count());
  const bool acc64 = spec.accumulate == BatchNormAccumulate::kDouble;
  const double eps64 = layers::EpsAsWritten(spec.eps);
  cache->accumulate = spec.accumulate;
  cache->fma = spec.fma;
  // Channel groups of kChains: the vector kernels' groups, and the
  // interleaved scalar chains' where those do not run.
  ParallelFor(l.c, kernels::ChannelReduce8Order(reduce) ? kChains : 1, [&](int64_t c0, int64_t c1) {
    float mean[kChains], var_sum[kChains];
    const int k = static_cast<int>(c1 - c0);
    if (acc64) {
      layers::Acc64Stats({x.data(), l.n, l.c, l.s, c0, k}, mean, var_sum);
    } else {
      layers::FloatChannelStats(reduce, l, c0, k, x.data(), mean, var_sum);
    }
    float scale[kChains], shift[kChains];
    for (int j = 0; j < k; ++j) {
      const int64_t c = c0 + j;
      const float var = var_sum[j] / count;
      const float invstd =
          acc64 ? static_cast<float>(1.0 / std::sqrt(static_cast<double>(var) + eps64))
                : 1.0f / std::sqrt(var + spec.eps);
      scale[j] = gamma[c] * invstd;
      shift[j] = Shift(beta[c], mean[j], scale[j], spec.fma);
      cache->mean[c] = mean[j];
      cache->invstd[c] = invstd;
      if (running_mean)
        (*running_mean)[c] = UpdateRunning((*running_mean)[c], mean[j], spec);
      if (running_var) {
        const float stored =
            spec.unbiased_running_var ? var_sum[j] / (count - 1.0f) : var;
        (*running_var)[c] = acc64 && spec.update == RunningUpdate::kLerp
                                ? LerpWideNew((*running_var)[c], stored, spec.momentum)
                                : UpdateRunning((*running_var)[c], stored, spec);
      }
    }
    ScaleShift(x.data(), epilogue, l, c0, k, scale, shift, spec.fma, y->data());
  });
  return Status::OK();
}

Status BatchNormForwardEval(const Tensor& x, const Tensor& gamma,
                            const Tensor& beta, const Tensor& running_mean,
                            const Tensor& running_var,
                            const BatchNormSpec& spec, Tensor* y) {
  constexpr const char* kOp = "BatchNormForwardEval";
  XW_ASSIGN_OR_RETURN(const ChannelLayout l, layers::ChannelLayoutOf(kOp, x));
  XW_RETURN_IF_ERROR(CheckParams(kOp, l, gamma, beta));
  XW_RETURN_IF_ERROR(
      layers::CheckShape(kOp, "running_mean", running_mean, {l.c}));
  XW_RETURN_IF_ERROR(
      layers::CheckShape(kOp, "running_var", running_var, {l.c}));
  XW_RETURN_IF_ERROR(layers::CheckNotNull(kOp, "y", y));
  if (y != &x) y->Resize(x.shape());
  ParallelFor(l.c, kChains, [&](int64_t c0, int64_t c1) {
    float scale[kChains], shift[kChains];
    const int k = static_cast<int>(c1 - c0);
    for (int j = 0; j < k; ++j) {
      const int64_t c = c0 + j;
      const float invstd = 1.0f / std::sqrt(running_var[c] + spec.eps);
      scale[j] = gamma[c] * invstd;
      shift[j] = Shift(beta[c], running_mean[c], scale[j], spec.fma);
    }
    ScaleShift(x.data(), BatchNormEpilogue{}, l, c0, k, scale, shift, spec.fma, y->data());
  });
  return Status::OK();
}

Status BatchNormBackward(const Tensor& x, const Tensor& gamma, const Tensor& dy,
                         const BatchNormCache& cache, const ReduceSpec& reduce,
                         Tensor* dx, Tensor* dgamma, Tensor* dbeta) {
  constexpr const char* kOp = "BatchNormBackward";
  XW_ASSIGN_OR_RETURN(const ChannelLayout l, layers::ChannelLayoutOf(kOp, x));
  XW_RETURN_IF_ERROR(layers::CheckShape(kOp, "gamma", gamma, {l.c}));
  XW_RETURN_IF_ERROR(layers::CheckShape(kOp, "dy", dy, x.shape()));
  XW_RETURN_IF_ERROR(layers::CheckShape(kOp, "cache.mean", cache.mean, {l.c}));
  XW_RETURN_IF_ERROR(
      layers::CheckShape(kOp, "cache.invstd", cache.invstd, {l.c}));
  if (dx) dx->Resize(x.shape());
  if (dgamma) dgamma->Resize({l.c});
  if (dbeta) dbeta->Resize({l.c});
  const float count = static_cast<float>(l.count());
  const bool acc64 = cache.accumulate == BatchNormAccumulate::kDouble;
  const bool fma = cache.fma;
  ParallelFor(l.c, kernels::ChannelReduce8Order(reduce) ? kChains : 1, [&](int64_t c0, int64_t c1) {
    float sum_dy[kChains], dotp[kChains];
    double sum_dy64[kChains], dotp64[kChains];
    const int k = static_cast<int>(c1 - c0);
    if (acc64) {
      layers::Acc64Grads({x.data(), l.n, l.c, l.s, c0, k}, dy.data(), cache.mean.data() + c0,
                         reduce, sum_dy64, dotp64);
    } else {
      layers::FloatChannelGrads(reduce, l, c0, k, x.data(), dy.data(), cache.mean.data() + c0,
                                sum_dy, dotp);
    }
    float kk[kChains], mean_dy[kChains];
    for (int j = 0; j < k; ++j) {
      const int64_t c = c0 + j;
      const float invstd = cache.invstd[c];
      if (acc64) {  // ATen: float(dotp) * invstd * invstd / N, float(sum / N)
        sum_dy[j] = static_cast<float>(sum_dy64[j]);
        dotp[j] = static_cast<float>(dotp64[j]);
        if (dgamma) (*dgamma)[c] = static_cast<float>(dotp64[j] * invstd);
        mean_dy[j] = static_cast<float>(sum_dy64[j] / static_cast<double>(l.count()));
      } else {
        if (dgamma) (*dgamma)[c] = dotp[j] * invstd;
        mean_dy[j] = sum_dy[j] / count;
      }
      if (dbeta) (*dbeta)[c] = sum_dy[j];
      kk[j] = dotp[j] * invstd * invstd / count;
    }
    if (!dx) return;
    // PyTorch's CPU form: dx = (dy - mean(dy) - (x - mean) * k) * invstd *
    // gamma. Image by image over the group's adjacent rows, as ScaleShift.
    const int64_t image = l.c * l.s;
    for (int64_t n = 0; n < l.n; ++n) {
      for (int j = 0; j < k; ++j) {
        const int64_t c = c0 + j, base = (n * l.c + c) * l.s;
        const float mean = cache.mean[c], invstd = cache.invstd[c], w = gamma[c];
        const float kj = kk[j], mj = mean_dy[j];
        float* out = dx->data() + base;
        const float* xs = x.data() + base;
        const float* gs = dy.data() + base;
        const bool more = n + 1 < l.n;
        SegmentsWithPrefetch(l.s, more ? xs + image : nullptr, more ? gs + image : nullptr,
                             [&](int64_t s0, int64_t s1) {
                               if (fma) {
                                 DxFused(xs, gs, mean, kj, mj, invstd, w, s0, s1, out);
                               } else {
                                 for (int64_t s = s0; s < s1; ++s)
                                   out[s] = (gs[s] - mj - (xs[s] - mean) * kj) * invstd * w;
                               }
                             });
      }
    }
  });
  return Status::OK();
}

}  // namespace xw
