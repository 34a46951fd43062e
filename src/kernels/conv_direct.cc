// kDirect convolution: forward, data gradient and filter gradient, each an
// ordered-reduction product (ordered_gemm.h) whose operands are gathered from
// the tensors on the fly, 32 outputs at a time. Every output's reduction runs
// over its full term index range in the order conv.h specifies, with padded
// taps as zero terms, so the bits equal xw::Dot over the zero-padded patch.
#include <algorithm>
#include <cstring>
#include <vector>

#include "src/kernels/conv_internal.h"
#include "src/kernels/implicit_internal.h"
#include "src/kernels/ordered_gemm.h"
#include "xwires/core/parallel.h"
#include "xwires/core/simd_target.h"
#include "xwires/core/tensor.h"

namespace xw {
namespace kernels {

namespace {

// Planes (output pixels per image) below which the filter gradient takes dy
// channel-major once rather than gathering it per task.
constexpr int64_t kSmallPlane = 1024;

// A run of consecutive flattened outputs (n, p, q0 .. q0+len-1) on one output
// row, starting at offset j from the first column of the batch.
struct PixelRun {
  int64_t j, len, n, p, q0;
};

// Splits flattened outputs [begin, end) of an images x oh x ow grid into row runs.
void RowRuns(int64_t begin, int64_t end, int64_t oh, int64_t ow, std::vector<PixelRun>* runs) {
  runs->clear();
  for (int64_t i = begin; i < end;) {
    const int64_t n = i / (oh * ow), rem = i % (oh * ow);
    const int64_t p = rem / ow, q = rem % ow;
    const int64_t len = std::min(ow - q, end - i);
    runs->push_back({i - begin, len, n, p, q});
    i += len;
  }
}

std::vector<PixelRun>& ThreadRuns() {
  thread_local std::vector<PixelRun> runs;
  return runs;
}

TapGather& ThreadGather() {
  thread_local TapGather gather;
  return gather;
}

// B(t, j) = tap t of output column j (flattened (n, p, q) over `total`
// outputs), rows of kPanel floats.
void PackTapRows(const TapSource& s, int64_t total, int64_t j0, int64_t t0, int64_t t1,
                 float* dst) {
  const int64_t valid = std::min<int64_t>(kPanel, total - j0);
  TapGather& gather = ThreadGather();
  gather.Reset(s, j0, j0 + valid);
  gather.TapRows(t0, t1, dst, kPanel);
  if (valid < kPanel) {
    for (int64_t t = t0; t < t1; ++t) {
      std::fill(dst + (t - t0) * kPanel + valid, dst + (t - t0 + 1) * kPanel, 0.0f);
    }
  }
}

// Scatters engine blocks (rows = channels of `out`, columns = flattened
// outputs) into an NCHW tensor with `channels` channels, adding bias if given.
void StoreNchw(const float* blk, int64_t i0, int64_t i1, int64_t j0, int64_t total,
               int64_t channels, int64_t oh, int64_t ow, const float* bias, float* out) {
  const int64_t valid = std::min<int64_t>(kPanel, total - j0);
  std::vector<PixelRun>& runs = ThreadRuns();
  RowRuns(j0, j0 + valid, oh, ow, &runs);
  for (int64_t i = i0; i < i1; ++i) {
    const float* src = blk + (i - i0) * kPanel;
    for (const PixelRun& r : runs) {
      float* d = out + ((r.n * channels + i) * oh + r.p) * ow + r.q0;
      if (bias != nullptr) {
        for (int64_t k = 0; k < r.len; ++k) d[k] = src[r.j + k] + bias[i];
      } else {
        std::copy(src + r.j, src + r.j + r.len, d);
      }
    }
  }
}

// Scatters blocks of a stride phase (sub-grid sub_h x sub_w at offsets
// rh, rw with step g.stride) into dx [N, C, H, W].
void StorePhase(const float* blk, int64_t i0, int64_t i1, int64_t j0, int64_t total,
                const ConvGeometry& g, int64_t sub_h, int64_t sub_w, int rh, int rw,
                float* dx) {
  const int64_t valid = std::min<int64_t>(kPanel, total - j0);
  std::vector<PixelRun>& runs = ThreadRuns();
  RowRuns(j0, j0 + valid, sub_h, sub_w, &runs);
  for (int64_t i = i0; i < i1; ++i) {
    const float* src = blk + (i - i0) * kPanel;
    for (const PixelRun& r : runs) {
      float* d = dx + ((r.n * g.c + i) * g.h + rh + r.p * g.stride) * g.w + rw;
      for (int64_t k = 0; k < r.len; ++k) d[(r.q0 + k) * g.stride] = src[r.j + k];
    }
  }
}

// dx [N, C, H, W] at the phase's pixels (rh + stride*i, rw + stride*j) =
// sub [N, C, sub_h, sub_w] at (i, j) (the phase's rows and columns), or
// zero if sub is null.
void ScatterPhase(const float* sub, const ConvGeometry& g, int rh, int rw, float* dx) {
  const int64_t s = g.stride;
  const int64_t sub_h = (g.h - rh + s - 1) / s, sub_w = (g.w - rw + s - 1) / s;
  ParallelFor(g.n * g.c, 16, [&](int64_t p0, int64_t p1) {
    for (int64_t plane = p0; plane < p1; ++plane) {
      const float* src = sub ? sub + plane * sub_h * sub_w : nullptr;
      float* dst = dx + plane * g.h * g.w + rh * g.w + rw;
      for (int64_t i = 0; i < sub_h; ++i, dst += s * g.w) {
        if (src == nullptr) {
          for (int64_t j = 0; j < sub_w; ++j) dst[j * s] = 0.0f;
          continue;
        }
        for (int64_t j = 0; j < sub_w; ++j) dst[j * s] = src[j];
        src += sub_w;
      }
    }
  });
}

// The source the ordered products gather taps from: s itself, or for
// stride-1 output rows of at most 8 pixels (VGG's 4x4 and 2x2 layers) a
// padded copy in buf, each plane of images x channels as (oh + kh - 1) x
// (ow + kw - 1) floats with zeros where s reads outside its data, and the
// same taps over it with no padding (TapGather::interior()). Runs that
// short cost more in per-run bounds and masks than in the copy itself.
TapSource GatherSource(const TapSource& s, int64_t images, ScratchFloats* buf) {
  if (s.stride != 1 || s.ow > 8) return s;
  ImplicitLayout l;
  l.ph = s.oh + s.kh - 1;
  l.pw = s.ow + s.kw - 1;
  l.image_floats = s.channels * l.ph * l.pw;
  buf->resize(images * l.image_floats);
  ParallelFor(images, 1, [&](int64_t n0, int64_t n1) {
    for (int64_t n = n0; n < n1; ++n) PadImage(s, l, n, buf->data() + n * l.image_floats);
  });
  return TapSource{buf->data(), s.channels, l.ph, l.pw, s.kh, s.kw, 1, 0, 0, s.oh, s.ow};
}

}  // namespace

void DirectForward(const ConvGeometry& g, const float* x, const float* w, const float* bias,
                   const ReduceSpec& spec, float* y) {
  const TapSource src = ForwardSource(g, x);
  if (PaddingFreeApplies(src, spec)) return PaddingFreePatchGemm(src, g.n, g.o, w, bias, spec, y);
  if (ExactApplies(src, spec)) return ExactPatchGemm(src, g.n, g.o, w, bias, spec, y);
  ScratchFloats padded;
  const TapSource s = GatherSource(src, g.n, &padded);
  const int64_t terms = g.c * g.kh * g.kw, total = g.n * g.oh * g.ow;
  OrderedGemmProblem p;
  p.m = g.o;
  p.n = total;
  p.t = terms;
  p.a = [=](int64_t i0, int64_t, int64_t t0, int64_t, float*, int64_t* ld) {
    *ld = terms;
    return w + i0 * terms + t0;
  };
  p.pack_b = [&](int64_t j0, int64_t t0, int64_t t1, float* dst) {
    PackTapRows(s, total, j0, t0, t1, dst);
  };
  p.store = [&](int64_t i0, int64_t i1, int64_t j0, const float* blk) {
    StoreNchw(blk, i0, i1, j0, total, g.o, g.oh, g.ow, bias, y);
  };
  RunOrderedGemm(p, spec);
}

// dx by phases: the pixels h = rh (mod stride), w = rw (mod stride) are
// reached only by the flipped-kernel taps kh' = a0 (mod stride), kw' = b0
// (mod stride), and on that sub-grid the data gradient is a stride-1
// convolution of dy with the sub-kernel. Each phase is one ordered product
// whose terms are (o, kh', kw') in index order over those taps; dy positions
// outside the output are zero terms. With stride 1 there is a single phase
// with all O*KH*KW taps: the transposed convolution of conv.h.
void DirectBackwardData(const ConvGeometry& g, const float* w, const float* dy,
                        const ReduceSpec& spec, float* dx) {
  // Stride 1: one phase, whose terms (o, kh', kw') are the flipped kernel's
  // taps in index order.
  const TapSource flipped_src = FlippedSource(g, dy);
  const bool padding_free = g.stride == 1 && PaddingFreeApplies(flipped_src, spec);
  if (g.stride == 1 && (padding_free || ExactApplies(flipped_src, spec))) {
    ScratchFloats flipped(g.c * g.o * g.kh * g.kw);
    FlipKernel(g, w, flipped.data());
    if (padding_free) {
      return PaddingFreePatchGemm(flipped_src, g.n, g.c, flipped.data(), nullptr, spec, dx);
    }
    return ExactPatchGemm(flipped_src, g.n, g.c, flipped.data(), nullptr, spec, dx);
  }
  const int s = g.stride;
  const int fpt = g.kh - 1 - g.pad_top, fpl = g.kw - 1 - g.pad_left;  // flipped pads
  const auto mod = [s](int64_t v) { return ((v % s) + s) % s; };
  // Phases the tiles compute into sub-grids, or that are zeros: with stride
  // 2, when every phase is one of those, interleaved into dx in one pass at
  // the end (InterleavePhases2); else each scattered (ScatterPhase). So all
  // of a call's sub-grids are held at once (a 3x3 kernel's: dx's size).
  // One buffer per phase, kept per thread and grown only: the tiles
  // overwrite it whole, so no zero-fill and no page faults per call.
  thread_local std::vector<ScratchFloats> subs;
  if (static_cast<int64_t>(subs.size()) < int64_t{s} * s) subs.resize(int64_t{s} * s);
  std::vector<const float*> sub_of(s * s, nullptr);  // [rh * s + rw]; null: zeros
  std::vector<int> deferred;                          // rh * s + rw, in order
  bool all_deferred = true;
  for (int rh = 0; rh < s && rh < g.h; ++rh) {
    for (int rw = 0; rw < s && rw < g.w; ++rw) {
      const int a0 = static_cast<int>(mod(fpt - rh)), b0 = static_cast<int>(mod(fpl - rw));
      const int sub_kh = a0 < g.kh ? (g.kh - a0 + s - 1) / s : 0;
      const int sub_kw = b0 < g.kw ? (g.kw - b0 + s - 1) / s : 0;
      const int64_t sub_h = (g.h - rh + s - 1) / s, sub_w = (g.w - rw + s - 1) / s;
      // Sub-grid pixel i, sub-tap m read dy row i + m + (rh + a0 - fpt) / s.
      const int off_h = static_cast<int>((rh + a0 - fpt) / s);
      const int off_w = static_cast<int>((rw + b0 - fpl) / s);
      const TapSource phase{dy, g.o, g.oh, g.ow, sub_kh, sub_kw, 1, -off_h, -off_w, sub_h, sub_w};
      const int64_t sub_taps = int64_t{sub_kh} * sub_kw, terms = g.o * sub_taps;
      const int64_t total = g.n * sub_h * sub_w;
      // A [C][O * sub taps]: w[o, c, KH-1-(a0 + s*m), KW-1-(b0 + s*k)].
      ScratchFloats wt(g.c * terms);  // written whole below
      ForEachChannelPair(g.c, g.o, [&](int64_t c, int64_t o) {
        const float* src_w = w + (o * g.c + c) * g.kh * g.kw;
        for (int m = 0; m < sub_kh; ++m) {
          for (int k = 0; k < sub_kw; ++k) {
            wt[c * terms + (o * sub_kh + m) * sub_kw + k] =
                src_w[(g.kh - 1 - a0 - s * m) * g.kw + (g.kw - 1 - b0 - s * k)];
          }
        }
      });
      // The phase is a stride-1 convolution of dy (weights wt, taps in the
      // same order): where the exact tiles take its grid, they compute it
      // into a sub-grid tensor that is then scattered, the same bits as the
      // ordered product over gathered taps below (ResNet's stride-2 layers:
      // 33-40 GFLOP/s per core that way, the gathers as slow as the products).
      if (terms == 0) {  // no tap reaches the phase (1x1 kernels): zeros
        deferred.push_back(rh * s + rw);
        continue;
      }
      if (ExactApplies(phase, spec)) {
        ScratchFloats& sub = subs[rh * s + rw];
        const int64_t need = g.n * g.c * sub_h * sub_w;
        if (static_cast<int64_t>(sub.size()) < need) sub.resize(need);
        ExactPatchGemm(phase, g.n, g.c, wt.data(), nullptr, spec, sub.data());
        sub_of[rh * s + rw] = sub.data();
        deferred.push_back(rh * s + rw);
        continue;
      }
      all_deferred = false;
      ScratchFloats padded;
      const TapSource src = GatherSource(phase, g.n, &padded);
      OrderedGemmProblem p;
      p.m = g.c;
      p.n = total;
      p.t = terms;
      p.a = [&](int64_t i0, int64_t, int64_t t0, int64_t, float*, int64_t* ld) {
        *ld = terms;
        return wt.data() + i0 * terms + t0;
      };
      p.pack_b = [&](int64_t j0, int64_t t0, int64_t t1, float* dst) {
        PackTapRows(src, total, j0, t0, t1, dst);
      };
      p.store = [&](int64_t i0, int64_t i1, int64_t j0, const float* blk) {
        StorePhase(blk, i0, i1, j0, total, g, sub_h, sub_w, rh, rw, dx);
      };
      RunOrderedGemm(p, spec);
    }
  }
  if (s == 2 && all_deferred) return InterleavePhases2(sub_of.data(), g, dx);
  for (const int ph : deferred) ScatterPhase(sub_of[ph], g, ph / s, ph % s, dx);
}

// dw[o, t] = R over q = (n, p, q) of dy[n, o, p, q] * patch(t, q): the
// product dY [O, Q] x im2col^T [Q, T], tap panels packed transposed.
void DirectBackwardFilter(const ConvGeometry& g, const float* x, const float* dy,
                          const ReduceSpec& spec, float* dw) {
  const TapSource src = ForwardSource(g, x);
  if (PaddingFreeApplies(src, spec)) {  // small planes, mostly padding
    return PaddingFreeBackwardFilter(src, 0, g.n, g.o, dy, spec, /*add=*/false, dw);
  }
  // Both tile sets give the same bits. The lanes tiles hold a K-chain set
  // in vectors of min(K, lanes) pixels, the exact tiles output channels in
  // full vectors: on 16-lane targets the latter won wherever both applied
  // with 64 taps or more (Zen 4, lanes8, GFLOP/s per core: ResNet's
  // 16-channel 32x32 layers 80 -> 86, 64-channel 8x8 79 -> 91, 32-to-64
  // stride 2 66 -> 76; the 27-tap stem 77 -> 68 the other way). There
  // they also won with the K chains' state beyond L2, while one chain's
  // (taps x out_ch) stays within ExactFilterApplies' bound: VGG's 64-to-128
  // layer 90 -> 98, 128-to-256 86 -> 89 (the 256-channel 8x8 layer, past
  // it, ran 87 on the ordered products and 81 on the tiles). On 8-lane
  // targets (AVX2) the lanes tiles were as fast or faster everywhere.
  const bool exact_first = KernelFloatLanes() >= 16 && g.c * g.kh * g.kw >= 64;
  if (exact_first && ExactFilterApplies(src, g.o, spec, /*per_chain_bound=*/true)) {
    return ExactBackwardFilter(src, g.n, g.o, dy, spec, dw);
  }
  if (LanesFilterApplies(src, g.o, spec)) return LanesBackwardFilter(src, g.n, g.o, dy, spec, dw);
  if (ExactFilterApplies(src, g.o, spec)) return ExactBackwardFilter(src, g.n, g.o, dy, spec, dw);
  ScratchFloats padded;
  const TapSource s = GatherSource(src, g.n, &padded);
  const int64_t taps = g.c * g.kh * g.kw, plane = g.oh * g.ow, total = g.n * plane;
  OrderedGemmProblem p;
  p.m = g.o;
  p.n = taps;
  p.t = total;
  p.target_tasks = 4;  // every task re-gathers its patches: split rows sparingly
  // With small planes a term chunk spans many images, and every column panel's
  // task would gather its rows of dy anew (a 2x2 plane: copies of 4 floats, as
  // slow as the products). dy as [O][N * plane] makes every chunk one strided
  // block, for one pass over dy.
  ScratchFloats dyt;
  if (g.n > 1 && plane < kSmallPlane) {
    dyt.resize(g.o * total);
    ParallelFor(g.n, 1, [&](int64_t n0, int64_t n1) {
      ImagesToMatrix(dy, n0, n1 - n0, g.o, plane, total, dyt.data() + n0 * plane);
    });
  }
  p.a = [&](int64_t i0, int64_t i1, int64_t q0, int64_t q1, float* scratch, int64_t* ld) {
    if (!dyt.empty()) {
      *ld = total;
      return static_cast<const float*>(dyt.data() + i0 * total + q0);
    }
    const int64_t width = q1 - q0;
    if (q0 / plane == (q1 - 1) / plane) {  // one image: rows of dy as they are
      *ld = plane;
      return dy + ((q0 / plane) * g.o + i0) * plane + q0 % plane;
    }
    for (int64_t q = q0; q < q1;) {
      const int64_t n = q / plane, pix = q % plane, len = std::min(plane - pix, q1 - q);
      for (int64_t i = i0; i < i1; ++i) {
        const float* src = dy + (n * g.o + i) * plane + pix;
        std::copy(src, src + len, scratch + (i - i0) * width + (q - q0));
      }
      q += len;
    }
    *ld = width;
    return static_cast<const float*>(scratch);
  };
  p.pack_b = [&](int64_t j0, int64_t q0, int64_t q1, float* dst) {
    // Gather the taps as contiguous rows [kPanel][q], then transpose.
    const int64_t valid = std::min<int64_t>(kPanel, taps - j0);
    const int64_t width = q1 - q0;
    thread_local ScratchFloats rows;
    if (static_cast<int64_t>(rows.size()) < kPanel * width) rows.resize(kPanel * width);
    TapGather& gather = ThreadGather();
    gather.Reset(s, q0, q1);
    gather.TapRows(j0, j0 + valid, rows.data(), width);  // taps are consecutive rows
    std::fill(rows.data() + valid * width, rows.data() + kPanel * width, 0.0f);  // past the taps
    TransposeToPanel(rows.data(), width, width, kPanel, dst);
  };
  p.store = [&](int64_t i0, int64_t i1, int64_t j0, const float* blk) {
    const int64_t valid = std::min<int64_t>(kPanel, taps - j0);
    for (int64_t i = i0; i < i1; ++i) {
      if (valid == kPanel) {  // a constant length: inlined, not a memmove call per row
        std::memcpy(dw + i * taps + j0, blk + (i - i0) * kPanel, sizeof(float) * kPanel);
        continue;
      }
      std::copy(blk + (i - i0) * kPanel, blk + (i - i0) * kPanel + valid, dw + i * taps + j0);
    }
  };
  RunOrderedGemm(p, spec);
}

}  // namespace kernels
}  // namespace xw
