// Batch norm's float reductions per channel (batchnorm_stats.h): the vector
// kernels for a full group where the target runs them, else interleaved
// scalar chains (sequential order) or the segmented loops (other orders).
#include "batchnorm_stats.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "src/fma_scalar.h"
#include "src/kernels/channel_chains.h"
#include "src/kernels/conv_internal.h"

namespace xw::layers {

Result<ChannelLayout> ChannelLayoutOf(const char* op, const Tensor& x) {
  if (x.rank() != 2 && x.rank() != 4) {
    return Status::InvalidArgument(std::string(op) +
                                   ": x must be [N, C] or [N, C, H, W], got " +
                                   ShapeToString(x.shape()));
  }
  ChannelLayout l{x.dim(0), x.dim(1), x.rank() == 4 ? x.dim(2) * x.dim(3) : 1};
  if (l.count() == 0 || l.c == 0) {
    return Status::InvalidArgument(std::string(op) + ": empty input " +
                                   ShapeToString(x.shape()));
  }
  return l;
}

namespace {

// Strictly sequential sums over the (n, s) order of up to kChains channels at
// once, read in place: acc[j] = fold of term(acc, j, p, q) over channel
// c0 + j, p and q the channel's values in x and y (q = 0 when y is null).
// Each channel is still one chain in index order (the same bits as gathering
// it and calling xw::Sum / xw::Dot), but the chains interleave, so the adder
// latency of one chain hides behind the others. A full group goes through
// blocks transposed to [pixel][channel] (the dispatched transpose), where the
// compiler advances all kChains chains with one vector operation per pixel.
// These are the fallback of GroupStats below (partial groups, planes under 8
// pixels, targets without 8-float vectors).
constexpr int64_t kPixelBlock = 64;

// Two chains per channel in one sweep (acc1 from term1, acc2 from term2),
// each the chain SequentialChains would give: x and y are read and
// transposed once and the two chains hide each other's adder latency.
template <typename Term1, typename Term2>
void SequentialChainPair(const ChannelLayout& l, int64_t c0, int k, const float* x,
                         const float* y, const Term1& term1, float* acc1, const Term2& term2,
                         float* acc2) {
  float a[kChains] = {}, b[kChains] = {};
  if (k == kChains && l.s >= 16) {
    alignas(64) float tx[kPixelBlock * kChains], ty[kPixelBlock * kChains] = {};
    for (int64_t n = 0; n < l.n; ++n) {
      const int64_t base = (n * l.c + c0) * l.s;
      for (int64_t s0 = 0; s0 < l.s; s0 += kPixelBlock) {
        const int64_t w = std::min(kPixelBlock, l.s - s0);
        kernels::TransposeToPanel(x + base + s0, l.s, w, kChains, tx);
        if (y) kernels::TransposeToPanel(y + base + s0, l.s, w, kChains, ty);
        for (int64_t i = 0; i < w; ++i) {
          for (int j = 0; j < kChains; ++j) {
            a[j] = term1(a[j], j, tx[i * kChains + j], ty[i * kChains + j]);
            b[j] = term2(b[j], j, tx[i * kChains + j], ty[i * kChains + j]);
          }
        }
      }
    }
  } else {
    for (int64_t n = 0; n < l.n; ++n) {
      const int64_t base = (n * l.c + c0) * l.s;
      for (int64_t s = 0; s < l.s; ++s) {
        for (int j = 0; j < k; ++j) {
          const int64_t i = base + j * l.s + s;
          a[j] = term1(a[j], j, x[i], y ? y[i] : 0.0f);
          b[j] = term2(b[j], j, x[i], y ? y[i] : 0.0f);
        }
      }
    }
  }
  for (int j = 0; j < k; ++j) acc1[j] = a[j];
  if (acc2) {
    for (int j = 0; j < k; ++j) acc2[j] = b[j];
  }
}

// One chain per channel over x (the second of the pair is constant and
// folds away).
template <typename Term>
void SequentialChains(const ChannelLayout& l, int64_t c0, int k, const float* x,
                      const Term& term, float* acc) {
  SequentialChainPair(l, c0, k, x, nullptr, term, acc,
                      [](float, int, float, float) { return 0.0f; }, nullptr);
}

// `kind` over channels [c0, c0 + kChains) of x (and y) on the vector
// kernels, in the order of r: the bits of Sum / Dot on each gathered
// channel. False (nothing computed) where they do not run.
bool GroupStats(kernels::ChainKind kind, const ReduceSpec& r, const ChannelLayout& l,
                int64_t c0, const float* x, const float* y, const float* shift, float* acc1,
                float* acc2) {
  return kernels::ChannelReduce8(kind, r, x + c0 * l.s, y ? y + c0 * l.s : nullptr, l.n,
                                 l.c * l.s, l.s, shift, acc1, acc2);
}

inline float DotAcc(float acc, float p, float q, bool fma) {
  return fma ? FmaF(p, q, acc) : acc + p * q;
}

}  // namespace

void FloatChannelStats(const ReduceSpec& reduce, const ChannelLayout& l, int64_t c0, int k,
                       const float* x, float* mean, float* var_sum) {
  const float count = static_cast<float>(l.count());
  if (k == kChains &&
      GroupStats(kernels::ChainKind::kSum, reduce, l, c0, x, nullptr, nullptr, mean, nullptr)) {
    for (int j = 0; j < k; ++j) mean[j] /= count;
    GroupStats(kernels::ChainKind::kShiftedSq, reduce, l, c0, x, nullptr, mean, var_sum,
               nullptr);
  } else if (reduce.order == ReduceOrder::kSequential) {
    SequentialChains(l, c0, k, x, [](float a, int, float p, float) { return a + p; }, mean);
    for (int j = 0; j < k; ++j) mean[j] /= count;
    SequentialChains(l, c0, k, x,
                     [mean, fma = reduce.fma](float a, int j, float p, float) {
                       const float d = p - mean[j];
                       return DotAcc(a, d, d, fma);
                     },
                     var_sum);
  } else {  // in place, the bits of Sum / Dot on the gathered channel
    for (int j = 0; j < k; ++j) {
      Segmented xs{x + (c0 + j) * l.s, l.s, l.c * l.s, 0.0f};
      mean[j] = SegmentedSum(xs, l.count(), reduce) / count;
      xs.shift = mean[j];
      var_sum[j] = SegmentedDot(xs, xs, l.count(), reduce);
    }
  }
}

void FloatChannelGrads(const ReduceSpec& reduce, const ChannelLayout& l, int64_t c0, int k,
                       const float* x, const float* dy, const float* mean, float* sum_dy,
                       float* dotp) {
  if (k == kChains &&
      GroupStats(kernels::ChainKind::kSumAndDot, reduce, l, c0, x, dy, mean, sum_dy, dotp)) {
    // The two reductions per channel, 8 channels per vector.
  } else if (reduce.order == ReduceOrder::kSequential) {
    SequentialChainPair(
        l, c0, k, x, dy, [](float a, int, float, float g) { return a + g; }, sum_dy,
        [mean, fma = reduce.fma](float a, int j, float p, float g) {
          return DotAcc(a, p - mean[j], g, fma);
        },
        dotp);
  } else {  // in place, the bits of Sum / Dot on the gathered channel
    for (int j = 0; j < k; ++j) {
      const Segmented xs{x + (c0 + j) * l.s, l.s, l.c * l.s, mean[j]};
      const Segmented gs{dy + (c0 + j) * l.s, l.s, l.c * l.s, 0.0f};
      SegmentedSumAndDot(xs, gs, l.count(), reduce, &sum_dy[j], &dotp[j]);
    }
  }
}

}  // namespace xw::layers
