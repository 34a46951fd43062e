// kDirect convolutions on the implicit-GEMM tiles, with every output's
// reduction in exactly the order conv.h specifies for the direct algorithm
// (the bits of xw::Dot over the zero-padded terms), for the orders a
// register tile can keep: sequential and lanesK, with or without FMA.
//
// lanesK is K chains, term i into chain i mod K, then a fixed tree over the
// chains. A tile runs each chain as its own pass over every K-th term (so the
// registers hold one chain at a time) and the tree runs on the stored chain
// results. The filter gradient sums over (n, p, q) in index order; its tiles
// keep the chains of all outputs in memory and run over the batch in image
// chunks, each output channel in a vector lane.
#include <algorithm>
#include <vector>

#include "src/kernels/conv_internal.h"
#include "src/kernels/implicit_internal.h"
#include "src/thread_scratch.h"
#include "xwires/core/parallel.h"
#include "xwires/core/status.h"
#include "xwires/core/tensor.h"

#if defined(__AVX512F__)

namespace xw {
namespace kernels {

namespace {

// Chains of a lanesK (or sequential: K = 1) order; 0 if a tile cannot keep it.
int ChainCount(const ReduceSpec& spec) {
  if (spec.order == ReduceOrder::kSequential) return 1;
  if (spec.order == ReduceOrder::kLanes) return spec.lanes;
  return 0;
}

// chains[0] (+)= the lanesK tree over chains[0..k) of n floats each, as
// xw::Sum's lanes order combines its lanes: lane l += lane l + w for w = k/2 .. 1.
void CombineChains(float* chains, int k, int64_t n) {
  for (int w = k / 2; w >= 1; w /= 2) {
    for (int l = 0; l < w; ++l) {
      float* __restrict a = chains + l * n;
      const float* __restrict b = chains + (l + w) * n;
      for (int64_t i = 0; i < n; ++i) a[i] += b[i];
    }
  }
}

// dy chains: state[c][t][o] += over the chunk's pixels g (global index
// n*plane + j) with g mod K = c, in order, dy(o, g) * patch(t, g), for VO
// channel vectors x U taps. dyt is the chunk as [image][pixel][out_ch] at
// channel o0, state points at [0][t0][o0].
template <int VO, int U, bool kFma>
void FilterChainTile(const float* pads, const float* dyt, int64_t count, int64_t first_image,
                     int64_t out_ch, const ImplicitLayout& l, const int64_t* pix, int64_t t0,
                     int k, float* state) {
  const int64_t* tap = l.tap.data() + t0;
  for (int c = 0; c < k; ++c) {
    float* st = state + c * l.taps * out_ch;
    __m512 acc[U][VO];
    for (int u = 0; u < U; ++u) {
      for (int v = 0; v < VO; ++v) acc[u][v] = _mm512_loadu_ps(st + u * out_ch + 16 * v);
    }
    for (int64_t i = 0; i < count; ++i) {
      const float* img = pads + i * l.image_floats;
      const float* g = dyt + i * l.plane * out_ch;
      const int64_t j0 = ((c - (first_image + i) * l.plane) % k + k) % k;
      for (int64_t j = j0; j < l.plane; j += k) {
        __m512 d[VO];
        for (int v = 0; v < VO; ++v) d[v] = _mm512_loadu_ps(g + j * out_ch + 16 * v);
        const float* p = img + pix[j];
        for (int u = 0; u < U; ++u) {
          const __m512 x = _mm512_set1_ps(p[tap[u]]);
          for (int v = 0; v < VO; ++v) acc[u][v] = Accumulate(acc[u][v], d[v], x, kFma);
        }
      }
    }
    for (int u = 0; u < U; ++u) {
      for (int v = 0; v < VO; ++v) _mm512_storeu_ps(st + u * out_ch + 16 * v, acc[u][v]);
    }
  }
}

template <bool kFma>
void FilterChainTileAny(int vo, int u, const float* pads, const float* dyt, int64_t count,
                        int64_t first_image, int64_t out_ch, const ImplicitLayout& l,
                        const int64_t* pix, int64_t t0, int k, float* state) {
#define XW_EXF(VO_, U_)                                                                   \
  if (vo == VO_ && u == U_)                                                               \
    return FilterChainTile<VO_, U_, kFma>(pads, dyt, count, first_image, out_ch, l, pix, \
                                          t0, k, state);
#define XW_EXF_VO(VO_) XW_EXF(VO_, 6) XW_EXF(VO_, 4) XW_EXF(VO_, 2) XW_EXF(VO_, 1)
  XW_EXF_VO(4) XW_EXF_VO(2) XW_EXF_VO(1)
#undef XW_EXF_VO
#undef XW_EXF
}

}  // namespace

bool ExactApplies(const TapSource& s, const ReduceSpec& spec) {
  return ChainCount(spec) > 0 && ImplicitApplies(s);
}

bool ExactFilterApplies(const TapSource& s, int64_t out_ch, const ReduceSpec& spec) {
  // Every chain of every output is reloaded once per image chunk: keep that
  // state (K x taps x out_ch floats) within L2, else the ordered products win.
  const int64_t state = int64_t{ChainCount(spec)} * s.channels * s.kh * s.kw * out_ch;
  return ChainCount(spec) > 0 && out_ch % 16 == 0 && state <= (int64_t{1} << 19);
}

void ExactPatchGemm(const TapSource& src, int64_t images, int64_t out_ch, const float* w,
                    const float* bias, const ReduceSpec& spec, float* y) {
  const ImplicitLayout l = MakeLayout(src);
  const int k = ChainCount(spec);
  const AlignedFloats wp = PackWeightBlocks(w, out_ch, l.taps);
  const int64_t tiles = (out_ch + 5) / 6 * ((l.slots + 3) / 4);
  const auto run = l.half ? (spec.fma ? TapTileAny<true, true> : TapTileAny<true, false>)
                          : (spec.fma ? TapTileAny<false, true> : TapTileAny<false, false>);
  ForEachPaddedImage(src, l, images, tiles, [&](int64_t n, const float* pad, Prefetcher& next) {
    float* chains = ThreadScratch(1, int64_t{k} * 6 * 4 * 16);
    float* yn = y + n * out_ch * l.plane;
    for (int64_t o0 = 0; o0 < out_ch;) {
      const int r = TileRows(out_ch - o0, 6);
      for (int64_t s0 = 0; s0 < l.slots;) {
        next.Step();
        const int v = TileRows(l.slots - s0, 4);
        const int64_t n_chain = int64_t{r} * 16 * v;  // one chain's floats
        for (int c = 0; c < k; ++c) {
          run(r, v, pad, l, l.base.data() + 2 * s0, wp.data() + o0 * l.taps, c, k, nullptr,
              chains + c * n_chain, 16 * v);
        }
        CombineChains(chains, k, n_chain);
        for (int i = 0; i < r; ++i) {
          float* out = yn + (o0 + i) * l.plane + 16 * s0;
          const float* got = chains + i * 16 * v;
          const __m512 b = _mm512_set1_ps(bias ? bias[o0 + i] : 0.0f);
          for (int64_t j = 0; j < 16 * v; j += 16) {
            const __m512 y = _mm512_loadu_ps(got + j);
            _mm512_storeu_ps(out + j, bias ? _mm512_add_ps(y, b) : y);
          }
        }
        s0 += v;
      }
      o0 += r;
    }
  });
}

void ExactBackwardFilter(const TapSource& src, int64_t images, int64_t out_ch, const float* dy,
                         const ReduceSpec& spec, float* dw) {
  const ImplicitLayout l = MakeLayout(src);
  const int k = ChainCount(spec);
  const std::vector<int64_t> pix = PixelOffsets(l, src.ow);
  // Chunks of ~2048 output pixels; every chain's state lives across chunks.
  const int64_t chunk = std::clamp<int64_t>(2048 / l.plane, 1, images);
  AlignedFloats state(int64_t{k} * l.taps * out_ch, 0.0f);  // [chain][tap][out_ch]
  AlignedFloats pads(chunk * l.image_floats), dyt(chunk * l.plane * out_ch);
  struct Tile {
    int64_t o0, t0;
    int vo, u;
  };
  std::vector<Tile> tiles;
  for (int64_t o0 = 0; o0 < out_ch;) {
    const int64_t left = out_ch - o0;
    const int vo = left >= 64 ? 4 : left >= 32 ? 2 : 1;
    for (int64_t t0 = 0; t0 < l.taps;) {
      const int u = TileRows(l.taps - t0, 6);
      tiles.push_back({o0, t0, vo, u});
      t0 += u;
    }
    o0 += 16 * vo;
  }
  for (int64_t n0 = 0; n0 < images; n0 += chunk) {
    const int64_t count = std::min(chunk, images - n0);
    ParallelFor(count, 1, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) {
        PadImage(src, l, n0 + i, pads.data() + i * l.image_floats);
        PixelMajor(dy + (n0 + i) * out_ch * l.plane, out_ch, l.plane,
                   dyt.data() + i * l.plane * out_ch);
      }
    });
    ParallelFor(static_cast<int64_t>(tiles.size()), 1, [&](int64_t a, int64_t b) {
      for (int64_t ti = a; ti < b; ++ti) {
        const Tile& tl = tiles[ti];
        auto run = spec.fma ? FilterChainTileAny<true> : FilterChainTileAny<false>;
        run(tl.vo, tl.u, pads.data(), dyt.data() + tl.o0, count, n0, out_ch, l, pix.data(),
            tl.t0, k, state.data() + tl.t0 * out_ch + tl.o0);
      }
    });
  }
  CombineChains(state.data(), k, l.taps * out_ch);
  for (int64_t o = 0; o < out_ch; ++o) {
    for (int64_t t = 0; t < l.taps; ++t) dw[o * l.taps + t] = state[t * out_ch + o];
  }
}

}  // namespace kernels
}  // namespace xw

#else  // !__AVX512F__: the ordered-product kernels of conv_direct.cc serve.

namespace xw {
namespace kernels {

bool ExactApplies(const TapSource&, const ReduceSpec&) { return false; }
bool ExactFilterApplies(const TapSource&, int64_t, const ReduceSpec&) { return false; }
void ExactPatchGemm(const TapSource&, int64_t, int64_t, const float*, const float*,
                    const ReduceSpec&, float*) {
  DieWithStatus(Status::Internal("ExactPatchGemm needs AVX-512 (see ExactApplies)"));
}
void ExactBackwardFilter(const TapSource&, int64_t, int64_t, const float*, const ReduceSpec&,
                         float*) {
  DieWithStatus(Status::Internal("ExactBackwardFilter needs AVX-512 (see ExactFilterApplies)"));
}

}  // namespace kernels
}  // namespace xw

#endif  // __AVX512F__
