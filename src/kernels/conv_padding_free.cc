// Convolutions on small output planes without the taps that read padding.
//
// On VGG's 4x4 planes (3x3 kernels, pad 1) 31% of the taps of an output read
// padding, on its 2x2 planes 56%; every algorithm that runs over the
// zero-padded patch multiplies those zeros. Here the output pixels are
// grouped into classes whose in-range taps are the same set, (c, a, b) with
// a in [a0, a1) and b in [b0, b1) for every channel c, and each class is one
// ordered GEMM (ordered_gemm.h): rows are the class's (image, pixel) pairs,
// terms its in-range taps in index order, columns the output channels.
//
// Why the bits are those of the chain over every tap: a sequential chain
// starts at +0 and a zero term adds +0 or -0 to it (its product with a
// finite weight, rounded or fused), which leaves a nonzero sum unchanged and
// +0 at +0 (a round-to-nearest sum is -0 only when both addends are). So the
// chain over the in-range taps is the chain over all of them, for finite
// weights. (An infinite or NaN weight times a padding zero is NaN; skipped,
// it no longer reaches the output. Such a model has diverged already.)
#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "src/kernels/conv_internal.h"
#include "src/kernels/ordered_gemm.h"
#include "src/scratch_floats.h"
#include "xwires/core/parallel.h"

namespace xw {
namespace kernels {

namespace {

// In-range taps [lo, hi) of output index i along one axis: input index
// i * stride + k - pad must lie in [0, size).
struct AxisRange {
  int lo, hi;
  bool operator==(const AxisRange& o) const { return lo == o.lo && hi == o.hi; }
};

AxisRange InRange(int64_t i, int64_t stride, int k, int pad, int64_t size) {
  const int64_t first = i * stride - pad;  // input index of tap 0
  const int64_t lo = std::clamp<int64_t>(-first, 0, k);
  const int64_t hi = std::clamp<int64_t>(size - first, lo, k);
  return AxisRange{static_cast<int>(lo), static_cast<int>(hi)};
}

// Output pixels whose in-range taps are rows x cols (per channel).
struct PixelClass {
  AxisRange rows, cols;
  std::vector<int64_t> pixels;  // p * ow + q, raster order
};

std::vector<PixelClass> Classes(const TapSource& s) {
  std::vector<PixelClass> classes;
  for (int64_t p = 0; p < s.oh; ++p) {
    const AxisRange r = InRange(p, s.stride, s.kh, s.pad_top, s.h);
    for (int64_t q = 0; q < s.ow; ++q) {
      const AxisRange c = InRange(q, s.stride, s.kw, s.pad_left, s.w);
      auto it = std::find_if(classes.begin(), classes.end(), [&](const PixelClass& k) {
        return k.rows == r && k.cols == c;
      });
      if (it == classes.end()) {
        classes.push_back(PixelClass{r, c, {}});
        it = classes.end() - 1;
      }
      it->pixels.push_back(p * s.ow + q);
    }
  }
  return classes;
}

int64_t TapsPerChannel(const PixelClass& k) {
  return int64_t{k.rows.hi - k.rows.lo} * (k.cols.hi - k.cols.lo);
}

// Row i of a class's A: the in-range taps (c, a, b) of image i / npix at
// pixel k.pixels[i % npix], in index order.
void GatherRow(const TapSource& s, const PixelClass& k, int64_t i, float* dst) {
  const int64_t npix = static_cast<int64_t>(k.pixels.size());
  const int64_t pix = k.pixels[i % npix], p = pix / s.ow, q = pix % s.ow;
  const int64_t hw = s.h * s.w;
  const float* img = s.data + (i / npix) * s.channels * hw +
                     (p * s.stride - s.pad_top) * s.w + q * s.stride - s.pad_left;
  for (int64_t c = 0; c < s.channels; ++c, img += hw) {
    for (int a = k.rows.lo; a < k.rows.hi; ++a) {
      const float* row = img + int64_t{a} * s.w;
      for (int b = k.cols.lo; b < k.cols.hi; ++b) *dst++ = row[b];
    }
  }
}

// dst[0, n) = src[0, n), for the short runs here (a panel row, a few pixels):
// a fixed-size loop the compiler keeps inline, where a memmove call per few
// floats cost a fifth of a filter gradient's time.
void CopyShort(const float* src, int64_t n, float* dst) {
  if (n == kPanel) {
    for (int j = 0; j < kPanel; ++j) dst[j] = src[j];
    return;
  }
  for (int64_t j = 0; j < n; ++j) dst[j] = src[j];
}

// A panel of B: dst[(u - t0) * kPanel + j] = rows[row[u] * ld + j0 + j],
// zeros past `cols` columns.
void PackRows(const float* rows, int64_t ld, int64_t cols, int64_t j0, int64_t t0, int64_t t1,
              const int64_t* row, float* dst) {
  const int64_t width = std::min<int64_t>(kPanel, cols - j0);
  for (int64_t u = t0; u < t1; ++u, dst += kPanel) {
    CopyShort(rows + row[u] * ld + j0, width, dst);
    std::fill(dst + width, dst + kPanel, 0.0f);
  }
}

// Images [n0, n0 + images) of an NCHW tensor [*, ch, plane] as [image][pixel][ch].
ScratchFloats ChannelsLast(const float* nchw, int64_t n0, int64_t images, int64_t ch,
                           int64_t plane) {
  ScratchFloats t(images * plane * ch);
  ParallelFor(images, 1, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      TransposeToPanel(nchw + (n0 + i) * ch * plane, plane, plane, ch, t.data() + i * plane * ch);
    }
  });
  return t;
}

// Output rows (or columns) [lo, hi) where tap a of an axis reads the source.
std::pair<int64_t, int64_t> PixelsReading(int a, int64_t out, int64_t stride, int k, int pad,
                                          int64_t size) {
  int64_t lo = out, hi = out;
  for (int64_t i = 0; i < out; ++i) {
    const AxisRange r = InRange(i, stride, k, pad, size);
    if (a < r.lo || a >= r.hi) continue;
    lo = std::min(lo, i);
    hi = i + 1;
  }
  return {lo, hi};
}

}  // namespace

