// The im2col GEMMs without the patch matrix, as Eigen's SpatialConvolution
// (TensorFlow's CPU convolution) does: its contraction mapper reads patch
// entries straight from the image instead of materializing im2col. Here the
// source image is copied once, zero-padded (and for stride s split into s*s
// phases), so that tap t of a slot of L output pixels is one L-float load at
// slot_base + tap_offset[t]. Register tiles of output channels x pixel
// vectors accumulate over the taps with FMA, each output in tap order, as
// Eigen's GEBP kernel does. Compiled per SIMD target (L = its float lanes).
#include <algorithm>
#include <vector>

#include "src/kernels/conv_internal.h"
#include "src/kernels/implicit_internal.h"
#include "src/kernels/ordered_gemm.h"
#include "src/thread_scratch.h"
#include "xwires/core/parallel.h"
#include "xwires/core/tensor.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/kernels/conv_implicit.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "src/kernels/hwy_ops.h"
#include "src/kernels/implicit_tiles-inl.h"

HWY_BEFORE_NAMESPACE();
namespace xw {
namespace kernels {
namespace HWY_NAMESPACE {
namespace {

// dw[r*taps + u] (+)= sum over the images' slots of dy(r) * patch(u): R
// output channels x U taps from tap t0. Lane i accumulates the slots' pixel
// i in slot order (FMA); the L lanes are then folded on stored values,
// lane[i] += lane[i + w] for w = L/2 .. 1 (on AVX-512 the order of its
// horizontal add). The order depends on L, as Eigen's sgemm does on the ISA.
template <int R, int U, bool kHalf>
void FilterTile(const float* pads, const float* dy, int64_t images, int64_t out_ch,
                const ImplicitLayout& l, int64_t t0, bool accumulate, float* dw) {
  const DF d;
  VF acc[R][U];
  for (int r = 0; r < R; ++r) {
    for (int u = 0; u < U; ++u) acc[r][u] = hn::Zero(d);
  }
  const int64_t* tap = l.tap.data() + t0;
  for (int64_t i = 0; i < images; ++i) {
    const float* img = pads + i * l.image_floats;
    const float* g = dy + i * out_ch * l.plane;
    for (int64_t sl = 0; sl < l.slots; ++sl) {
      const int64_t* b = l.base.data() + 2 * sl;
      VF dv[R];
      for (int r = 0; r < R; ++r) dv[r] = hn::LoadU(d, g + r * l.plane + kLanes * sl);
      for (int u = 0; u < U; ++u) {
        const VF x = LoadSlot<kHalf>(img + tap[u], b);
        for (int r = 0; r < R; ++r) acc[r][u] = Accumulate<true>(acc[r][u], dv[r], x);
      }
    }
  }
  HWY_ALIGN float lane[kLanes];
  for (int r = 0; r < R; ++r) {
    for (int u = 0; u < U; ++u) {
      hn::Store(acc[r][u], d, lane);
      for (int w = kLanes / 2; w >= 1; w /= 2) {
        for (int j = 0; j < w; ++j) lane[j] += lane[j + w];
      }
      float& dst = dw[r * l.taps + t0 + u];
      dst = accumulate ? dst + lane[0] : lane[0];
    }
  }
}

constexpr int kFilterRows = kRegisters >= 32 ? 4 : 2;
constexpr int kFilterTaps = kRegisters >= 32 ? 6 : 4;

// FilterTile for r in {4, 2, 1} up to kFilterRows and u in {6, 4, 2, 1} up
// to kFilterTaps (taps as DispatchTile's heights, rows as its vectors).
template <bool kHalf>
void FilterTileAny(int r, int u, const float* pads, const float* dy, int64_t images,
                   int64_t out_ch, const ImplicitLayout& l, int64_t t0, bool accumulate,
                   float* dw) {
  DispatchTile<kFilterTaps, kFilterRows>(u, r, [&]<int U, int R>() {
    FilterTile<R, U, kHalf>(pads, dy, images, out_ch, l, t0, accumulate, dw);
  });
}

}  // namespace

void ImplicitPatchGemmT(const TapSource& src, int64_t images, int64_t out_ch, const float* w,
                        const float* bias, float* y) {
  const ImplicitLayout l = MakeLayout(src, kLanes);
  if (ChannelTilesApply(l, out_ch)) return ChannelPatchGemm(src, l, images, out_ch, w, bias, y);
  const ScratchFloats wp = PackWeightBlocks(w, out_ch, l.taps);
  const int64_t tiles = (out_ch + 5) / 6 * ((l.slots + kMaxVectors - 1) / kMaxVectors);
  const auto run = l.half ? TapTileAny<true, true> : TapTileAny<false, true>;
  ForEachPaddedImage(src, l, images, tiles, [&](int64_t n, const float* pad, Prefetcher& next) {
    float* yn = y + n * out_ch * l.plane;
    for (int64_t o0 = 0; o0 < out_ch;) {
      const int r = TileRows(out_ch - o0, 6);
      const float* b = bias ? bias + o0 : nullptr;
      for (int64_t s0 = 0; s0 < l.slots;) {
        next.Step();
        const int v = TileRows(l.slots - s0, kMaxVectors);
        // The next tile's outputs, a tile ahead (ExactPatchGemmT's reason).
        PrefetchSlotOutputs(yn + o0 * l.plane, l.plane, r, s0 + v,
                            std::min(l.slots, s0 + v + kMaxVectors), kLanes);
        // The whole chain over the taps with FMA, as Eigen's GEBP kernel.
        run(r, v, pad, l, l.base.data() + 2 * s0, wp.data() + o0 * l.taps,
            TapRange{0, l.taps, 1, false}, b, yn + o0 * l.plane + kLanes * s0, l.plane);
        s0 += v;
      }
      o0 += r;
    }
  });
}

void ImplicitBackwardFilterT(const TapSource& src, int64_t images, int64_t out_ch,
                             const float* dy, int64_t per, float* dw) {
  const ImplicitLayout l = MakeLayout(src, kLanes);
  if (ChannelFilterApplies(l, out_ch)) {
    return ChannelBackwardFilter(src, l, images, out_ch, dy, per, dw);
  }
  struct Tile {
    int64_t o0, t0;
    int r, u;
  };
  std::vector<Tile> tiles;
  for (int64_t o0 = 0; o0 < out_ch;) {
    const int r = TileRows(out_ch - o0, kFilterRows);
    for (int64_t t0 = 0; t0 < l.taps;) {
      const int u = TileRows(l.taps - t0, kFilterTaps);
      tiles.push_back({o0, t0, r, u});
      t0 += u;
    }
    o0 += r;
  }
  const int64_t groups = std::min<int64_t>((images + per - 1) / per, 4);
  ScratchFloats pads(groups * per * l.image_floats);
  const auto run = l.half ? FilterTileAny<true> : FilterTileAny<false>;
  const auto partials = FilterRounds(
      images, per, out_ch * l.taps, static_cast<int64_t>(tiles.size()),
      [&](int64_t g, int64_t i, int64_t n) {
        PadImage(src, l, n, pads.data() + (g * per + i) * l.image_floats);
      },
      [&](float* acc, int64_t g, int64_t n0, int64_t k, int64_t ti, bool first) {
        const Tile& t = tiles[ti];
        run(t.r, t.u, pads.data() + g * per * l.image_floats,
            dy + (n0 * out_ch + t.o0) * l.plane, k, out_ch, l, t.t0, !first,
            acc + t.o0 * l.taps);
      });
  SumPartials(partials, out_ch * l.taps, dw);
}

}  // namespace HWY_NAMESPACE
}  // namespace kernels
}  // namespace xw
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace xw {
namespace kernels {

HWY_EXPORT(ImplicitPatchGemmT);
HWY_EXPORT(ImplicitBackwardFilterT);

void ImplicitPatchGemm(const TapSource& src, int64_t images, int64_t out_ch, const float* w,
                       const float* bias, float* y) {
  HWY_DYNAMIC_DISPATCH(ImplicitPatchGemmT)(src, images, out_ch, w, bias, y);
}

void ImplicitBackwardFilter(const TapSource& src, int64_t images, int64_t out_ch,
                            const float* dy, int64_t per, float* dw) {
  HWY_DYNAMIC_DISPATCH(ImplicitBackwardFilterT)(src, images, out_ch, dy, per, dw);
}

#if HWY_ARCH_X86 && (HWY_TARGETS & HWY_AVX2) && (HWY_TARGETS & HWY_AVX3)
bool NarrowImplicitApplies(const TapSource& s) {
  return SplitOpAvx3Dispatched() && !SlotsApply(s, 16) && SlotsApply(s, 8);
}
void NarrowImplicitPatchGemm(const TapSource& src, int64_t images, int64_t out_ch,
                             const float* w, const float* bias, float* y) {
  N_AVX2::ImplicitPatchGemmT(src, images, out_ch, w, bias, y);
}
#else
bool NarrowImplicitApplies(const TapSource&) { return false; }
void NarrowImplicitPatchGemm(const TapSource& src, int64_t images, int64_t out_ch,
                             const float* w, const float* bias, float* y) {
  ImplicitPatchGemm(src, images, out_ch, w, bias, y);
}
#endif

}  // namespace kernels
}  // namespace xw
#endif  // HWY_ONCE
