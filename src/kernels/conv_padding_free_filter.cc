// The filter gradient of small planes without the terms that read padding
// (conv_padding_free.cc explains why the bits are those of the chains over
// every term). dw[o, (c, a, b)] reduces dy[n, o, p, q] * x[n, c, p + a, q + b]
// over the output pixels (n, p, q); tap (a, b) reads the source only on a
// rectangle of (p, q), so each tap is one product over those pixels: rows
// the output channels, columns the input channels.
//
// Under lanesK a term stays in the chain of its index among all the terms,
// i * plane + p * ow + q mod K. A tap's rectangle spreads unevenly over
// those chains (on a 4x4 plane with K = 8, a corner tap's 9 pixels of 16
// fall in 6 chains, 2 of them twice), so instead of one product with zero
// terms where a chain runs short, as the forward does, each chain is its
// own sequential product and the K results are folded as xw::Dot folds them.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "src/kernels/conv_internal.h"
#include "src/kernels/implicit_internal.h"
#include "src/kernels/padding_free_internal.h"
#include "src/scratch_floats.h"
#include "xwires/core/parallel.h"

namespace xw {
namespace kernels {

namespace {

// out [rows x cols] (row stride ld_out) = the K chains of spec over A
// [rows x terms] (chain-major: chain j's terms at seg[j] .. seg[j + 1], in
// order) times B (term u: row b_row[u] of b, cols floats): each chain a
// sequential product from +0, the chains then folded as xw::Dot's lanesK
// does (lane[l] += lane[l + w] for w = K/2, ..., 1). `parts` is scratch,
// grown here and kept by the caller.
void RunChains(int64_t rows, int64_t cols, const float* a, const std::vector<int64_t>& seg,
               const float* b, const int64_t* b_row, const ReduceSpec& spec, float* out,
               int64_t ld_out, ScratchFloats& parts) {
  const int k = static_cast<int>(seg.size()) - 1;
  const int64_t terms = seg.back();
  const ReduceSpec chain{ReduceOrder::kSequential, 1, spec.fma};
  // Chain 0 goes to out, chain j > 0 to parts[j - 1] (rows x cols).
  if (static_cast<int64_t>(parts.size()) < (k - 1) * rows * cols) {
    parts.resize((k - 1) * rows * cols);
  }
  const auto dest = [&](int j) { return j == 0 ? out : parts.data() + (j - 1) * rows * cols; };
  const auto ld = [&](int j) { return j == 0 ? ld_out : cols; };
  for (int j = 0; j < k; ++j) {
    if (seg[j] == seg[j + 1]) {  // no term in range: the chain stays +0
      for (int64_t i = 0; i < rows; ++i)
        std::fill(dest(j) + i * ld(j), dest(j) + i * ld(j) + cols, 0.0f);
      continue;
    }
    padfree::Product(rows, cols, seg[j + 1] - seg[j], a + seg[j], terms, b, b_row + seg[j], chain,
                     dest(j), ld(j));
  }
  if (k == 1) return;
  ParallelFor(rows, GrainFor(rows, 8), [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      for (int w = k / 2; w >= 1; w /= 2) {
        for (int l = 0; l < w; ++l) {
          float* d = dest(l) + i * ld(l);
          const float* v = dest(l + w) + i * ld(l + w);
          for (int64_t c = 0; c < cols; ++c) d[c] += v[c];
        }
      }
    }
  });
}

}  // namespace

void PaddingFreeBackwardFilter(const TapSource& src, int64_t n0, int64_t images, int64_t out_ch,
                               const float* dy, const ReduceSpec& spec, bool add, float* dw) {
  const int64_t c_count = src.channels, plane = src.oh * src.ow;
  const int64_t khw = int64_t{src.kh} * src.kw;
  const int k = ChainCount(spec);
  // Channels-last x and dy, so that a term's pixel is one contiguous row of
  // channels: B (term, column c) is a row of xt, A^T (term, o) one of dyt.
  const ScratchFloats xt = padfree::ChannelsLast(src.data, n0, images, c_count, src.h * src.w);
  const ScratchFloats dyt = padfree::ChannelsLast(dy, n0, images, out_ch, plane);
  ScratchFloats at(images * plane * out_ch), a(out_ch * images * plane), parts;
  // Tap (a, b)'s sums as [tap][o][c], interleaved into dw at the end (stored
  // 9 floats apart, tap by tap, they streamed the whole of dw once per tap).
  ScratchFloats dwt(khw * out_ch * c_count);
  for (int ta = 0; ta < src.kh; ++ta) {
    const auto [p0, p1] =
        padfree::PixelsReading(ta, src.oh, src.stride, src.kh, src.pad_top, src.h);
    for (int tb = 0; tb < src.kw; ++tb) {
      const auto [q0, q1] =
          padfree::PixelsReading(tb, src.ow, src.stride, src.kw, src.pad_left, src.w);
      // The tap's terms in chain-major order: the pixels (i, p, q) where it
      // reads the source whose index i * plane + p * ow + q is j mod K, for
      // j = 0, 1, ..., each chain's in index order.
      std::vector<int64_t> index, seg{0};
      for (int j = 0; j < k; ++j) {
        for (int64_t i = 0; i < images; ++i) {
          for (int64_t p = p0; p < p1; ++p) {
            for (int64_t q = q0; q < q1; ++q) {
              const int64_t t = i * plane + p * src.ow + q;
              if (t % k == j) index.push_back(t);
            }
          }
        }
        seg.push_back(static_cast<int64_t>(index.size()));
      }
      const int64_t terms = seg.back();
      std::vector<int64_t> x_row(terms);  // term u's pixel as a row of xt
      for (int64_t u = 0; u < terms; ++u) {
        const int64_t t = index[u], i = t / plane, p = t % plane / src.ow, q = t % src.ow;
        x_row[u] = (i * src.h + p * src.stride + ta - src.pad_top) * src.w + q * src.stride + tb -
                   src.pad_left;
      }
      // A [o][term]: dy at the terms, gathered as whole rows of dyt and
      // transposed in vector blocks.
      ParallelFor(terms, GrainFor(terms, 64), [&](int64_t u0, int64_t u1) {
        for (int64_t u = u0; u < u1; ++u) {
          const float* row = dyt.data() + index[u] * out_ch;
          std::copy(row, row + out_ch, at.data() + u * out_ch);
        }
      });
      if (terms > 0) TransposeMatrix(at.data(), terms, out_ch, a.data());
      RunChains(out_ch, c_count, a.data(), seg, xt.data(), x_row.data(), spec,
                dwt.data() + (int64_t{ta} * src.kw + tb) * out_ch * c_count, c_count, parts);
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
