// ChannelChains8 and ChannelPairwise8 (channel_chains.h) on every SIMD
// target. Eight channel rows of 8 pixels are transposed in registers
// (transpose8-inl.h), so pixel p's 8 channel values form one vector and the
// 8 channels' chains advance with one vector operation per pixel, in pixel
// order: the chains' adder latency hides the loads and shuffles, and
// nothing is stored between them (batch norm's scalar path transposes
// 64-pixel blocks to memory and reads them back).
#include "src/kernels/channel_chains.h"

#include <algorithm>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/kernels/channel_chains.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "src/kernels/hwy_ops.h"
#include "src/kernels/prefetcher.h"
#include "src/kernels/transpose8-inl.h"

HWY_BEFORE_NAMESPACE();
namespace xw {
namespace kernels {
namespace HWY_NAMESPACE {
namespace {

#ifdef XWIRES_HAVE_TRANSPOSE8
// One term of every channel's reduction (channel_chains.h's ChainKind): p
// from x, g from y (read by kSumAndDot only), shift m; a and b the chains
// it goes into.
template <ChainKind kKind, bool kFma>
HWY_INLINE void Step(const V8& p, const V8& g, const V8& m, V8& a, V8& b) {
  if constexpr (kKind == ChainKind::kSum) {
    a = hn::Add(a, p);
  } else if constexpr (kKind == ChainKind::kShiftedSq) {
    const V8 dv = hn::Sub(p, m);
    a = Accumulate<kFma>(a, dv, dv);
  } else {
    a = hn::Add(a, g);
    b = Accumulate<kFma>(b, hn::Sub(p, m), g);
  }
}

// The 8 x 8 block of `rem` < 8 pixels at p (channel rows s apart), zero past
// rem, transposed.
HWY_INLINE void TailBlock(const float* p, int64_t s, int64_t rem, V8 (&col)[8]) {
  HWY_ALIGN float tmp[64] = {};
  for (int j = 0; j < 8; ++j) std::copy(p + j * s, p + j * s + rem, tmp + 8 * j);
  Transpose8(tmp, 8, col);
}

// K = 1: one chain per channel (sequential). K = 8 (s a multiple of 8):
// lanes8, chain c taking the terms i = c (mod 8), then lane c += lane c + w
// for w = 4, 2, 1 on the chains; a block of 8 pixels starts at a multiple
// of 8, so its pixel p is chain p's term.
template <ChainKind kKind, bool kFma, int K>
void Chains(const float* x, const float* y, int64_t n, int64_t image_stride, int64_t s,
            const float* shift, float* acc1, float* acc2) {
  const D8 d;
  const V8 m = kKind == ChainKind::kSum ? hn::Zero(d) : hn::LoadU(d, shift);
  V8 a[K], b[K];
  for (int c = 0; c < K; ++c) a[c] = b[c] = hn::Zero(d);
  // Pixels [0, count) of the block's columns, in order.
  const auto run = [&](const V8 (&xc)[8], const V8 (&yc)[8], int64_t count) {
    for (int64_t p = 0; p < count; ++p) {
      const int64_t c = K == 1 ? 0 : p;
      Step<kKind, kFma>(xc[p], yc[p], m, a[c], b[c]);
    }
  };
  const int64_t full = s / 8 * 8;
  for (int64_t i = 0; i < n; ++i) {
    const float* xi = x + i * image_stride;
    const float* yi = kKind == ChainKind::kSumAndDot ? y + i * image_stride : nullptr;
    // The next image's 8 rows (one run of 8 * s floats, the channels
    // adjacent), 4 lines per block of 8 pixels: runs of a plane an image
    // apart, which the hardware prefetchers do not follow.
    const bool more = i + 1 < n;
    Prefetcher next_x(more ? xi + image_stride : nullptr, 8 * s, full / 8);
    Prefetcher next_y(more && yi ? yi + image_stride : nullptr, 8 * s, full / 8);
    V8 xc[8], yc[8];
    for (int64_t s0 = 0; s0 < full; s0 += 8) {
      next_x.Step();
      next_y.Step();
      Transpose8(xi + s0, s, xc);
      if constexpr (kKind == ChainKind::kSumAndDot) Transpose8(yi + s0, s, yc);
      run(xc, yc, 8);
    }
    if (K == 1 && full < s) {
      TailBlock(xi + full, s, s - full, xc);
      if constexpr (kKind == ChainKind::kSumAndDot) TailBlock(yi + full, s, s - full, yc);
      run(xc, yc, s - full);
    }
  }
  for (int w = K / 2; w >= 1; w /= 2) {
    for (int c = 0; c < w; ++c) {
      a[c] = hn::Add(a[c], a[c + w]);
      b[c] = hn::Add(b[c], b[c + w]);
    }
  }
  hn::StoreU(a[0], d, acc1);
  if constexpr (kKind == ChainKind::kSumAndDot) hn::StoreU(b[0], d, acc2);
}

// f.template operator()<kind, fma>() (kSum is never fused).
template <typename F>
void DispatchKind(ChainKind kind, bool fma, F&& f) {
  switch (kind) {
    case ChainKind::kSum:
      return f.template operator()<ChainKind::kSum, false>();
    case ChainKind::kShiftedSq:
      if (fma) return f.template operator()<ChainKind::kShiftedSq, true>();
      return f.template operator()<ChainKind::kShiftedSq, false>();
    case ChainKind::kSumAndDot:
      if (fma) return f.template operator()<ChainKind::kSumAndDot, true>();
      return f.template operator()<ChainKind::kSumAndDot, false>();
  }
}

// reduce.cc's pairwise tree over the terms [0, n * s) of 8 channels at once:
// halves at begin + len / 2 down to leaves of at most 8 terms, each summed
// in order from zero, then the halves added. Every channel has the same
// number of terms, so every lane walks the same tree.
template <ChainKind kKind, bool kFma>
class PairwiseWalk {
 public:
  PairwiseWalk(const float* x, const float* y, int64_t image_stride, int64_t s,
               const float* shift)
      : x_(x), y_(y), image_stride_(image_stride), s_(s) {
    const D8 d;
    m_ = kKind == ChainKind::kSum ? hn::Zero(d) : hn::LoadU(d, shift);
  }

