// The direct algorithm's filter gradient in a lanesK order (K = 4, 8, 16)
// with the K chains in the lanes of a vector: dw[o, t] sums over the batch's
// pixels q = (n, p, q) in index order, term q into chain q mod K. When every
// output row is a multiple of K pixels wide, K consecutive pixels of a row
// are exactly chains 0..K-1, so one vector FMA of K pixels of dy times K
// patch entries advances every chain of one (o, t) by one term, and the
// chains never restart. The channel-lane tiles (conv_implicit_exact.cc) take
// every K-th pixel per chain instead, K passes over the same data.
//
// Vectors hold N = min(K, lanes) floats (a CappedTag: AVX-512 computes K = 8
// on 8 lanes), K/N of them per (o, t): the same bits on every target. A
// vector's N pixels are one row, or two half rows when rows are N/2 wide
// (VGG's 4x4 maps on AVX2). The chains are folded by the lanesK tree at the
// end, as the other tiles do.
#include <algorithm>
#include <vector>

#include "src/kernels/conv_internal.h"
#include "src/kernels/implicit_internal.h"
#include "xwires/core/parallel.h"
#include "xwires/core/simd_target.h"
#include "xwires/core/tensor.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/kernels/conv_filter_lanes.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "src/kernels/hwy_ops.h"

