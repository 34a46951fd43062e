// The implicit-GEMM convolutions' target-independent parts: the layout of a
// padded (phase-split) image, the padding copy for stride 1 (strided ones
// are dispatched: tap_gather.cc), packed weights, the image loop, and which
// geometries the tiles of the dispatched SIMD target take.
#include <algorithm>
#include <cstring>
#include <vector>

#include "src/kernels/conv_internal.h"
#include "src/kernels/implicit_internal.h"
#include "src/thread_scratch.h"
#include "xwires/core/parallel.h"
#include "xwires/core/simd_target.h"
#include "xwires/core/tensor.h"

namespace xw {
namespace kernels {

bool SlotsApply(const TapSource& s, int64_t lanes) {
  return s.ow % lanes == 0 || (lanes >= 2 && 2 * s.ow == lanes && s.oh % 2 == 0);
}

ImplicitLayout MakeLayout(const TapSource& s, int64_t lanes) {
  ImplicitLayout l;
  const int st = s.stride;
  l.lanes = lanes;
  l.taps = s.channels * s.kh * s.kw;
  l.plane = s.oh * s.ow;
  l.ph = s.oh + (s.kh - 1) / st;
  l.pw = s.ow + (s.kw - 1) / st;
  // Only the phases some tap reads: a 1x1 stride-2 shortcut reads one of
  // four, and copying the other three took 3/4 of its padding time.
  l.phase_rows = std::min(st, s.kh);
  l.phase_cols = std::min(st, s.kw);
  l.image_floats = l.phase_rows * l.phase_cols * s.channels * l.ph * l.pw;
  l.half = lanes >= 2 && 2 * s.ow == lanes;
  l.tap.resize(l.taps);
  for (int64_t c = 0; c < s.channels; ++c) {
    for (int a = 0; a < s.kh; ++a) {
      for (int b = 0; b < s.kw; ++b) {
        const int64_t phase = (a % st) * l.phase_cols + b % st;
        l.tap[(c * s.kh + a) * s.kw + b] =
            ((phase * s.channels + c) * l.ph + a / st) * l.pw + b / st;
      }
    }
  }
  // Pixel-vector slots only where they tile the grid (channel-vector tiles
  // read pixels one by one and take any grid).
  l.slots = SlotsApply(s, lanes) ? l.plane / lanes : 0;
  l.base.resize(2 * l.slots);
  for (int64_t sl = 0; sl < l.slots; ++sl) {
    if (l.half) {
      l.base[2 * sl] = 2 * sl * l.pw;
      l.base[2 * sl + 1] = (2 * sl + 1) * l.pw;
    } else {
      const int64_t per_row = s.ow / lanes;
      l.base[2 * sl] = l.base[2 * sl + 1] = (sl / per_row) * l.pw + lanes * (sl % per_row);
    }
  }
  return l;
}

// pad[c][i][j] = source (n, c, i - pad_top, j - pad_left), zero outside the
// source, for stride 1; other strides go to the dispatched PadImageStrided.
// Plain loops that the compiler vectorizes: a 32-float row is two vector
// moves and two scalar borders (0.38 ms per batch of 128 16-channel 32x32
// images on Zen 4, where Highway's masked chunks took 0.52). GCC would turn
// the short border loops back into memset calls.
#if defined(__GNUC__) && !defined(__clang__)
#define XWIRES_NO_MEMSET_CALLS __attribute__((optimize("no-tree-loop-distribute-patterns")))
#else
#define XWIRES_NO_MEMSET_CALLS
#endif

// PadImage's rows for a source W floats wide padded by one column on each
// side (3x3 'same' convolutions, stride 1): constant-length copies, which
// the compiler turns into a few vector moves with no loop (the general
// loops' run-time bounds cost as much as the copy for 8-32 float rows).
template <int W>
XWIRES_NO_MEMSET_CALLS void PadPlanesOneColumn(const TapSource& s, const ImplicitLayout& l,
                                               int64_t n, float* pad, int64_t plane_stride) {
  for (int64_t c = 0; c < s.channels; ++c) {
    const float* src = s.data + (n * s.channels + c) * s.h * W;
    float* dst = pad + c * plane_stride;
    for (int64_t i = 0; i < l.ph; ++i, dst += W + 2) {
      const int64_t u = i - s.pad_top;
      if (u < 0 || u >= s.h) {
        for (int j = 0; j < W + 2; ++j) dst[j] = 0.0f;
        continue;
      }
      dst[0] = 0.0f;
      std::memcpy(dst + 1, src + u * W, sizeof(float) * W);
      dst[W + 1] = 0.0f;
    }
  }
}

XWIRES_NO_MEMSET_CALLS void PadImage(const TapSource& s, const ImplicitLayout& l, int64_t n,
                                     float* pad, int64_t plane_stride) {
  if (s.stride != 1) return PadImageStrided(s, l, n, pad, plane_stride);
  if (plane_stride == 0) plane_stride = l.ph * l.pw;
  if (s.pad_left == 1 && l.pw == s.w + 2) {
    if (s.w == 32) return PadPlanesOneColumn<32>(s, l, n, pad, plane_stride);
    if (s.w == 16) return PadPlanesOneColumn<16>(s, l, n, pad, plane_stride);
    if (s.w == 8) return PadPlanesOneColumn<8>(s, l, n, pad, plane_stride);
  }
  // Columns j in [lo, hi) read source column j - pad_left; the rest are 0.
  const int64_t first = -s.pad_left;
  const int64_t lo = std::clamp<int64_t>(first >= 0 ? 0 : -first, 0, l.pw);
  const int64_t hi = std::clamp<int64_t>(first > s.w - 1 ? 0 : s.w - first, lo, l.pw);
  for (int64_t c = 0; c < s.channels; ++c) {
    const float* src = s.data + (n * s.channels + c) * s.h * s.w;
    float* dst = pad + c * plane_stride;
    for (int64_t i = 0; i < l.ph; ++i, dst += l.pw) {
      const int64_t u = i - s.pad_top;
      if (u < 0 || u >= s.h) {
        for (int64_t j = 0; j < l.pw; ++j) dst[j] = 0.0f;
        continue;
      }
      const float* row = src + u * s.w + first;
      for (int64_t j = 0; j < lo; ++j) dst[j] = 0.0f;
      for (int64_t j = lo; j < hi; ++j) dst[j] = row[j];
      for (int64_t j = hi; j < l.pw; ++j) dst[j] = 0.0f;
    }
  }
}

ScratchFloats PackWeightBlocks(const float* w, int64_t out_ch, int64_t taps, int rows) {
  ScratchFloats wp(out_ch * taps);
  for (int64_t o0 = 0; o0 < out_ch;) {
    const int r = TileRows(out_ch - o0, rows);
    for (int64_t t = 0; t < taps; ++t) {
      for (int i = 0; i < r; ++i) wp[o0 * taps + t * r + i] = w[(o0 + i) * taps + t];
    }
    o0 += r;
  }
  return wp;
}

void ForEachPaddedImage(const TapSource& src, const ImplicitLayout& l, int64_t images,
                        int64_t tiles,
                        const std::function<void(int64_t, const float*, Prefetcher&)>& body) {
  const int64_t source_floats = src.channels * src.h * src.w;
  ParallelFor(images, 4, [&](int64_t n0, int64_t n1) {
    float* pad = ThreadScratch(kPadSlot, l.image_floats);
    for (int64_t n = n0; n < n1; ++n) {
      PadImage(src, l, n, pad);
      // The next image's source, fetched while this one's tiles compute.
      Prefetcher next(n + 1 < n1 ? src.data + (n + 1) * source_floats : nullptr,
                      source_floats, tiles);
      body(n, pad, next);
    }
  });
}

std::vector<ScratchFloats> FilterRounds(
    int64_t images, int64_t per, int64_t partial_floats, int64_t tiles,
    const std::function<void(int64_t, int64_t, int64_t)>& prepare,
    const std::function<void(float*, int64_t, int64_t, int64_t, int64_t, bool)>& tile) {
  const int64_t batches = (images + per - 1) / per;
  const int64_t groups = std::min<int64_t>(batches, 4);
  std::vector<ScratchFloats> partials(groups);
  for (auto& p : partials) p.resize(partial_floats);
  const auto first_batch = [&](int64_t g) { return g * batches / groups; };
  // Batch round r of every group that has one: (group, first image, count).
  struct Batch {
    int64_t group, n0, k;
  };
  for (int64_t r = 0;; ++r) {
    std::vector<Batch> round;
    std::vector<int64_t> image_start{0};
    for (int64_t g = 0; g < groups; ++g) {
      const int64_t b = first_batch(g) + r;
      if (b >= first_batch(g + 1)) continue;
      const int64_t n0 = b * per, k = std::min(per, images - n0);
      round.push_back({g, n0, k});
      image_start.push_back(image_start.back() + k);
    }
    if (round.empty()) break;
    ParallelFor(image_start.back(), 1, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) {
        const size_t b = std::upper_bound(image_start.begin(), image_start.end(), i) -
                         image_start.begin() - 1;
        const int64_t j = i - image_start[b];
        prepare(round[b].group, j, round[b].n0 + j);
      }
    });
    const int64_t tasks = static_cast<int64_t>(round.size()) * tiles;
    ParallelFor(tasks, std::max<int64_t>(1, tasks / 64), [&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) {
        const Batch& b = round[t / tiles];
        tile(partials[b.group].data(), b.group, b.n0, b.k, t % tiles, r == 0);
      }
    });
  }
  return partials;
}

