// Internal: the implicit-GEMM register tiles, compiled once per SIMD target.
// Include after "hwy/highway.h" and "src/kernels/hwy_ops.h" from a file that
// includes "hwy/foreach_target.h" (Highway's per-target include guard).
//
// A slot is L = Lanes(DF) output pixels of one output row (or two rows of
// L/2), loaded for tap t as one vector at slot_base + tap_offset[t]; each
// lane is one output's chain over the taps, so L decides how many outputs
// advance at once, never an output's bits.
#if defined(XWIRES_SRC_KERNELS_IMPLICIT_TILES_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef XWIRES_SRC_KERNELS_IMPLICIT_TILES_INL_H_
#undef XWIRES_SRC_KERNELS_IMPLICIT_TILES_INL_H_
#else
#define XWIRES_SRC_KERNELS_IMPLICIT_TILES_INL_H_
#endif

#include <cstdint>

#include "hwy/highway.h"
#include "src/kernels/hwy_ops.h"
#include "src/kernels/implicit_internal.h"

HWY_BEFORE_NAMESPACE();
namespace xw {
namespace kernels {
namespace HWY_NAMESPACE {

constexpr int kLanes = HWY_LANES(float);
// Vector registers of the target: tiles keep their accumulators in them.
#if HWY_ARCH_ARM_A64 || (HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3)
constexpr int kRegisters = 32;
#else
constexpr int kRegisters = 16;
#endif
// Pixel (or channel) vectors per tile: 4 with 32 registers (6 x 4
// accumulators), 2 with 16 (6 x 2).
constexpr int kMaxVectors = kRegisters >= 32 ? 4 : 2;

// Channel vectors per channel-lane tile: as many as are left, up to
// kMaxVectors.
HWY_INLINE int ChannelVectors(int64_t left) {
  for (int v : {4, 2}) {
    if (v <= kMaxVectors && left >= int64_t{v} * kLanes) return v;
  }
  return 1;
}

// The L patch entries of a slot at tap offset p, bases b[0], b[1], as a
// vector of tag D (L = D's lanes).
template <bool kHalf, class D = DF>
HWY_INLINE hn::Vec<D> LoadSlot(const float* p, const int64_t* b) {
  const D d;
#if HWY_TARGET != HWY_SCALAR
  if constexpr (kHalf) {
    const hn::Half<D> dh;
    return hn::Combine(d, hn::LoadU(dh, p + b[1]), hn::LoadU(dh, p + b[0]));
  }
#endif
  return hn::LoadU(d, p + b[0]);
}

// Which taps a TapTile call runs: t = first, first + step, ... < end, as
// the continuation of the chain stored in out (resume) or a new one.
struct TapRange {
  int64_t first, end, step;
  bool resume;
};

// out[r*stride + L*v + i] = the chain over the range's taps t of
// wp[t*R + r] * patch(t, slot s0 + v, lane i) (Accumulate<kFma>), started
// at zero or at the stored out, then + bias[r] if bias is not null. R output
// channels x V slots; base = l.base + 2*s0, wp = the channel block's weights
// (PackWeightBlocks). The im2col forward is the whole chain (0, taps, 1,
// FMA); the direct algorithm's lanesK orders run each chain on its own, in
// blocks of taps where the taps are many (ExactPatchGemmT). Vectors of tag
// D: the target's full width, or 8 lanes (NarrowSequentialGemm).
template <int R, int V, bool kHalf, bool kFma, bool kResume, bool kBias, bool kStep1,
          class D = DF>
HWY_NOINLINE void TapTileBody(const float* img, const ImplicitLayout& l, const int64_t* base,
                              const float* wp, TapRange range, const float* bias, float* out,
                              int64_t stride) {
  using VF = hn::Vec<D>;
  constexpr int kLanes = static_cast<int>(hn::MaxLanes(D()));
  const D d;
  // No taps: the start, plus bias. This path keeps its own loads and stores:
  // with the start and the stores shared with the loop's path (helpers),
  // GCC merged the two paths through the stack again in the bias variants.
  if (range.first >= range.end) {
    for (int r = 0; r < R; ++r) {
      for (int v = 0; v < V; ++v) {
        VF y = kResume ? hn::LoadU(d, out + r * stride + kLanes * v) : hn::Zero(d);
        if constexpr (kBias) y = hn::Add(y, hn::Set(d, bias[r]));
        hn::StoreU(y, d, out + r * stride + kLanes * v);
      }
    }
    return;
  }
  VF acc[R][V];
  for (int r = 0; r < R; ++r) {
    for (int v = 0; v < V; ++v) {
      acc[r][v] = kResume ? hn::LoadU(d, out + r * stride + kLanes * v) : hn::Zero(d);
    }
  }
  const int64_t* tap = l.tap.data();
  const int64_t step = kStep1 ? 1 : range.step;
  int64_t t = range.first;
  do {  // at least once (tested above), so one path reaches the stores
    const float* p = img + tap[t];
    VF x[V];
    for (int v = 0; v < V; ++v) x[v] = LoadSlot<kHalf, D>(p, base + 2 * v);
    for (int r = 0; r < R; ++r) {
      const VF w = hn::Set(d, wp[t * R + r]);
      for (int v = 0; v < V; ++v) acc[r][v] = Accumulate<kFma>(acc[r][v], w, x[v]);
    }
    t += step;
  } while (t < range.end);
  for (int r = 0; r < R; ++r) {
    for (int v = 0; v < V; ++v) {
      VF y = acc[r][v];
      if constexpr (kBias) y = hn::Add(y, hn::Set(d, bias[r]));
      hn::StoreU(y, d, out + r * stride + kLanes * v);
    }
  }
}

// One body per (resume, bias, unit step): with these chosen inside one
// body, GCC versioned the loop and merged the accumulators of its versions
// through the stack (24 vector moves around every call, ~10% of a
// 16-channel lanes8 tile's time).
template <int R, int V, bool kHalf, bool kFma, class D = DF>
void TapTile(const float* img, const ImplicitLayout& l, const int64_t* base, const float* wp,
             TapRange range, const float* bias, float* out, int64_t stride) {
  auto body = [&]<bool kResume, bool kBias>() {
    if (range.step == 1) {
      TapTileBody<R, V, kHalf, kFma, kResume, kBias, true, D>(img, l, base, wp, range, bias,
                                                              out, stride);
    } else {
      TapTileBody<R, V, kHalf, kFma, kResume, kBias, false, D>(img, l, base, wp, range, bias,
                                                               out, stride);
    }
  };
  if (range.resume) {
    if (bias != nullptr) return body.template operator()<true, true>();
    return body.template operator()<true, false>();
  }
  if (bias != nullptr) return body.template operator()<false, true>();
  return body.template operator()<false, false>();
}

// f.template operator()<R, V>() for the tile heights r in {8, 6, 4, 2, 1}
// up to kMaxRows (TileRows' set) and the vector counts v in {4, 2, 1} up
// to kMaxV: the one runtime-to-template dispatch of every tile here.
template <int kMaxRows, int kMaxV, typename F>
HWY_INLINE void DispatchTile(int r, int v, F&& f) {
  auto rows = [&]<int R>() {
    if constexpr (kMaxV >= 4) {
      if (v == 4) return f.template operator()<R, 4>();
    }
    if (v == 2) return f.template operator()<R, 2>();
    return f.template operator()<R, 1>();
  };
  // Heights above kMaxRows are never instantiated (16-register targets would
  // spill them).
  if constexpr (kMaxRows >= 8) {
    if (r == 8) return rows.template operator()<8>();
  }
  if constexpr (kMaxRows >= 6) {
    if (r == 6) return rows.template operator()<6>();
  }
  if constexpr (kMaxRows >= 4) {
    if (r == 4) return rows.template operator()<4>();
  }
  if constexpr (kMaxRows >= 2) {
    if (r == 2) return rows.template operator()<2>();
  }
  return rows.template operator()<1>();
}

// TapTile for r in {8, 6, 4, 2, 1} up to kMaxRows and v in {4, 2, 1} up to
// kMaxV, on vectors of tag D.
template <bool kHalf, bool kFma, class D = DF, int kMaxRows = 6, int kMaxV = kMaxVectors>
void TapTileAny(int r, int v, const float* img, const ImplicitLayout& l, const int64_t* base,
                const float* wp, TapRange range, const float* bias, float* out, int64_t stride) {
  DispatchTile<kMaxRows, kMaxV>(r, v, [&]<int R, int V>() {
    TapTile<R, V, kHalf, kFma, D>(img, l, base, wp, range, bias, out, stride);
  });
}

// Channel-vector tiles (conv_implicit_channels.cc), for ChannelTilesApply.
void ChannelPatchGemm(const TapSource& src, const ImplicitLayout& l, int64_t images,
                      int64_t out_ch, const float* w, const float* bias, float* y);
void ChannelBackwardFilter(const TapSource& src, const ImplicitLayout& l, int64_t images,
                           int64_t out_ch, const float* dy, int64_t per, float* dw);

}  // namespace HWY_NAMESPACE
}  // namespace kernels
}  // namespace xw
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