HWY_BEFORE_NAMESPACE();
namespace xw {
namespace kernels {
namespace HWY_NAMESPACE {
namespace {

#if HWY_ARCH_ARM_A64 || (HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3)
constexpr int kRegs = 32;
#else
constexpr int kRegs = 16;
#endif
// Taps per tile: three, one kernel row of a 3x3 filter (overlapping loads).
constexpr int kTaps = 3;

// Output channels per tile for K chains: R x kTaps x M accumulators, with
// room for the kTaps patch vectors and a gradient vector.
template <int K>
constexpr int MaxRows() {
  constexpr int n = std::min<int>(K, HWY_LANES(float));
  constexpr int m = K / n;
  return std::clamp((kRegs - 4) / (kTaps * m), 1, 8);
}

// state[(o * taps + t) * K + c] += over the groups g in [g0, g1) of K
// pixels, in order, dy(o, pixels) * patch(t, pixels), for R channels from
// o0 and U taps from t0. dy + dy_off[g] is the group's first pixel of
// channel 0; pads + pad_off[g * M + m] is vector m's first patch entry (with
// kHalf, its first half row; the second is pw floats further).
template <int K, int R, int U, bool kHalf, bool kFma>
void LanesTile(const float* pads, const int64_t* pad_off, int64_t pw, const float* dy,
               const int64_t* dy_off, int64_t g0, int64_t g1, int64_t plane,
               const int64_t* tap, int64_t taps, int64_t o0, int64_t t0, float* state) {
  using D = hn::CappedTag<float, K>;
  const D d;
  constexpr int N = HWY_LANES(float) < K ? HWY_LANES(float) : K;
  constexpr int M = K / N;
  using V = hn::Vec<D>;
  V acc[R][U][M];
  for (int r = 0; r < R; ++r) {
    for (int u = 0; u < U; ++u) {
      const float* s = state + ((o0 + r) * taps + t0 + u) * K;
      for (int m = 0; m < M; ++m) acc[r][u][m] = hn::LoadU(d, s + m * N);
    }
  }
  for (int64_t g = g0; g < g1; ++g) {
    const float* gy = dy + dy_off[g] + o0 * plane;
    for (int m = 0; m < M; ++m) {
      const float* p = pads + pad_off[g * M + m];
      V x[U];
      for (int u = 0; u < U; ++u) {
#if HWY_TARGET != HWY_SCALAR
        if constexpr (kHalf) {
          const hn::Half<D> dh;
          const float* row = p + tap[t0 + u];
          x[u] = hn::Combine(d, hn::LoadU(dh, row + pw), hn::LoadU(dh, row));
          continue;
        }
#endif
        x[u] = hn::LoadU(d, p + tap[t0 + u]);
      }
      for (int r = 0; r < R; ++r) {
        const V y = hn::LoadU(d, gy + r * plane + m * N);
        for (int u = 0; u < U; ++u) acc[r][u][m] = Accumulate<kFma>(acc[r][u][m], y, x[u]);
      }
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int u = 0; u < U; ++u) {
      float* s = state + ((o0 + r) * taps + t0 + u) * K;
      for (int m = 0; m < M; ++m) hn::StoreU(acc[r][u][m], d, s + m * N);
    }
  }
}

// The operands of a task's tiles.
struct LanesArgs {
  const float* pads;
  const int64_t* pad_off;
  int64_t pw;
  const float* dy;
  const int64_t* dy_off;
  int64_t plane;
  const int64_t* tap;
  int64_t taps;
  float* state;
};

// The next chunk's source images and gradient, fetched a step per tile.
struct NextChunk {
  Prefetcher src, dy;
  void Step() {
    src.Step();
    dy.Step();
  }
};

// One task's tiles over groups [g0, g1): channels [o0, o1), taps [t0, t1).
template <int K, bool kHalf, bool kFma>
void LanesTask(const LanesArgs& a, int64_t g0, int64_t g1, int64_t o0, int64_t o1, int64_t t0,
               int64_t t1, NextChunk& next) {
  constexpr int kMax = MaxRows<K>();
  for (int64_t o = o0; o < o1;) {
    const int64_t left = o1 - o;
    auto taps_of = [&]<int R>() {
      for (int64_t t = t0; t < t1;) {
        const int64_t u = std::min<int64_t>(kTaps, t1 - t);
        next.Step();
        auto run = [&]<int U>() {
          LanesTile<K, R, U, kHalf, kFma>(a.pads, a.pad_off, a.pw, a.dy, a.dy_off, g0, g1,
                                          a.plane, a.tap, a.taps, o, t, a.state);
        };
        if (u == 3) run.template operator()<3>();
        else if (u == 2) run.template operator()<2>();
        else run.template operator()<1>();
        t += u;
      }
      o += R;
    };
    if (left >= kMax) taps_of.template operator()<kMax>();
    else if (kMax > 4 && left >= 4) taps_of.template operator()<std::min(4, kMax)>();
    else if (kMax > 2 && left >= 2) taps_of.template operator()<std::min(2, kMax)>();
    else taps_of.template operator()<1>();
  }
}

template <bool kHalf, bool kFma>
void RunTask(int k, const LanesArgs& a, int64_t g0, int64_t g1, int64_t o0, int64_t o1,
             int64_t t0, int64_t t1, NextChunk& next) {
  switch (k) {
    case 4: return LanesTask<4, kHalf, kFma>(a, g0, g1, o0, o1, t0, t1, next);
    case 8: return LanesTask<8, kHalf, kFma>(a, g0, g1, o0, o1, t0, t1, next);
    default: return LanesTask<16, kHalf, kFma>(a, g0, g1, o0, o1, t0, t1, next);
  }
}

// Channels per tile of a K-chain set on this target (LanesTask's widest).
int64_t TileChannels(int k) {
  return k == 4 ? MaxRows<4>() : k == 8 ? MaxRows<8>() : MaxRows<16>();
}

// Floats per vector of a K-chain set on this target.
constexpr int64_t VectorFloats(int k) { return std::min<int64_t>(k, HWY_LANES(float)); }

}  // namespace

// Groups of K pixels per sweep of a task's tiles: their gradient rows and
// patch entries stay in L1 while every tile of the task reads them.
constexpr int64_t kGroupBlock = 64;

void LanesBackwardFilterT(const TapSource& src, int64_t images, int64_t out_ch,
                          const float* dy, const ReduceSpec& spec, float* dw) {
  const int k = ChainCount(spec);
  const ImplicitLayout l = MakeLayout(src, k);
  const std::vector<int64_t> pix = PixelOffsets(l, src.ow);
  const int64_t chunk = std::clamp<int64_t>(2048 / l.plane, 1, images);
  const int64_t per_image = l.plane / k;
  const int64_t source_floats = src.channels * src.h * src.w;
  const int64_t n_vec = VectorFloats(k), m_vec = k / n_vec;
  const bool half = n_vec > src.ow;  // two half rows per vector
  // Where each group (dy) and each of its vectors (the padded images) starts,
  // relative to the chunk's first image.
  std::vector<int64_t> pad_off(chunk * per_image * m_vec), dy_off(chunk * per_image);
  for (int64_t g = 0; g < chunk * per_image; ++g) {
    const int64_t i = g / per_image, j = g % per_image * k;
    dy_off[g] = i * out_ch * l.plane + j;
    for (int64_t m = 0; m < m_vec; ++m) {
      pad_off[g * m_vec + m] = i * l.image_floats + pix[j + m * n_vec];
    }
  }
  ScratchFloats state(int64_t{k} * l.taps * out_ch, 0.0f);  // [o][t][chain]
  ScratchFloats pads(chunk * l.image_floats);
  // Tasks: channel halves x tap ranges of whole kernel rows, about 8.
  const int64_t halves = out_ch >= 16 ? 2 : 1;
  const int64_t rows = (l.taps + kTaps - 1) / kTaps;
  const int64_t parts = std::clamp<int64_t>(8 / halves, 1, rows);
  const auto run = half ? (spec.fma ? RunTask<true, true> : RunTask<true, false>)
                        : (spec.fma ? RunTask<false, true> : RunTask<false, false>);
  for (int64_t n0 = 0; n0 < images; n0 += chunk) {
    const int64_t count = std::min(chunk, images - n0);
    ParallelFor(count, 1, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) {
        PadImage(src, l, n0 + i, pads.data() + i * l.image_floats);
      }
    });
    const LanesArgs args{pads.data(), pad_off.data(), l.pw,         dy + n0 * out_ch * l.plane,
                         dy_off.data(), l.plane,      l.tap.data(), l.taps,
                         state.data()};
    // The next chunk's source and gradient, fetched while this one's tiles
    // compute: task i of n fetches the i-th n-th of each, over its tiles.
    const int64_t next_count = std::min(chunk, images - n0 - count);
    const int64_t tasks = halves * parts;
    const int64_t blocks = (count * per_image + kGroupBlock - 1) / kGroupBlock;
    ParallelFor(tasks, 1, [&](int64_t a, int64_t b) {
      for (int64_t task = a; task < b; ++task) {
        const int64_t h = task / parts, part = task % parts;
        const int64_t o0 = out_ch * h / halves, o1 = out_ch * (h + 1) / halves;
        const int64_t t0 = std::min(l.taps, rows * part / parts * kTaps);
        const int64_t t1 = std::min(l.taps, rows * (part + 1) / parts * kTaps);
        const int64_t tiles = blocks * ((o1 - o0 + TileChannels(k) - 1) / TileChannels(k)) *
                              ((t1 - t0 + kTaps - 1) / kTaps);
        auto slice = [&](const float* base, int64_t floats) {
          return Prefetcher(next_count > 0 ? base + floats * task / tasks : nullptr,
                            floats * (task + 1) / tasks - floats * task / tasks, tiles);
        };
        NextChunk next{slice(src.data + (n0 + count) * source_floats, next_count * source_floats),
                       slice(dy + (n0 + count) * out_ch * l.plane, next_count * out_ch * l.plane)};
        for (int64_t g0 = 0; g0 < count * per_image; g0 += kGroupBlock) {
          const int64_t g1 = std::min(count * per_image, g0 + kGroupBlock);
          run(k, args, g0, g1, o0, o1, t0, t1, next);
        }
      }
    });
  }
  // The lanesK tree over each output's chains (lane l += lane l + w for
  // w = K/2 .. 1, as xw::Sum's lanes order), scalar adds on the stored
  // values: the same bits as the vector trees of the other tiles.
  ParallelFor(out_ch, 1, [&](int64_t o0, int64_t o1) {
    for (int64_t o = o0; o < o1; ++o) {
      for (int64_t t = 0; t < l.taps; ++t) {
        float v[16];
        std::copy_n(state.data() + (o * l.taps + t) * k, k, v);
        for (int w = k / 2; w >= 1; w /= 2) {
          for (int c = 0; c < w; ++c) v[c] += v[c + w];
        }
        dw[o * l.taps + t] = v[0];
      }
    }
  });
}

}  // namespace HWY_NAMESPACE
}  // namespace kernels
}  // namespace xw
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace xw {
namespace kernels {

HWY_EXPORT(LanesBackwardFilterT);

bool LanesFilterApplies(const TapSource& s, int64_t out_ch, const ReduceSpec& spec) {
  const int k = spec.order == ReduceOrder::kLanes ? ChainCount(spec) : 0;
  if (k != 4 && k != 8 && k != 16) return false;
  // Groups of K pixels within one image; each vector of N pixels one row,
  // or two half rows. The chains' state (K x taps x out_ch floats) is
  // reloaded for every block of groups. Measured on AVX2 at batch 128: up to
  // 4 MiB of state (VGG's 64-to-128 layer, 2.3 MiB: 1.5x) these tiles are
  // faster than the ordered products over gathered patches; at 9-19 MiB
  // (VGG's 128- and 256-channel layers) they gain little or lose.
  const int64_t n = std::min(k, KernelFloatLanes());
  const bool rows = s.ow % n == 0 || (n >= 2 && 2 * s.ow == n);
  const int64_t state = int64_t{k} * s.channels * s.kh * s.kw * out_ch;
  return (s.oh * s.ow) % k == 0 && rows && state <= (int64_t{1} << 20);
}

void LanesBackwardFilter(const TapSource& src, int64_t images, int64_t out_ch, const float* dy,
                         const ReduceSpec& spec, float* dw) {
  HWY_DYNAMIC_DISPATCH(LanesBackwardFilterT)(src, images, out_ch, dy, spec, dw);
}

}  // namespace kernels
}  // namespace xw
#endif  // HWY_ONCE
