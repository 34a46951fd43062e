// Internal: batch norm's statistics for 8 channels at once, on the
// dispatched SIMD target (channel_chains.cc). Lane j of an 8-float vector
// holds channel j's reduction over its (n, s) terms, in the order of the
// profile (sequential, lanes8 or pairwise); blocks of 8 pixels are
// transposed in registers, so a vector operation advances all 8 channels by
// one term. The bits are those of the scalar loops on every target.
#ifndef XWIRES_SRC_KERNELS_CHANNEL_CHAINS_H_
#define XWIRES_SRC_KERNELS_CHANNEL_CHAINS_H_

#include <cstdint>

#include "xwires/core/reduce.h"

namespace xw {
namespace kernels {

// What a chain accumulates per term, p from x and g from y (channel j):
enum class ChainKind {
  kSum,        // acc1 = acc1 + p
  kShiftedSq,  // d = p - shift[j]; acc1 = acc1 + d * d (fma: one rounding)
  kSumAndDot,  // acc1 = acc1 + g; acc2 = acc2 + (p - shift[j]) * g (fma: one rounding)
};

// Channels j < 8 of an [n, C, s] tensor: channel j of image i starts at
// x + i * image_stride + j * s (y likewise, kSumAndDot only). chains = 1:
// one chain per channel over its terms in (n, s) order (sequential);
// chains = 8 (s a multiple of 8): reduce.h's lanes8, term i into chain
// i mod 8, then lane c += lane c + w for w = 4, 2, 1. Every chain starts at
// zero; acc1[j] (and acc2[j]) receive the results. Returns false, computing
// nothing, for other chain counts and on targets with fewer than 8 float
// lanes (the caller then runs its scalar loop, which gives the same bits).
bool ChannelChains8(ChainKind kind, bool fma, int chains, const float* x, const float* y,
                    int64_t n, int64_t image_stride, int64_t s, const float* shift,
                    float* acc1, float* acc2);

// As ChannelChains8, each channel's terms reduced in reduce.h's pairwise
// order instead (the tree of xw::Sum / xw::Dot over the channel's n * s terms
// in (n, s) order: halves down to leaves of at most 8 terms summed in order),
// all 8 lanes walking the same tree.
bool ChannelPairwise8(ChainKind kind, bool fma, const float* x, const float* y, int64_t n,
                      int64_t image_stride, int64_t s, const float* shift, float* acc1,
                      float* acc2);

// Whether ChannelReduce8 takes r's order: sequential, lanes8 and pairwise.
bool ChannelReduce8Order(const ReduceSpec& r);

// The kernel above for r's order and FMA choice: ChannelChains8 with one
// chain (sequential) or 8 (lanes8), or ChannelPairwise8. The bits of Sum /
// Dot on each gathered channel. Returns false, computing nothing, for other
// orders, planes under 8 pixels (s < 8), and where the kernel itself does.
bool ChannelReduce8(ChainKind kind, const ReduceSpec& r, const float* x, const float* y,
                    int64_t n, int64_t image_stride, int64_t s, const float* shift, float* acc1,
                    float* acc2);

}  // namespace kernels
}  // namespace xw

#endif  // XWIRES_SRC_KERNELS_CHANNEL_CHAINS_H_
