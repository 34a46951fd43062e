// Internal: the implicit-GEMM convolution's layout, padding and helpers,
// shared by the pixel-vector tiles (conv_implicit.cc), the channel-vector
// tiles (conv_implicit_channels.cc) and the direct algorithm's exact-order
// tiles (conv_implicit_exact.cc). Everything here is target-independent
// data movement (implicit_layout.cc); the tiles themselves are compiled per
// SIMD target (implicit_tiles-inl.h) and sized by its lanes.
#ifndef XWIRES_SRC_KERNELS_IMPLICIT_INTERNAL_H_
#define XWIRES_SRC_KERNELS_IMPLICIT_INTERNAL_H_

#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

#include "hwy/cache_control.h"
#include "src/kernels/conv_internal.h"
#include "src/kernels/prefetcher.h"
#include "xwires/core/tensor.h"

namespace xw {
namespace kernels {

// ThreadScratch slot of the padded images inside the drivers' ParallelFor
// bodies (slot 1 holds a body's second buffer: transposed gradients or lane
// chains). The patch-matrix paths use slots 0-2 only outside these calls.
inline constexpr int kPadSlot = 0;

// Where every tap of every output slot reads in a padded image.
struct ImplicitLayout {
  int64_t taps = 0, plane = 0;
  int64_t lanes = 1;           // pixels per slot: the SIMD target's float lanes
  int64_t slots = 0;           // lanes-pixel slots; 0 unless ImplicitApplies
  int64_t ph = 0, pw = 0;      // padded (phase) image extents
  // Phase rows and columns kept: those some tap reads, min(stride, kernel).
  int64_t phase_rows = 1, phase_cols = 1;
  int64_t image_floats = 0;  // one padded image: phase_rows x phase_cols x channels x ph x pw
  bool half = false;           // rows of lanes/2 pixels: a slot is two rows, two half loads
  std::vector<int64_t> tap;    // [taps] offset of tap t
  std::vector<int64_t> base;   // [slots][2] offsets of a slot's (half) rows
};

// The layout of the taps of source `s` for slots of `lanes` pixels.
ImplicitLayout MakeLayout(const TapSource& s, int64_t lanes);

// Whether pixel-vector slots of `lanes` pixels tile the output grid: rows a
// multiple of lanes wide, or lanes/2 wide with an even number of rows.
bool SlotsApply(const TapSource& s, int64_t lanes);

// Writes image n of the source, as the layout reads it, to pad
// (l.image_floats floats). Its ph x pw planes (one per phase and channel)
// are plane_stride floats apart: l.ph * l.pw (0) packs them, a multiple
// interleaves the planes of several images (as the channel-vector filter
// gradient lays out its batch). Copies only, so every SIMD target writes the
// same floats. Stride 1 is plain code (implicit_layout.cc), other strides
// PadImageStrided, dispatched (tap_gather.cc).
void PadImage(const TapSource& s, const ImplicitLayout& l, int64_t n, float* pad,
              int64_t plane_stride = 0);
void PadImageStrided(const TapSource& s, const ImplicitLayout& l, int64_t n, float* pad,
                     int64_t plane_stride);

// The outputs of slots [s, s_end) of `rows` planes `plane` floats apart
// from y (L = lanes floats per slot), fetched ahead of the tiles that store
// them: a store that misses holds the store queue until its line arrives,
// and the stores behind it wait (conv_implicit_exact.cc measures it).
// No early return for an empty range: with one, GCC 12 (-O3) deleted the
// whole function, fetches included, from both tiles' drivers (prefetches
// are no side effect to it); a zero trip count keeps them.
// tests/core/prefetch_kept_test.sh checks the compiled drivers.
inline void PrefetchSlotOutputs(const float* y, int64_t plane, int64_t rows, int64_t s,
                                int64_t s_end, int64_t lanes) {
  const int64_t fetched_rows = s < s_end ? rows : 0;
  for (int64_t o = 0; o < fetched_rows; ++o) {
    hwy::Prefetch(y + o * plane + lanes * s);
    hwy::Prefetch(y + o * plane + lanes * s_end - 1);
  }
}

// Largest tile height of {8, 6, 4, 2, 1} up to `most` that fits.
inline int TileRows(int64_t left, int most) {
  for (int r : {8, 6, 4, 2, 1}) {
    if (r <= most && r <= left) return r;
  }
  return 1;
}

// The filter gradients' tap parts: enough parts that `blocks` other tasks
// times the parts make about 8 (at least 1, at most one per 6-tap tile),
// and part p's first tap, on a multiple of 6 (whole tiles); part `parts`
// begins at taps. Parts own disjoint outputs, so they do not change bits.
inline int64_t TapParts(int64_t taps, int64_t blocks) {
  return std::clamp<int64_t>(8 / blocks, 1, (taps + 5) / 6);
}
inline int64_t TapPartBegin(int64_t taps, int64_t p, int64_t parts) {
  return std::min(taps, (taps + 5) / 6 * p / parts * 6);
}

// Weights [out_ch, taps] in output-channel blocks of TileRows(., rows) rows:
// block [o0, o0 + R) as wp[o0 * taps + t * R + r], for broadcasting.
ScratchFloats PackWeightBlocks(const float* w, int64_t out_ch, int64_t taps, int rows = 6);

// body(n, pad, next) for every image n < images, in parallel chunks of 4
// images: pad is image n as the layout reads it (PadImage, per-thread
// scratch), and next prefetches image n+1's source over `tiles` Step()s.
// The body must not call ParallelFor.
void ForEachPaddedImage(const TapSource& src, const ImplicitLayout& l, int64_t images,
                        int64_t tiles,
                        const std::function<void(int64_t, const float*, Prefetcher&)>& body);

// Channel-vector tiles (conv_implicit_channels.cc): output channels in the
// vector lanes and pixels broadcast, for half-slot rows where two-row pixel
// vectors would need a shuffle per load; out_ch a multiple of the lanes.
bool ChannelTilesApply(const ImplicitLayout& l, int64_t out_ch);
// Whether the filter gradient takes the channel-vector tiles: out_ch a
// multiple of the lanes, and rows narrow enough that pixel vectors would end
// each batch in too many horizontal sums for too few terms.
bool ChannelFilterApplies(const ImplicitLayout& l, int64_t out_ch);

// FilterBatches' schedule (conv_internal.h) for register tiles, run in
// rounds so that the tiles of one batch run in parallel too: a layer whose
// images fit one batch (VGG's 4x4 planes at batch 128) would otherwise run
// on one thread. Round r prepares the r-th batch of every group that has
// one, prepare(slot, i, n) for its i-th image n (slot = the group), then
// runs tile(partial, slot, n0, k, ti, first) for each such batch of images
// [n0, n0 + k) and every tile ti < tiles, all in parallel. A tile must write only its own
// outputs of the group's partial (assign when first, else add), so every
// output is summed in FilterBatches' order: the same bits on any thread
// count. Returns the partials, one per group, to be added in group order.
std::vector<ScratchFloats> FilterRounds(
    int64_t images, int64_t per, int64_t partial_floats, int64_t tiles,
    const std::function<void(int64_t, int64_t, int64_t)>& prepare,
    const std::function<void(float*, int64_t, int64_t, int64_t, int64_t, bool)>& tile);

// dw[o * taps + t] = parts[0][t * out_ch + o] + parts[1][...] + ..., the
// parts added in order: tap-major filter-gradient sums back to [out_ch,
// taps], summed part by part and then transposed by the dispatched
// TransposeToPanel, in parallel.
void TapsToFilter(const std::vector<const float*>& parts, int64_t taps, int64_t out_ch,
                  float* dw);

// gt[j * out_ch + o] = g[o * plane + j]: one image's gradient pixel-major,
// for the channel-vector filter tiles.
void PixelMajor(const float* g, int64_t out_ch, int64_t plane, float* gt);

// Chains of a lanesK (or sequential: K = 1) order; 0 if a tile cannot keep
// it (the exact-order tiles' orders).
int ChainCount(const ReduceSpec& spec);

// Offsets of the output pixels j in [0, l.plane) of an ow-wide output grid
// in a padded (phase) plane of the layout.
std::vector<int64_t> PixelOffsets(const ImplicitLayout& l, int64_t ow);

}  // namespace kernels
}  // namespace xw

#endif  // XWIRES_SRC_KERNELS_IMPLICIT_INTERNAL_H_