void TapsToFilter(const std::vector<const float*>& parts, int64_t taps, int64_t out_ch,
                  float* dw) {
  // The parts' sum in [taps][out_ch], added part after part (the bits of
  // adding them in order per entry), then the dispatched transpose into
  // [out_ch][taps], 16 channels per task. A scalar 16 x 16 block loop took
  // 3% of a VGG-11 step under tf (four parts of 512 x 4608).
  const float* sum = parts[0];
  ScratchFloats total;
  if (parts.size() > 1) {
    total.resize(taps * out_ch);
    SumPartials(parts, taps * out_ch, total.data());
    sum = total.data();
  }
  TransposeMatrix(sum, taps, out_ch, dw);
}

std::vector<int64_t> PixelOffsets(const ImplicitLayout& l, int64_t ow) {
  std::vector<int64_t> pix(l.plane);
  for (int64_t j = 0; j < l.plane; ++j) pix[j] = (j / ow) * l.pw + j % ow;
  return pix;
}

void PixelMajor(const float* g, int64_t out_ch, int64_t plane, float* gt) {
  // Channels are the panel's rows, pixels its columns: the dispatched
  // transpose, four channels per interleaved store.
  TransposeToPanel(g, plane, plane, out_ch, gt);
}

bool ChannelTilesApply(const ImplicitLayout& l, int64_t out_ch) {
  // A tile streams taps x 4 vectors of weights and those channels of the
  // batch's gradient; past ~1k taps (VGG's 256-channel layers) they leave L2
  // and the pixel-vector tiles, whose operands stay in L1, are faster.
  return l.half && out_ch % l.lanes == 0 && l.taps <= 1024;
}

