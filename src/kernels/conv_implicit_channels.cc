// Channel-vector tiles of the implicit-GEMM convolution: for output rows of
// L/2 pixels (L = the target's float lanes) a pixel vector spans two rows and
// costs a shuffle per load, so these tiles put L output channels in the
// lanes instead and broadcast one patch entry per pixel. The arithmetic per
// output is the same FMA chain over the taps in index order (forward); the
// filter gradient accumulates each (o, t) over the batch's pixels in order.
// Compiled per SIMD target; lanes are channels, so the bits are the same on
// every target.
#include <algorithm>
#include <vector>

#include "src/kernels/conv_internal.h"
#include "src/kernels/implicit_internal.h"
#include "src/thread_scratch.h"
#include "xwires/core/parallel.h"
#include "xwires/core/tensor.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/kernels/conv_implicit_channels.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "src/kernels/hwy_ops.h"
#include "src/kernels/implicit_tiles-inl.h"

HWY_BEFORE_NAMESPACE();
namespace xw {
namespace kernels {
namespace HWY_NAMESPACE {
namespace {

// y[(o0 + L*v + i) * plane + j0 + j] = sum over taps t in order of
// wq[t][o0 + L*v + i] * patch(t, pixel j0 + j) (+ bias): VO channel vectors
// x NJ pixels. wq points at [0][o0] of the [taps][out_ch] weights, y at
// channel o0, pixel j0 of the image. Never inlined: inlined into the image
// lambda, the remainder tiles (4 of an 8x8 plane's 64 pixels) kept every
// accumulator on the stack (AVX3: ResNet's 64-channel 8x8 forward and data
// gradient 95 -> 104 GFLOP/s outlined; AVX2 unchanged).
template <int VO, int NJ>
HWY_NOINLINE void ForwardTile(const float* img, const ImplicitLayout& l, const int64_t* pix,
                              const float* wq, int64_t out_ch, const float* bias, float* y) {
  const DF d;
  VF acc[NJ][VO];
  for (int j = 0; j < NJ; ++j) {
    for (int v = 0; v < VO; ++v) acc[j][v] = hn::Zero(d);
  }
  const int64_t* tap = l.tap.data();
  for (int64_t t = 0; t < l.taps; ++t) {
    VF w[VO];
    for (int v = 0; v < VO; ++v) w[v] = hn::LoadU(d, wq + t * out_ch + kLanes * v);
    const float* p = img + tap[t];
    for (int j = 0; j < NJ; ++j) {
      const VF x = hn::Set(d, p[pix[j]]);
      for (int v = 0; v < VO; ++v) acc[j][v] = Accumulate<true>(acc[j][v], w[v], x);
    }
  }
  // Lanes are channels, a plane apart in y: store each vector and scatter.
  HWY_ALIGN float out[kLanes];
  for (int v = 0; v < VO; ++v) {
    const VF b = bias ? hn::LoadU(d, bias + kLanes * v) : hn::Zero(d);
    for (int j = 0; j < NJ; ++j) {
      hn::Store(bias ? hn::Add(acc[j][v], b) : acc[j][v], d, out);
      float* dst = y + kLanes * v * l.plane + j;
      for (int i = 0; i < kLanes; ++i) dst[i * l.plane] = out[i];
    }
  }
}

// chain[u * L*VO + L*v + i] = the FMA chain, started at zero or resumed
// from chain, over the batch's pixels q in [q0, q1) (q = image * plane +
// pixel, in order) of dy(o0 + L*v + i) * patch(t0 + u): VO channel vectors x
// U taps. dyt is the batch's gradient as [image][pixel][out_ch] at channel
// o0; tap u of image i is at pads + i * image_stride + tap[u] (tap points at
// t0's offset).
template <int VO, int U>
void FilterTile(const float* pads, int64_t image_stride, const int64_t* tap, const float* dyt,
                int64_t q0, int64_t q1, int64_t out_ch, const ImplicitLayout& l,
                const int64_t* pix, bool resume, float* chain) {
  const DF d;
  VF acc[U][VO];
  for (int u = 0; u < U; ++u) {
    for (int v = 0; v < VO; ++v) {
      acc[u][v] = resume ? hn::LoadU(d, chain + (u * VO + v) * kLanes) : hn::Zero(d);
    }
  }
  for (int64_t i = q0 / l.plane; i * l.plane < q1; ++i) {
    const float* img = pads + i * image_stride;
    const float* g = dyt + i * l.plane * out_ch;
    const int64_t j1 = std::min(l.plane, q1 - i * l.plane);
    for (int64_t j = std::max<int64_t>(0, q0 - i * l.plane); j < j1; ++j) {
      VF dv[VO];
      for (int v = 0; v < VO; ++v) dv[v] = hn::LoadU(d, g + j * out_ch + kLanes * v);
      const float* p = img + pix[j];
      for (int u = 0; u < U; ++u) {
        const VF x = hn::Set(d, p[tap[u]]);
        for (int v = 0; v < VO; ++v) acc[u][v] = Accumulate<true>(acc[u][v], dv[v], x);
      }
    }
  }
  for (int u = 0; u < U; ++u) {
    for (int v = 0; v < VO; ++v) hn::StoreU(acc[u][v], d, chain + (u * VO + v) * kLanes);
  }
}

// FilterTile as a function of its own, which 16-lane targets call: inlined
// into the task lambda, GCC allocated their registers worse (AVX3, one
// thread: ResNet's 16-, 32- and 64-channel filter gradients 74 / 76 / 88 ->
// 80 / 89 / 91 GFLOP/s outlined), while the AVX2 tiles ran 5% faster inlined.
template <int VO, int U>
HWY_NOINLINE void FilterTileOutlined(const float* pads, int64_t image_stride, const int64_t* tap,
                                     const float* dyt, int64_t q0, int64_t q1, int64_t out_ch,
                                     const ImplicitLayout& l, const int64_t* pix, bool resume,
                                     float* chain) {
  FilterTile<VO, U>(pads, image_stride, tap, dyt, q0, q1, out_ch, l, pix, resume, chain);
}

// Pixels of a filter-gradient batch per sweep over the taps.
constexpr int64_t kPixelBlock = 256;

// The tap offsets of a batch of `per` padded images stored channel-major:
// plane (phase, channel) of image i at (plane * per + i) * ph * pw. A tap
// tile then reads one contiguous run of planes across the batch instead of
// one cache line per image spread over the whole batch (VGG's 512-channel
// 2x2 layers: a 4 MiB batch, re-read from L3 by every channel block).
std::vector<int64_t> ChannelMajorTaps(const ImplicitLayout& l, int64_t per) {
  const int64_t cf = l.ph * l.pw;
  std::vector<int64_t> tap(l.taps);
  for (int64_t t = 0; t < l.taps; ++t) tap[t] = l.tap[t] / cf * per * cf + l.tap[t] % cf;
  return tap;
}

}  // namespace

void ChannelPatchGemm(const TapSource& src, const ImplicitLayout& l, int64_t images,
                      int64_t out_ch, const float* w, const float* bias, float* y) {
  ScratchFloats wq(l.taps * out_ch);  // [taps][out_ch]
  for (int64_t o = 0; o < out_ch; ++o) {
    for (int64_t t = 0; t < l.taps; ++t) wq[t * out_ch + o] = w[o * l.taps + t];
  }
  const std::vector<int64_t> pix = PixelOffsets(l, src.ow);
  const int64_t tiles = (out_ch + 63) / 64 * ((l.plane + 5) / 6);
  ForEachPaddedImage(src, l, images, tiles, [&](int64_t n, const float* pad, Prefetcher& next) {
    float* yn = y + n * out_ch * l.plane;
    for (int64_t o0 = 0; o0 < out_ch;) {
      const int vo = ChannelVectors(out_ch - o0);
      for (int64_t j0 = 0; j0 < l.plane;) {
        next.Step();
        const int nj = TileRows(l.plane - j0, kMaxVectors >= 4 ? 6 : 4);
        DispatchTile<6, kMaxVectors>(nj, vo, [&]<int NJ, int VO>() {
          ForwardTile<VO, NJ>(pad, l, pix.data() + j0, wq.data() + o0, out_ch,
                              bias ? bias + o0 : nullptr, yn + o0 * l.plane + j0);
        });
        j0 += nj;
      }
      o0 += int64_t{kLanes} * vo;
    }
  });
}

void ChannelBackwardFilter(const TapSource& src, const ImplicitLayout& l, int64_t images,
                           int64_t out_ch, const float* dy, int64_t per, float* dw) {
  const std::vector<int64_t> pix = PixelOffsets(l, src.ow);
  std::vector<int64_t> blocks{0};  // first output channel of each channel block
  while (blocks.back() < out_ch) {
    blocks.push_back(blocks.back() + kLanes * ChannelVectors(out_ch - blocks.back()));
  }
  // Per group: its batch padded (channel-major where a pixel block spans
  // more than 4 images; measured on AVX2, no gain on larger planes), and its
  // gradient as [image][pixel][out_ch].
  const int64_t groups = std::min<int64_t>((images + per - 1) / per, 4);
  // A round's tasks are its batches x channel blocks x tap parts. The parts
  // keep both threads busy where there are few of the others (one 64-channel
  // block of an 8x8 layer at batch 32 was one task: the whole filter
  // gradient on one thread). Parts own disjoint outputs and each chain still
  // runs over the batch in order, so the bits do not depend on them.
  const int64_t channel_blocks = static_cast<int64_t>(blocks.size()) - 1;
  const int64_t parts = TapParts(l.taps, groups * channel_blocks);
  const bool channel_major = l.plane * 4 < kPixelBlock;
  const int64_t cf = l.ph * l.pw, image_stride = channel_major ? cf : l.image_floats;
  const std::vector<int64_t> tap = channel_major ? ChannelMajorTaps(l, per) : l.tap;
  ScratchFloats pads(groups * per * l.image_floats), dyt(groups * per * l.plane * out_ch);
  const auto partials = FilterRounds(
      images, per, l.taps * out_ch, channel_blocks * parts,
      [&](int64_t g, int64_t i, int64_t n) {
        PadImage(src, l, n, pads.data() + g * per * l.image_floats + i * image_stride,
                 channel_major ? per * cf : 0);
        PixelMajor(dy + n * out_ch * l.plane, out_ch, l.plane,
                   dyt.data() + (g * per + i) * l.plane * out_ch);
      },
      [&](float* part, int64_t g, int64_t, int64_t k, int64_t ti, bool first) {
        // One channel block over one part of the taps (whole tiles of 6):
        // blocks of kPixelBlock pixels sweep the part's tap tiles, so that
        // their gradient rows stay in L1; each tile's chain over the batch
        // resumes from `chains`.
        const int64_t o0 = blocks[ti / parts], p = ti % parts;
        const int64_t tb = TapPartBegin(l.taps, p, parts);
        const int64_t te = TapPartBegin(l.taps, p + 1, parts);
        const int vo = ChannelVectors(out_ch - o0);
        const int64_t width = int64_t{kLanes} * vo;
        float* chains = ThreadScratch(1, l.taps * width);
        const float* gp = pads.data() + g * per * l.image_floats;
        const float* gd = dyt.data() + g * per * l.plane * out_ch + o0;
        for (int64_t q0 = 0; q0 < k * l.plane; q0 += kPixelBlock) {
          const int64_t q1 = std::min(k * l.plane, q0 + kPixelBlock);
          for (int64_t t0 = tb; t0 < te;) {
            const int u = TileRows(te - t0, 6);
            DispatchTile<6, kMaxVectors>(u, vo, [&]<int U, int VO>() {
              constexpr auto tile = kLanes >= 16 ? FilterTileOutlined<VO, U> : FilterTile<VO, U>;
              tile(gp, image_stride, tap.data() + t0, gd, q0, q1, out_ch, l, pix.data(), q0 > 0,
                   chains + t0 * width);
            });
            t0 += u;
          }
        }
        // The batch's chains into the group's partial: assign, or add in order.
        const DF d;
        for (int64_t t = tb; t < te; ++t) {
          for (int64_t c = 0; c < width; c += kLanes) {
            float* dst = part + t * out_ch + o0 + c;
            const VF x = hn::LoadU(d, chains + t * width + c);
            hn::StoreU(first ? x : hn::Add(hn::LoadU(d, dst), x), d, dst);
          }
        }
      });
  TapsToFilter(PartPointers(partials), l.taps, out_ch, dw);
}

}  // namespace HWY_NAMESPACE
}  // namespace kernels
}  // namespace xw
HWY_AFTER_NAMESPACE();