  // a (and b, kSumAndDot) = the tree over terms [begin, end).
  void Walk(int64_t begin, int64_t end, V8& a, V8& b) const {
    const int64_t len = end - begin;
    if (len <= 8) return Leaf(begin, end, a, b);
    if (len <= kMaxLeaves * 8 && (len & (len - 1)) == 0 && begin % s_ + len <= s_) {
      return Perfect(begin, len / 8, a, b);
    }
    const int64_t mid = begin + len / 2;
    V8 a2, b2;
    Walk(begin, mid, a, b);
    Walk(mid, end, a2, b2);
    a = hn::Add(a, a2);
    if constexpr (kKind == ChainKind::kSumAndDot) b = hn::Add(b, b2);
  }

 private:
  // Terms [begin, end) (at most 8) of the 8 channels as vectors, term p of
  // channel j in lane j of col[p].
  void Terms(const float* t, int64_t begin, int64_t end, V8 (&col)[8]) const {
    const int64_t r = begin % s_;
    if (end - begin == 8 && r + 8 <= s_) {  // one image's plane: in registers
      return Transpose8(t + begin / s_ * image_stride_ + r, s_, col);
    }
    const D8 d;
    HWY_ALIGN float lane[8];
    for (int64_t i = begin; i < end; ++i) {
      const float* p = t + i / s_ * image_stride_ + i % s_;
      for (int j = 0; j < 8; ++j) lane[j] = p[j * s_];
      col[i - begin] = hn::Load(d, lane);
    }
  }

  // A power-of-two run of `leaves` leaves inside one plane: the halving
  // tree is the perfect tree over the leaves, added level by level.
  static constexpr int kMaxLeaves = 32;
  void Perfect(int64_t begin, int64_t leaves, V8& a, V8& b) const {
    V8 la[kMaxLeaves], lb[kMaxLeaves];
    for (int64_t i = 0; i < leaves; ++i) Leaf(begin + 8 * i, begin + 8 * i + 8, la[i], lb[i]);
    for (int64_t w = leaves / 2; w >= 1; w /= 2) {
      for (int64_t i = 0; i < w; ++i) {
        la[i] = hn::Add(la[2 * i], la[2 * i + 1]);
        if constexpr (kKind == ChainKind::kSumAndDot) lb[i] = hn::Add(lb[2 * i], lb[2 * i + 1]);
      }
    }
    a = la[0];
    b = lb[0];
  }

  void Leaf(int64_t begin, int64_t end, V8& a, V8& b) const {
    const D8 d;
    V8 xc[8], yc[8];
    Terms(x_, begin, end, xc);
    if constexpr (kKind == ChainKind::kSumAndDot) Terms(y_, begin, end, yc);
    a = hn::Zero(d);
    b = hn::Zero(d);
    for (int64_t p = 0; p < end - begin; ++p) Step<kKind, kFma>(xc[p], yc[p], m_, a, b);
  }

