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

// The class's in-range taps in index order: tap index (c*kh + a)*kw + b and,
// for each of the class's pixels, the source offset within an image.
struct ClassTaps {
  std::vector<int64_t> tap;     // [term]
  std::vector<int64_t> offset;  // [pixel][term]
};

ClassTaps TapsOf(const TapSource& s, const PixelClass& k) {
  ClassTaps t;
  for (int64_t c = 0; c < s.channels; ++c) {
    for (int a = k.rows.lo; a < k.rows.hi; ++a) {
      for (int b = k.cols.lo; b < k.cols.hi; ++b) t.tap.push_back((c * s.kh + a) * s.kw + b);
    }
  }
  for (int64_t pix : k.pixels) {
    const int64_t p = pix / s.ow, q = pix % s.ow;
    for (int64_t c = 0; c < s.channels; ++c) {
      for (int a = k.rows.lo; a < k.rows.hi; ++a) {
        const int64_t row = p * s.stride + a - s.pad_top;
        for (int b = k.cols.lo; b < k.cols.hi; ++b) {
          t.offset.push_back((c * s.h + row) * s.w + q * s.stride + b - s.pad_left);
        }
      }
    }
  }
  return t;
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
  const int64_t image_floats = src.channels * src.h * src.w;
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
  ScratchFloats a(most);
  for (const PixelClass& k : classes) {
    const int64_t npix = static_cast<int64_t>(k.pixels.size());
    const int64_t terms = src.channels * TapsPerChannel(k), rows = images * npix;
    // Row i is image i / npix, pixel k.pixels[i % npix].
    const auto store_row = [&](int64_t i, int64_t j0, int64_t j1, const float* v) {
      const int64_t n = i / npix, pix = k.pixels[i % npix];
      float* out = y + n * out_ch * plane + pix;
      for (int64_t j = j0; j < j1; ++j) {
        const float x = v == nullptr ? 0.0f : v[j - j0];
        out[j * plane] = bias == nullptr ? x : x + bias[j];
      }
    };
    if (terms == 0) {  // every tap reads padding: the chain is +0
      ParallelFor(rows, GrainFor(rows, 64), [&](int64_t i0, int64_t i1) {
        for (int64_t i = i0; i < i1; ++i) store_row(i, 0, out_ch, nullptr);
      });
      continue;
    }
    const ClassTaps t = TapsOf(src, k);
    ParallelFor(rows, GrainFor(rows, 16), [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) {
        const float* img = src.data + (i / npix) * image_floats;
        const int64_t* off = t.offset.data() + (i % npix) * terms;
        float* dst = a.data() + i * terms;
        for (int64_t u = 0; u < terms; ++u) dst[u] = img[off[u]];
      }
    });
    OrderedGemmProblem p;
    p.m = rows;
    p.n = out_ch;
    p.t = terms;
    p.a = [&](int64_t i0, int64_t, int64_t t0, int64_t, float*, int64_t* ld) {
      *ld = terms;
      return a.data() + i0 * terms + t0;
    };
    p.pack_b = [&](int64_t j0, int64_t t0, int64_t t1, float* dst) {
      const int64_t width = std::min<int64_t>(kPanel, out_ch - j0);
      for (int64_t u = t0; u < t1; ++u) {
        const float* row = wt.data() + t.tap[u] * out_ch + j0;
        float* d = dst + (u - t0) * kPanel;
        std::copy(row, row + width, d);
        std::fill(d + width, d + kPanel, 0.0f);
      }
    };
    p.store = [&](int64_t i0, int64_t i1, int64_t j0, const float* blk) {
      const int64_t j1 = std::min<int64_t>(out_ch, j0 + kPanel);
      for (int64_t i = i0; i < i1; ++i) store_row(i, j0, j1, blk + (i - i0) * kPanel);
    };
    RunOrderedGemm(p, spec);
  }
}

}  // namespace kernels
}  // namespace xw
