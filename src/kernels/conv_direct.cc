// kDirect convolution: forward, data gradient and filter gradient, each an
// ordered-reduction product (ordered_gemm.h) whose operands are gathered from
// the tensors on the fly, 32 outputs at a time. Every output's reduction runs
// over its full term index range in the order conv.h specifies, with padded
// taps as zero terms, so the bits equal xw::Dot over the zero-padded patch.
#include <algorithm>
#include <vector>

#include "src/kernels/conv_internal.h"
#include "src/kernels/ordered_gemm.h"

namespace xw {
namespace kernels {

namespace {

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

// Tap t = (c*kh + a)*kw + b.
struct Tap {
  int64_t c;
  int a, b;
};
inline Tap DecodeTap(const TapSource& s, int64_t t) {
  const int64_t khw = int64_t{s.kh} * s.kw;
  return {t / khw, static_cast<int>((t % khw) / s.kw), static_cast<int>(t % s.kw)};
}

// B(t, j) = tap t of output column j (flattened (n, p, q) over `total`
// outputs), rows of kPanel floats.
void PackTapRows(const TapSource& s, int64_t total, int64_t j0, int64_t t0, int64_t t1,
                 float* dst) {
  const int64_t valid = std::min<int64_t>(kPanel, total - j0);
  std::vector<PixelRun>& runs = ThreadRuns();
  RowRuns(j0, j0 + valid, s.oh, s.ow, &runs);
  for (int64_t t = t0; t < t1; ++t) {
    const Tap tap = DecodeTap(s, t);
    float* d = dst + (t - t0) * kPanel;
    for (const PixelRun& r : runs) {
      GatherTapRun(s, s.Plane(r.n, tap.c), tap.a, tap.b, r.p, r.q0, r.len, d + r.j, 1);
    }
    std::fill(d + valid, d + kPanel, 0.0f);
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

}  // namespace

void DirectForward(const ConvGeometry& g, const float* x, const float* w, const float* bias,
                   const ReduceSpec& spec, float* y) {
  const TapSource s = ForwardSource(g, x);
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

// dx is the stride-1 convolution of dy, zero-dilated by the forward stride,
// with the kernel flipped in space and transposed in channels:
// dx[n,c,h,w] = R over (o, a, b) of dy~[n,o,h+a-(KH-1-pt), w+b-(KW-1-pl)] *
// w[o,c,KH-1-a,KW-1-b].
void DirectBackwardData(const ConvGeometry& g, const float* w, const float* dy,
                        const ReduceSpec& spec, float* dx) {
  TapSource s{dy, g.o, g.oh, g.ow, g.stride, g.kh, g.kw, 1,
              g.kh - 1 - g.pad_top, g.kw - 1 - g.pad_left, g.h, g.w};
  const int64_t khw = int64_t{g.kh} * g.kw, terms = g.o * khw, total = g.n * g.h * g.w;
  std::vector<float> wt(g.c * terms);  // [C][O*KH*KW], flipped
  for (int64_t o = 0; o < g.o; ++o) {
    for (int64_t c = 0; c < g.c; ++c) {
      const float* src = w + (o * g.c + c) * khw;
      for (int64_t k = 0; k < khw; ++k) wt[c * terms + o * khw + k] = src[khw - 1 - k];
    }
  }
  OrderedGemmProblem p;
  p.m = g.c;
  p.n = total;
  p.t = terms;
  p.a = [&](int64_t i0, int64_t, int64_t t0, int64_t, float*, int64_t* ld) {
    *ld = terms;
    return wt.data() + i0 * terms + t0;
  };
  p.pack_b = [&](int64_t j0, int64_t t0, int64_t t1, float* dst) {
    PackTapRows(s, total, j0, t0, t1, dst);
  };
  p.store = [&](int64_t i0, int64_t i1, int64_t j0, const float* blk) {
    StoreNchw(blk, i0, i1, j0, total, g.c, g.h, g.w, nullptr, dx);
  };
  RunOrderedGemm(p, spec);
}

// dw[o, t] = R over q = (n, p, q) of dy[n, o, p, q] * patch(t, q): the
// product dY [O, Q] x im2col^T [Q, T], tap panels packed transposed.
void DirectBackwardFilter(const ConvGeometry& g, const float* x, const float* dy,
                          const ReduceSpec& spec, float* dw) {
  const TapSource s = ForwardSource(g, x);
  const int64_t taps = g.c * g.kh * g.kw, plane = g.oh * g.ow, total = g.n * plane;
  OrderedGemmProblem p;
  p.m = g.o;
  p.n = taps;
  p.t = total;
  p.target_tasks = 4;  // every task re-gathers its patches: split rows sparingly
  p.a = [&](int64_t i0, int64_t i1, int64_t q0, int64_t q1, float* scratch, int64_t* ld) {
    const int64_t width = q1 - q0;
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
    const int64_t valid = std::min<int64_t>(kPanel, taps - j0);
    std::vector<PixelRun>& runs = ThreadRuns();
    RowRuns(q0, q1, g.oh, g.ow, &runs);
    for (int64_t jj = 0; jj < kPanel; ++jj) {
      if (jj >= valid) {
        for (int64_t q = 0; q < q1 - q0; ++q) dst[q * kPanel + jj] = 0.0f;
        continue;
      }
      const Tap tap = DecodeTap(s, j0 + jj);
      for (const PixelRun& r : runs) {
        GatherTapRun(s, s.Plane(r.n, tap.c), tap.a, tap.b, r.p, r.q0, r.len,
                     dst + r.j * kPanel + jj, kPanel);
      }
    }
  };
  p.store = [&](int64_t i0, int64_t i1, int64_t j0, const float* blk) {
    const int64_t valid = std::min<int64_t>(kPanel, taps - j0);
    for (int64_t i = i0; i < i1; ++i) {
      std::copy(blk + (i - i0) * kPanel, blk + (i - i0) * kPanel + valid, dw + i * taps + j0);
    }
  };
  RunOrderedGemm(p, spec);
}

}  // namespace kernels
}  // namespace xw
