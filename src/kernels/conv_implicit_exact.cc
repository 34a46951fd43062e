// kDirect convolutions on the implicit-GEMM tiles, with every output's
// reduction in exactly the order conv.h specifies for the direct algorithm
// (the bits of xw::Dot over the zero-padded terms), for the orders a
// register tile can keep: sequential and lanesK, with or without FMA.
// Compiled per SIMD target; a lane is one output's chain, so every target
// gives the same bits.
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
#include "src/kernels/ordered_gemm.h"
#include "src/thread_scratch.h"
#include "xwires/core/parallel.h"
#include "xwires/core/tensor.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/kernels/conv_implicit_exact.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "src/kernels/hwy_ops.h"
#include "src/kernels/implicit_tiles-inl.h"

HWY_BEFORE_NAMESPACE();
namespace xw {
namespace kernels {
namespace HWY_NAMESPACE {
namespace {

// The lanesK tree over the K chains' floats [i, i + L) (chains[l] at
// l * n), as xw::Sum's lanes order combines its lanes: lane l += lane l + w
// for w = K/2 .. 1; in registers, one pass over the chains.
template <int K>
HWY_INLINE VF ChainTree(const float* chains, int64_t n, int64_t i) {
  const DF d;
  VF v[K];
  for (int l = 0; l < K; ++l) v[l] = hn::LoadU(d, chains + l * n + i);
  for (int w = K / 2; w >= 1; w /= 2) {
    for (int l = 0; l < w; ++l) v[l] = hn::Add(v[l], v[l + w]);
  }
  return v[0];
}

// f.template operator()<K>() for k in {1, 4, 8, 16} (ChainCount's orders).
template <typename F>
HWY_INLINE void DispatchChains(int k, F&& f) {
  switch (k) {
    case 4: return f.template operator()<4>();
    case 8: return f.template operator()<8>();
    case 16: return f.template operator()<16>();
    default: return f.template operator()<1>();
  }
}

// chains[0] = the lanesK tree over chains[0..k) of n floats each (n a
// multiple of L).
void CombineChains(float* chains, int k, int64_t n) {
  if (k == 1) return;
  DispatchChains(k, [&]<int K>() {
    for (int64_t i = 0; i < n; i += kLanes) {
      hn::StoreU(ChainTree<K>(chains, n, i), DF(), chains + i);
    }
  });
}

// One output tile of ExactPatchGemmT, R output channels x V slots: every
// chain of the K-lane order over the taps (in blocks of `block` taps, see
// there), then the chains' tree, plus bias, into y (channel o0's plane,
// from slot s0 on). `chains` holds K x R x V vectors.
template <int K, int R, int V, bool kHalf, bool kFma>
void ChainTile(const float* pad, const ImplicitLayout& l, const int64_t* base, const float* wp,
               int64_t block, const float* bias, float* chains, float* y) {
  const int64_t n_chain = R * V * kLanes;  // one chain's floats
  for (int64_t t0 = 0; t0 < l.taps; t0 += block) {
    const int64_t t1 = std::min(l.taps, t0 + block);
    for (int c = 0; c < K; ++c) {
      TapTile<R, V, kHalf, kFma>(pad, l, base, wp, TapRange{t0 + c, t1, K, t0 > 0}, nullptr,
                                 chains + c * n_chain, kLanes * V);
    }
  }
  const DF d;
  for (int i = 0; i < R; ++i) {
    const VF b = hn::Set(d, bias ? bias[i] : 0.0f);
    for (int j = 0; j < V; ++j) {
      VF yv = ChainTree<K>(chains, n_chain, (i * V + j) * kLanes);
      if (bias) yv = hn::Add(yv, b);
      hn::StoreU(yv, d, y + i * l.plane + j * kLanes);
    }
  }
}

// ChainTile for k in {1, 4, 8, 16}, r in {6, 4, 2, 1}, v in {4, 2, 1} up to
// kMaxVectors.
template <bool kHalf, bool kFma>
void ChainTileAny(int k, int r, int v, const float* pad, const ImplicitLayout& l,
                  const int64_t* base, const float* wp, int64_t block, const float* bias,
                  float* chains, float* y) {
  DispatchChains(k, [&]<int K>() {
    DispatchTile<6, kMaxVectors>(r, v, [&]<int R, int V>() {
      ChainTile<K, R, V, kHalf, kFma>(pad, l, base, wp, block, bias, chains, y);
    });
  });
}

// dy chains: state[c][t][o] += over the chunk's pixels q in [q0, q1) (q =
// image * plane + pixel, global index g = first_image * plane + q) with
// g mod K = c, in order, dy(o, q) * patch(t, q), for VO channel vectors x U
// taps. dyt is the chunk as [image][pixel][out_ch] at channel o0, pads + poff[q]
// is pixel q's first patch entry in its padded image, state points at
// [0][t0][o0]. The chunk's pixels are one flat sequence (poff crosses the
// images), so that a chain's run does not restart at every image: with 8x8
// planes and K = 8 a chain would otherwise take 8 pixels per restart.
template <int VO, int U, bool kFma>
void FilterChainTile(const float* pads, const int64_t* poff, const float* dyt, int64_t q0,
                     int64_t q1, int64_t g0, int64_t out_ch, const ImplicitLayout& l, int64_t t0,
                     int k, float* state) {
  const DF d;
  // Tap u's entry of pixel j is at from[u] + poff[j]: one base + index
  // address per broadcast. With pads + poff[j] + tap[u], GCC added the two
  // indices first, a lea per broadcast, and the unfused loop (12 products,
  // 12 adds, 8 loads per pixel) ran out of dispatch slots, not of pipes.
  const float* from[U];
  for (int u = 0; u < U; ++u) from[u] = pads + l.tap[t0 + u];
  for (int c = 0; c < k; ++c) {
    float* st = state + c * l.taps * out_ch;
    VF acc[U][VO];
    for (int u = 0; u < U; ++u) {
      for (int v = 0; v < VO; ++v) acc[u][v] = hn::LoadU(d, st + u * out_ch + kLanes * v);
    }
    // The first pixel >= q0 of chain c (g0 = first_image * plane).
    const int64_t j0 = q0 + ((c - (g0 + q0) % k) % k + k) % k;
    for (int64_t j = j0; j < q1; j += k) {
      VF dv[VO];
      for (int v = 0; v < VO; ++v) dv[v] = hn::LoadU(d, dyt + j * out_ch + kLanes * v);
      const int64_t o = poff[j];
      for (int u = 0; u < U; ++u) {
        const VF x = hn::Set(d, from[u][o]);
        for (int v = 0; v < VO; ++v) acc[u][v] = Accumulate<kFma>(acc[u][v], dv[v], x);
      }
    }
    for (int u = 0; u < U; ++u) {
      for (int v = 0; v < VO; ++v) hn::StoreU(acc[u][v], d, st + u * out_ch + kLanes * v);
    }
  }
}

// FilterChainTile for vo in {4, 2, 1} up to kMaxVectors and u in {6, 4, 2, 1}.
template <bool kFma>
void FilterChainTileAny(int vo, int u, const float* pads, const int64_t* poff, const float* dyt,
                        int64_t q0, int64_t q1, int64_t g0, int64_t out_ch,
                        const ImplicitLayout& l, int64_t t0, int k, float* state) {
  DispatchTile<6, kMaxVectors>(u, vo, [&]<int U, int VO>() {
    FilterChainTile<VO, U, kFma>(pads, poff, dyt, q0, q1, g0, out_ch, l, t0, k, state);
  });
}

}  // namespace

// Pixels of a filter-gradient chunk per sweep over a task's taps.
constexpr int64_t kPixelBlock = 512;

// Taps per chain in one block of ExactPatchGemmT's lanesK passes.
constexpr int64_t kChainBlock = 64;

void ExactPatchGemmT(const TapSource& src, int64_t images, int64_t out_ch, const float* w,
                     const float* bias, const ReduceSpec& spec, float* y) {
  const ImplicitLayout l = MakeLayout(src, kLanes);
  const int k = ChainCount(spec);
  const ScratchFloats wp = PackWeightBlocks(w, out_ch, l.taps);
  const int64_t tiles = (out_ch + 5) / 6 * ((l.slots + kMaxVectors - 1) / kMaxVectors);
  // Chain c takes taps c, c + k, ...: one pass per chain reads every k-th
  // tap, so with many taps the passes stream the image from L2 k times.
  // Blocks of kChainBlock taps per chain keep a block's patch entries in L1
  // for all k passes; the chains' bits are the same. Below two blocks the
  // extra stores and reloads of the chains cost more than they save
  // (measured on AVX2: 256-channel 3x3 layers 1.35x faster, 64-channel
  // ones 1.1x slower when blocked).
  const int64_t block = k > 1 && l.taps > 2 * k * kChainBlock ? k * kChainBlock : l.taps;
  const auto run = l.half ? (spec.fma ? ChainTileAny<true, true> : ChainTileAny<true, false>)
                          : (spec.fma ? ChainTileAny<false, true> : ChainTileAny<false, false>);
  ForEachPaddedImage(src, l, images, tiles, [&](int64_t n, const float* pad, Prefetcher& next) {
    float* chains = ThreadScratch(1, int64_t{k} * 6 * kMaxVectors * kLanes);
    float* yn = y + n * out_ch * l.plane;
    // Slots outer: a slot's patch rows stay in L1 for every channel tile
    // (the padded image of a 16-channel 32x32 layer does not fit).
    for (int64_t s0 = 0; s0 < l.slots;) {
      const int v = TileRows(l.slots - s0, kMaxVectors);
      // The next slots' outputs, fetched a slot ahead: a store that misses
      // holds the store queue until its line arrives, and the chains'
      // stores of the next tiles queue behind it. Measured on Zen 3 (perf,
      // ResNet's 16-channel layer at batch 128): the tiles' set-up and
      // trees took 20% of the time without the fetch, 14% with it; lanes8
      // against the im2col tiles went from 0.80 to 0.87 (32 channels 0.85
      // to 0.94, 64 channels 0.80 to 0.90).
      PrefetchSlotOutputs(yn, l.plane, out_ch, s0 + v, std::min(l.slots, s0 + v + kMaxVectors),
                          kLanes);
      for (int64_t o0 = 0; o0 < out_ch;) {
        next.Step();
        const int r = TileRows(out_ch - o0, 6);
        run(k, r, v, pad, l, l.base.data() + 2 * s0, wp.data() + o0 * l.taps, block,
            bias ? bias + o0 : nullptr, chains, yn + o0 * l.plane + kLanes * s0);
        o0 += r;
      }
      s0 += v;
    }
  });
}

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
// ExactPatchGemmT's sequential unfused chains (the reference profile's) on
// 8-lane vectors in tiles of 8 channels x 2 slots, for CPUs that split
// 512-bit operations: there a product and a dependent add peak near 85
// GFLOP/s per core on 16-lane vectors in the 6 x 4 tile, and at 97-110 on
// 8-lane vectors in the 8 x 2 tile, as fused tiles do (bench_kernels' peak/
// rows, Zen 4). The same chains, so the same bits. Rows a multiple of 8
// pixels wide.
void NarrowSequentialGemm(const TapSource& src, int64_t images, int64_t out_ch, const float* w,
                          const float* bias, float* y) {
  const ImplicitLayout l = MakeLayout(src, 8);
  const ScratchFloats wp = PackWeightBlocks(w, out_ch, l.taps, 8);
  const int64_t tiles = (out_ch + 7) / 8 * ((l.slots + 1) / 2);
  const TapRange all{0, l.taps, 1, false};
  ForEachPaddedImage(src, l, images, tiles, [&](int64_t n, const float* pad, Prefetcher& next) {
    float* yn = y + n * out_ch * l.plane;
    for (int64_t s0 = 0; s0 < l.slots;) {
      const int v = TileRows(l.slots - s0, 2);
      for (int64_t o0 = 0; o0 < out_ch;) {
        next.Step();
        const int r = TileRows(out_ch - o0, 8);
        TapTileAny<false, false, hn::CappedTag<float, 8>, 8, 2>(
            r, v, pad, l, l.base.data() + 2 * s0, wp.data() + o0 * l.taps, all,
            bias ? bias + o0 : nullptr, yn + o0 * l.plane + 8 * s0, l.plane);
        o0 += r;
      }
      s0 += v;
    }
  });
}
#endif

void ExactBackwardFilterT(const TapSource& src, int64_t images, int64_t out_ch, const float* dy,
                          const ReduceSpec& spec, float* dw) {
  const ImplicitLayout l = MakeLayout(src, kLanes);
  const int k = ChainCount(spec);
  const std::vector<int64_t> pix = PixelOffsets(l, src.ow);
  // Chunks of ~2048 output pixels; every chain's state lives across chunks.
  const int64_t chunk = std::clamp<int64_t>(2048 / l.plane, 1, images);
  std::vector<int64_t> poff(chunk * l.plane);  // pixel q's patch in pads
  for (int64_t q = 0; q < chunk * l.plane; ++q) {
    poff[q] = q / l.plane * l.image_floats + pix[q % l.plane];
  }
  ScratchFloats state(int64_t{k} * l.taps * out_ch, 0.0f);  // [chain][tap][out_ch]
  ScratchFloats pads(chunk * l.image_floats), dyt(chunk * l.plane * out_ch);
  // A task is a channel block over a range of taps; with few channel blocks
  // the taps are split too, so that every thread has work.
  struct Task {
    int64_t o0, t0, t1;
    int vo;
  };
  std::vector<Task> tasks;
  int64_t channel_blocks = 0;
  for (int64_t o0 = 0; o0 < out_ch; ++channel_blocks) {
    o0 += int64_t{kLanes} * ChannelVectors(out_ch - o0);
  }
  const int64_t parts = TapParts(l.taps, channel_blocks);
  for (int64_t o0 = 0; o0 < out_ch;) {
    const int vo = ChannelVectors(out_ch - o0);
    for (int64_t p = 0; p < parts; ++p) {
      tasks.push_back({o0, TapPartBegin(l.taps, p, parts), TapPartBegin(l.taps, p + 1, parts),
                       vo});
    }
    o0 += int64_t{kLanes} * vo;
  }
  const auto run = spec.fma ? FilterChainTileAny<true> : FilterChainTileAny<false>;
  for (int64_t n0 = 0; n0 < images; n0 += chunk) {
    const int64_t count = std::min(chunk, images - n0);
    ParallelFor(count, 1, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) {
        PadImage(src, l, n0 + i, pads.data() + i * l.image_floats);
        PixelMajor(dy + (n0 + i) * out_ch * l.plane, out_ch, l.plane,
                   dyt.data() + i * l.plane * out_ch);
      }
    });
    ParallelFor(static_cast<int64_t>(tasks.size()), 1, [&](int64_t a, int64_t b) {
      for (int64_t ti = a; ti < b; ++ti) {
        const Task& tk = tasks[ti];
        // Blocks of kPixelBlock pixels sweep the task's taps (every chain
        // in turn), so that their gradient rows and patch entries stay in
        // L1; the chains resume from the state, the same bits.
        for (int64_t q0 = 0; q0 < count * l.plane; q0 += kPixelBlock) {
          const int64_t q1 = std::min(count * l.plane, q0 + kPixelBlock);
          for (int64_t t0 = tk.t0; t0 < tk.t1;) {
            const int u = TileRows(tk.t1 - t0, 6);
            run(tk.vo, u, pads.data(), poff.data(), dyt.data() + tk.o0, q0, q1, n0 * l.plane,
                out_ch, l, t0, k, state.data() + t0 * out_ch + tk.o0);
            t0 += u;
          }
        }
      }
    });
  }
  CombineChains(state.data(), k, l.taps * out_ch);
  TapsToFilter({state.data()}, l.taps, out_ch, dw);
}

}  // namespace HWY_NAMESPACE
}  // namespace kernels
}  // namespace xw
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace xw {
namespace kernels {

HWY_EXPORT(ExactPatchGemmT);
HWY_EXPORT(ExactBackwardFilterT);

void ExactPatchGemm(const TapSource& src, int64_t images, int64_t out_ch, const float* w,
                    const float* bias, const ReduceSpec& spec, float* y) {
#if HWY_ARCH_X86 && (HWY_TARGETS & HWY_AVX2) && (HWY_TARGETS & HWY_AVX3)
  // AVX3 on a CPU that splits 512-bit operations: rows 8 pixels wide are
  // half slots of 16 there (two loads and a merge per tap), whole slots of
  // 8 on AVX2. Unfused chains ran 75 GFLOP/s per core on the former and 88
  // on the latter (ResNet's 64-channel 8x8 layers, Zen 4); fused ones were
  // faster on AVX3. The same bits either way: a lane is one output's chain.
  // Sequential unfused chains take 8-lane vectors on AVX3 in an 8 x 2 tile
  // (NarrowSequentialGemm), for which AVX2's 16 registers are too few.
  if (!spec.fma && SplitOpAvx3Dispatched()) {
    // An 8 x 2 tile covers a quarter of the pixels of a 6 x 4 one, so the
    // slots' sweeps over every channel's weights come four times as often:
    // only while the weights stay in L2 (ResNet's; VGG's 128- and
    // 256-channel layers, 1.2-2.4 MiB of weights, ran slower).
    const int64_t weight_bytes = out_ch * src.channels * src.kh * src.kw * 4;
    if (ChainCount(spec) == 1 && src.ow % 8 == 0 && weight_bytes <= (int64_t{256} << 10)) {
      return N_AVX3::NarrowSequentialGemm(src, images, out_ch, w, bias, y);
    }
    if (src.ow == 8) return N_AVX2::ExactPatchGemmT(src, images, out_ch, w, bias, spec, y);
  }
#endif
  HWY_DYNAMIC_DISPATCH(ExactPatchGemmT)(src, images, out_ch, w, bias, spec, y);
}

void ExactBackwardFilter(const TapSource& src, int64_t images, int64_t out_ch, const float* dy,
                         const ReduceSpec& spec, float* dw) {
  HWY_DYNAMIC_DISPATCH(ExactBackwardFilterT)(src, images, out_ch, dy, spec, dw);
}

}  // namespace kernels
}  // namespace xw
#endif  // HWY_ONCE