namespace {

// Pixel vectors end every batch in one horizontal sum per output; on planes
// of up to 16 x 16 pixels, or with 128 taps or more, that costs more than
// channel vectors' transposed gradient (measured on AVX2: VGG's 8x8 and 4x4
// layers 1.4-2x faster with channels, ResNet's 16-channel 32x32 layers
// 1.15x; 32x32 planes with 27 taps 1.5x slower). Channel vectors read
// pixels one by one, so they take any output grid.
bool ChannelFilterShape(int64_t plane, int64_t out_ch, int64_t lanes, int64_t taps) {
  return out_ch % lanes == 0 && (plane <= 256 || taps >= 128);
}

}  // namespace

bool ChannelFilterApplies(const ImplicitLayout& l, int64_t out_ch) {
  return ChannelFilterShape(l.plane, out_ch, l.lanes, l.taps);
}

bool ImplicitApplies(const TapSource& s) { return SlotsApply(s, KernelFloatLanes()); }

bool ImplicitFilterApplies(const TapSource& s, int64_t out_ch) {
  return ImplicitApplies(s) ||
         ChannelFilterShape(s.oh * s.ow, out_ch, KernelFloatLanes(), s.channels * s.kh * s.kw);
}

int ChainCount(const ReduceSpec& spec) {
  if (spec.order == ReduceOrder::kSequential) return 1;
  if (spec.order == ReduceOrder::kLanes) return spec.lanes;
  return 0;
}

bool ExactApplies(const TapSource& s, const ReduceSpec& spec) {
  return ChainCount(spec) > 0 && ImplicitApplies(s);
}

bool ExactFilterApplies(const TapSource& s, int64_t out_ch, const ReduceSpec& spec,
                        bool per_chain_bound) {
  // Every chain of every output is reloaded once per image chunk: keep that
  // state (K x taps x out_ch floats) within L2, else the ordered products win.
  const int64_t chains = per_chain_bound ? 1 : ChainCount(spec);
  const int64_t state = chains * s.channels * s.kh * s.kw * out_ch;
  return ChainCount(spec) > 0 && out_ch % KernelFloatLanes() == 0 && state <= (int64_t{1} << 19);
}

}  // namespace kernels
}  // namespace xw