  const float* x_;
  const float* y_;
  int64_t image_stride_, s_;
  V8 m_;
};

template <ChainKind kKind, bool kFma>
void Pairwise(const float* x, const float* y, int64_t n, int64_t image_stride, int64_t s,
              const float* shift, float* acc1, float* acc2) {
  const D8 d;
  V8 a, b;
  PairwiseWalk<kKind, kFma>(x, y, image_stride, s, shift).Walk(0, n * s, a, b);
  hn::StoreU(a, d, acc1);
  if constexpr (kKind == ChainKind::kSumAndDot) hn::StoreU(b, d, acc2);
}
#endif

}  // namespace

bool ChannelChains8T(ChainKind kind, bool fma, int chains, const float* x, const float* y,
                     int64_t n, int64_t image_stride, int64_t s, const float* shift,
                     float* acc1, float* acc2) {
#ifdef XWIRES_HAVE_TRANSPOSE8
  if (chains != 1 && (chains != 8 || s % 8 != 0)) return false;
  DispatchKind(kind, fma, [&]<ChainKind kKind, bool kFma>() {
    if (chains == 1) {
      Chains<kKind, kFma, 1>(x, y, n, image_stride, s, shift, acc1, acc2);
    } else {
      Chains<kKind, kFma, 8>(x, y, n, image_stride, s, shift, acc1, acc2);
    }
  });
  return true;
#else
  (void)kind, (void)fma, (void)chains, (void)x, (void)y, (void)n, (void)image_stride;
  (void)s, (void)shift, (void)acc1, (void)acc2;
  return false;
#endif
}

bool ChannelPairwise8T(ChainKind kind, bool fma, const float* x, const float* y, int64_t n,
                       int64_t image_stride, int64_t s, const float* shift, float* acc1,
                       float* acc2) {
#ifdef XWIRES_HAVE_TRANSPOSE8
  DispatchKind(kind, fma, [&]<ChainKind kKind, bool kFma>() {
    Pairwise<kKind, kFma>(x, y, n, image_stride, s, shift, acc1, acc2);
  });
  return true;
#else
  (void)kind, (void)fma, (void)x, (void)y, (void)n, (void)image_stride, (void)s;
  (void)shift, (void)acc1, (void)acc2;
  return false;
#endif
}

}  // namespace HWY_NAMESPACE
}  // namespace kernels
}  // namespace xw
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace xw {
namespace kernels {

HWY_EXPORT(ChannelChains8T);
HWY_EXPORT(ChannelPairwise8T);

bool ChannelPairwise8(ChainKind kind, bool fma, const float* x, const float* y, int64_t n,
                      int64_t image_stride, int64_t s, const float* shift, float* acc1,
                      float* acc2) {
  return HWY_DYNAMIC_DISPATCH(ChannelPairwise8T)(kind, fma, x, y, n, image_stride, s, shift,
                                                 acc1, acc2);
}

bool ChannelChains8(ChainKind kind, bool fma, int chains, const float* x, const float* y,
                    int64_t n, int64_t image_stride, int64_t s, const float* shift,
                    float* acc1, float* acc2) {
  return HWY_DYNAMIC_DISPATCH(ChannelChains8T)(kind, fma, chains, x, y, n, image_stride, s,
                                               shift, acc1, acc2);
}

namespace {
// Chains per channel of r's order on ChannelChains8, 0 where it has none.
int ChainCount8(const ReduceSpec& r) {
  if (r.order == ReduceOrder::kSequential) return 1;
  return r.order == ReduceOrder::kLanes && r.lanes == 8 ? 8 : 0;
}
}  // namespace

bool ChannelReduce8Order(const ReduceSpec& r) {
  return ChainCount8(r) > 0 || r.order == ReduceOrder::kPairwise;
}

bool ChannelReduce8(ChainKind kind, const ReduceSpec& r, const float* x, const float* y,
                    int64_t n, int64_t image_stride, int64_t s, const float* shift, float* acc1,
                    float* acc2) {
  if (s < 8) return false;
  if (r.order == ReduceOrder::kPairwise) {
    return ChannelPairwise8(kind, r.fma, x, y, n, image_stride, s, shift, acc1, acc2);
  }
  const int chains = ChainCount8(r);
  return chains > 0 &&
         ChannelChains8(kind, r.fma, chains, x, y, n, image_stride, s, shift, acc1, acc2);
}

}  // namespace kernels
}  // namespace xw
#endif  // HWY_ONCE