double InRangeTapFraction(const TapSource& s) {
  if (s.oh <= 0 || s.ow <= 0) return 1.0;
  int64_t in_range = 0;
  for (int64_t p = 0; p < s.oh; ++p) {
    const AxisRange r = InRange(p, s.stride, s.kh, s.pad_top, s.h);
    for (int64_t q = 0; q < s.ow; ++q) {
      const AxisRange c = InRange(q, s.stride, s.kw, s.pad_left, s.w);
      in_range += int64_t{r.hi - r.lo} * (c.hi - c.lo);
    }
  }
  return static_cast<double>(in_range) / static_cast<double>(s.oh * s.ow * s.kh * s.kw);
}

bool PaddingFreeApplies(const TapSource& s, const ReduceSpec& spec) {
  const bool sequential = spec.order == ReduceOrder::kSequential ||
                          (spec.order == ReduceOrder::kLanes && spec.lanes == 1);
  return sequential && InRangeTapFraction(s) <= kPaddingFreeMaxFraction;
}

void PaddingFreePatchGemm(const TapSource& src, int64_t images, int64_t out_ch, const float* w,
                          const float* bias, const ReduceSpec& spec, float* y) {
  const int64_t taps = src.channels * src.kh * src.kw, plane = src.oh * src.ow;
  // B (term, column) is w[column, tap]: a row of w transposed, so that a
  // panel's 32 columns of one term are one contiguous copy.
  ScratchFloats wt(taps * out_ch);
  TransposeMatrix(w, out_ch, taps, wt.data());
  const std::vector<PixelClass> classes = Classes(src);
  int64_t most = 0;
  for (const PixelClass& k : classes) {
    most = std::max<int64_t>(most, images * static_cast<int64_t>(k.pixels.size()) *
                                       src.channels * TapsPerChannel(k));
  }
  // Every class's results go to yt [image][pixel][out_ch] in whole rows,
  // then each image is transposed into y once.
  ScratchFloats a(most), yt(images * plane * out_ch);
  for (const PixelClass& k : classes) {
    const int64_t npix = static_cast<int64_t>(k.pixels.size());
    const int64_t terms = src.channels * TapsPerChannel(k), rows = images * npix;
    const auto out_row = [&](int64_t i) {
      return yt.data() + ((i / npix) * plane + k.pixels[i % npix]) * out_ch;
    };
    if (terms == 0) {  // every tap reads padding: the chain is +0
      for (int64_t i = 0; i < rows; ++i) std::fill(out_row(i), out_row(i) + out_ch, 0.0f);
      continue;
    }
    ParallelFor(rows, GrainFor(rows, 16), [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) GatherRow(src, k, i, a.data() + i * terms);
    });
    std::vector<int64_t> tap;  // the class's terms' tap indices
    for (int64_t c = 0; c < src.channels; ++c) {
      for (int r = k.rows.lo; r < k.rows.hi; ++r) {
        for (int b = k.cols.lo; b < k.cols.hi; ++b) tap.push_back((c * src.kh + r) * src.kw + b);
      }
    }
    OrderedGemmProblem p;
    p.m = rows;
    p.n = out_ch;
    p.t = terms;
    p.a = [&](int64_t i0, int64_t, int64_t t0, int64_t, float*, int64_t* ld) {
      *ld = terms;
      return a.data() + i0 * terms + t0;
    };
    p.pack_b = [&](int64_t j0, int64_t t0, int64_t t1, float* dst) {
      PackRows(wt.data(), out_ch, out_ch, j0, t0, t1, tap.data(), dst);
    };
    p.store = [&](int64_t i0, int64_t i1, int64_t j0, const float* blk) {
      const int64_t width = std::min<int64_t>(kPanel, out_ch - j0);
      for (int64_t i = i0; i < i1; ++i) CopyShort(blk + (i - i0) * kPanel, width, out_row(i) + j0);
    };
    RunOrderedGemm(p, spec);
  }
  ParallelFor(images, 1, [&](int64_t n0, int64_t n1) {
    for (int64_t n = n0; n < n1; ++n) {
      float* yn = y + n * out_ch * plane;
      TransposeToPanel(yt.data() + n * plane * out_ch, out_ch, out_ch, plane, yn);
      if (bias == nullptr) continue;
      for (int64_t o = 0; o < out_ch; ++o) {
        for (int64_t j = 0; j < plane; ++j) yn[o * plane + j] += bias[o];
      }
    }
  });
}

