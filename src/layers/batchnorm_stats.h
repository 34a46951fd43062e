// Batch norm's per-channel reductions in float (BatchNormAccumulate::kFloat,
// xwires/core/batchnorm.h): the forward's mean and sum of squared deviations
// and the backward's Sum(dy) and Dot(x - mean, dy), for one worker's group
// of adjacent channels. Each channel's reduction runs over its (n, h, w)
// terms in order, read in place: the bits of xw::Sum / xw::Dot on the
// channel gathered into one buffer, whichever of the vector kernels, the
// interleaved scalar chains or the segmented loops computes it. Internal to
// the layers group; callers validate shapes first (ChannelLayoutOf).
#ifndef XWIRES_SRC_LAYERS_BATCHNORM_STATS_H_
#define XWIRES_SRC_LAYERS_BATCHNORM_STATS_H_

#include <cstdint>

#include "xwires/core/reduce.h"
#include "xwires/core/status.h"
#include "xwires/core/tensor.h"

namespace xw::layers {

// x viewed as [N, C, S] with S = H*W (rank 4) or 1 (rank 2).
struct ChannelLayout {
  int64_t n = 0, c = 0, s = 0;
  int64_t count() const { return n * s; }
};

// x's layout; InvalidArgument naming `op` for a rank other than 2 or 4 or
// an empty input.
Result<ChannelLayout> ChannelLayoutOf(const char* op, const Tensor& x);

// The most channels one group holds: the vector kernels' 8 lanes (and the
// interleaved scalar chains' count where those do not run).
constexpr int kChains = 8;

// Channels [c0, c0 + k) of x, k <= kChains, in the order of `reduce`:
// mean[j] = Sum(channel) / count, then var_sum[j] = Dot(channel - mean[j],
// channel - mean[j]). mean and var_sum hold k floats.
void FloatChannelStats(const ReduceSpec& reduce, const ChannelLayout& l, int64_t c0, int k,
                       const float* x, float* mean, float* var_sum);

// Channels [c0, c0 + k) of x and dy (same layout), k <= kChains:
// sum_dy[j] = Sum(dy's channel), dotp[j] = Dot(x's channel - mean[j], dy's
// channel). mean, sum_dy and dotp hold k floats.
void FloatChannelGrads(const ReduceSpec& reduce, const ChannelLayout& l, int64_t c0, int k,
                       const float* x, const float* dy, const float* mean, float* sum_dy,
                       float* dotp);

}  // namespace xw::layers

#endif  // XWIRES_SRC_LAYERS_BATCHNORM_STATS_H_
