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
// lanesK orders are K such chains, term i in chain i mod K by its index
// among all the terms, folded as xw::Dot folds them. The in-range terms are
// laid out so that each keeps its chain in the ordered GEMM's lanesK order
// (position mod K), with zero terms where a chain has fewer than another:
// the same chains, and one product under the profile's own order.
#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "src/kernels/conv_internal.h"
#include "src/kernels/implicit_internal.h"
#include "src/kernels/ordered_gemm.h"
#include "src/kernels/padding_free_internal.h"
#include "src/scratch_floats.h"
#include "xwires/core/parallel.h"

namespace xw {
namespace kernels {

namespace padfree {

void PackRows(const float* rows, int64_t ld, int64_t cols, int64_t j0, int64_t t0, int64_t t1,
              const int64_t* row, float* dst) {
  const int64_t width = std::min<int64_t>(kPanel, cols - j0);
  for (int64_t u = t0; u < t1; ++u, dst += kPanel) {
    if (row[u] < 0) {
      std::fill(dst, dst + kPanel, 0.0f);
      continue;
    }
    CopyShort(rows + row[u] * ld + j0, width, dst);
    std::fill(dst + width, dst + kPanel, 0.0f);
  }
}

void Product(int64_t rows, int64_t cols, int64_t terms, const float* a, int64_t lda, const float* b,
             const int64_t* b_row, const ReduceSpec& spec, float* out, int64_t ld_out) {
  OrderedGemmProblem p;
  p.m = rows;
  p.n = cols;
  p.t = terms;
  p.a = [&](int64_t i0, int64_t, int64_t t0, int64_t, float*, int64_t* ld) {
    *ld = lda;
    return a + i0 * lda + t0;
  };
  p.pack_b = [&](int64_t j0, int64_t t0, int64_t t1, float* dst) {
    PackRows(b, cols, cols, j0, t0, t1, b_row, dst);
  };
  p.store = [&](int64_t i0, int64_t i1, int64_t j0, const float* blk) {
    const int64_t width = std::min<int64_t>(kPanel, cols - j0);
    for (int64_t i = i0; i < i1; ++i) {
      CopyShort(blk + (i - i0) * kPanel, width, out + i * ld_out + j0);
    }
  };
  RunOrderedGemm(p, spec);
}

ScratchFloats ChannelsLast(const float* nchw, int64_t n0, int64_t images, int64_t ch,
                           int64_t plane) {
  ScratchFloats t(images * plane * ch);
  ParallelFor(images, 1, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      PixelMajor(nchw + (n0 + i) * ch * plane, ch, plane, t.data() + i * plane * ch);
    }
  });
  return t;
}

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

}  // namespace padfree

namespace {

using padfree::AxisRange;
using padfree::InRange;

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
      auto it = std::find_if(classes.begin(), classes.end(),
                             [&](const PixelClass& k) { return k.rows == r && k.cols == c; });
      if (it == classes.end()) {
        classes.push_back(PixelClass{r, c, {}});
        it = classes.end() - 1;
      }
      it->pixels.push_back(p * s.ow + q);
    }
  }
  return classes;
}

// Where the in-range terms go in one ordered GEMM under spec: term u, the
// r-th of its chain j = index(u) mod K, at position K * r + j, so that the
// GEMM's lanesK order (position mod K) keeps it in its chain and in order
// (K = 1: the terms in order). Returns the term at each position, -1 where
// a chain has no more terms: those hold zero terms, which leave a chain
// that starts at +0 as it is.
template <typename Index>
std::vector<int64_t> Positions(int64_t n, int k, const Index& index) {
  std::vector<int64_t> count(k, 0);
  for (int64_t u = 0; u < n; ++u) ++count[index(u) % k];
  const int64_t longest = *std::max_element(count.begin(), count.end());
  std::vector<int64_t> term(longest * k, -1);
  std::fill(count.begin(), count.end(), 0);
  for (int64_t u = 0; u < n; ++u) {
    const int j = static_cast<int>(index(u) % k);
    term[count[j]++ * k + j] = u;
  }
  return term;
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
  return ChainCount(spec) > 0 && InRangeTapFraction(s) <= kPaddingFreeMaxFraction;
}

void PaddingFreePatchGemm(const TapSource& src, int64_t images, int64_t out_ch, const float* w,
                          const float* bias, const ReduceSpec& spec, float* y) {
  const int64_t taps = src.channels * src.kh * src.kw, plane = src.oh * src.ow;
  const int64_t hw = src.h * src.w;
  // B (term, column) is w[column, tap]: a row of w transposed, so that a
  // panel's 32 columns of one term are one contiguous copy.
  ScratchFloats wt(taps * out_ch);
  TransposeMatrix(w, out_ch, taps, wt.data());
  const std::vector<PixelClass> classes = Classes(src);
  int64_t most_rows = 0;
  for (const PixelClass& k : classes) {
    most_rows = std::max<int64_t>(most_rows, images * static_cast<int64_t>(k.pixels.size()));
  }
  // Every class's results go to yt [image][pixel][out_ch] in whole rows,
  // then each image is transposed into y once.
  ScratchFloats a, r(most_rows * out_ch), yt(images * plane * out_ch);
  for (const PixelClass& k : classes) {
    const int64_t npix = static_cast<int64_t>(k.pixels.size()), rows = images * npix;
    // The class's in-range taps (c, a, b), in index order: tap index and
    // offset from the pixel's window corner.
    std::vector<int64_t> tap, off;
    for (int64_t c = 0; c < src.channels; ++c) {
      for (int ta = k.rows.lo; ta < k.rows.hi; ++ta) {
        for (int tb = k.cols.lo; tb < k.cols.hi; ++tb) {
          tap.push_back((c * src.kh + ta) * src.kw + tb);
          off.push_back(c * hw + int64_t{ta} * src.w + tb);
        }
      }
    }
    const std::vector<int64_t> term = Positions(static_cast<int64_t>(tap.size()), ChainCount(spec),
                                                [&](int64_t u) { return tap[u]; });
    const int64_t terms = static_cast<int64_t>(term.size());
    std::vector<int64_t> b_row(terms, -1), a_off(terms, -1);
    for (int64_t v = 0; v < terms; ++v) {
      if (term[v] < 0) continue;
      b_row[v] = tap[term[v]];
      a_off[v] = off[term[v]];
    }
    if (static_cast<int64_t>(a.size()) < rows * terms) a.resize(rows * terms);
    ParallelFor(rows, GrainFor(rows, 16), [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) {
        const int64_t pix = k.pixels[i % npix], p = pix / src.ow, q = pix % src.ow;
        const float* corner = src.data + (i / npix) * src.channels * hw +
                              (p * src.stride - src.pad_top) * src.w + q * src.stride -
                              src.pad_left;
        float* dst = a.data() + i * terms;
        for (int64_t v = 0; v < terms; ++v) dst[v] = a_off[v] < 0 ? 0.0f : corner[a_off[v]];
      }
    });
    if (terms == 0) {  // every tap reads padding: the chains stay +0
      std::fill(r.data(), r.data() + rows * out_ch, 0.0f);
    } else {
      padfree::Product(rows, out_ch, terms, a.data(), terms, wt.data(), b_row.data(), spec,
                       r.data(), out_ch);
    }
    ParallelFor(rows, GrainFor(rows, 16), [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) {
        std::copy(r.data() + i * out_ch, r.data() + (i + 1) * out_ch,
                  yt.data() + ((i / npix) * plane + k.pixels[i % npix]) * out_ch);
      }
    });
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

}  // namespace kernels
}  // namespace xw