void PaddingFreeBackwardFilter(const TapSource& src, int64_t n0, int64_t images, int64_t out_ch,
                               const float* dy, const ReduceSpec& spec, bool add, float* dw) {
  const int64_t c_count = src.channels, plane = src.oh * src.ow;
  const int64_t khw = int64_t{src.kh} * src.kw;
  // Channels-last x and dy, so that a term's pixel is one contiguous row of
  // channels: B (term, column c) is a row of xt, A^T (term, o) one of dyt.
  const ScratchFloats xt = ChannelsLast(src.data, n0, images, c_count, src.h * src.w);
  const ScratchFloats dyt = ChannelsLast(dy, n0, images, out_ch, plane);
  ScratchFloats at(images * plane * out_ch), a(out_ch * images * plane);
  // Tap (a, b)'s sums as [tap][o][c], interleaved into dw at the end: stores
  // 9 taps apart, tap by tap, streamed the whole of dw once per tap.
  ScratchFloats dwt(khw * out_ch * c_count);
  std::vector<int64_t> dy_row, x_row;  // per term: its pixel in dyt, in xt
  for (int ta = 0; ta < src.kh; ++ta) {
    const auto [p0, p1] = PixelsReading(ta, src.oh, src.stride, src.kh, src.pad_top, src.h);
    for (int tb = 0; tb < src.kw; ++tb) {
      const auto [q0, q1] = PixelsReading(tb, src.ow, src.stride, src.kw, src.pad_left, src.w);
      float* out = dwt.data() + (int64_t{ta} * src.kw + tb) * out_ch * c_count;
      dy_row.clear();
      x_row.clear();
      for (int64_t i = 0; i < images; ++i) {
        for (int64_t p = p0; p < p1; ++p) {
          for (int64_t q = q0; q < q1; ++q) {
            dy_row.push_back(i * plane + p * src.ow + q);
            x_row.push_back((i * src.h + p * src.stride + ta - src.pad_top) * src.w +
                            q * src.stride + tb - src.pad_left);
          }
        }
      }
      const int64_t terms = static_cast<int64_t>(dy_row.size());
      if (terms == 0) {  // every term reads padding: the chain is +0
        std::fill(out, out + out_ch * c_count, 0.0f);
        continue;
      }
      // A [o][term]: dy over the terms (i, p, q) in index order, gathered as
      // whole rows of dyt and transposed in vector blocks.
      ParallelFor(terms, GrainFor(terms, 64), [&](int64_t u0, int64_t u1) {
        for (int64_t u = u0; u < u1; ++u) {
          const float* row = dyt.data() + dy_row[u] * out_ch;
          std::copy(row, row + out_ch, at.data() + u * out_ch);
        }
      });
      TransposeMatrix(at.data(), terms, out_ch, a.data());
      OrderedGemmProblem pr;
      pr.m = out_ch;
      pr.n = c_count;
      pr.t = terms;
      pr.a = [&](int64_t i0, int64_t, int64_t t0, int64_t, float*, int64_t* ld) {
        *ld = terms;
        return a.data() + i0 * terms + t0;
      };
      pr.pack_b = [&](int64_t j0, int64_t t0, int64_t t1, float* dst) {
        PackRows(xt.data(), c_count, c_count, j0, t0, t1, x_row.data(), dst);
      };
      pr.store = [&](int64_t i0, int64_t i1, int64_t j0, const float* blk) {
        const int64_t width = std::min<int64_t>(kPanel, c_count - j0);
        for (int64_t o = i0; o < i1; ++o) {
          CopyShort(blk + (o - i0) * kPanel, width, out + o * c_count + j0);
        }
      };
      RunOrderedGemm(pr, spec);
    }
  }
  ParallelFor(out_ch, GrainFor(out_ch, 8), [&](int64_t o0, int64_t o1) {
    for (int64_t o = o0; o < o1; ++o) {
      float* d = dw + o * c_count * khw;
      for (int64_t c = 0; c < c_count; ++c, d += khw) {
        const float* v = dwt.data() + o * c_count + c;
        for (int64_t t = 0; t < khw; ++t) {
          const float x = v[t * out_ch * c_count];
          d[t] = add ? d[t] + x : x;
        }
      }
    }
  });
}

}  // namespace kernels
}  // namespace xw
