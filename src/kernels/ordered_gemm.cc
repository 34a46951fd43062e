#include "src/kernels/ordered_gemm.h"

#include <algorithm>
#include <vector>

#include "src/kernels/simd.h"
#include "xwires/core/parallel.h"
#include "xwires/core/tensor.h"

namespace xw {
namespace kernels {

namespace {

// Rows per register block: 8 rows x 32 columns = 16 accumulators (Kahan: 4
// rows, sum and compensation), leaving room for the B row and the broadcasts
// in 32 AVX-512 registers; a quarter of that with 16 AVX2 registers.
#if defined(__AVX512F__)
constexpr int kRows = 8;
constexpr int kKahanRows = 4;
#else
constexpr int kRows = 2;
constexpr int kKahanRows = 1;
#endif
// Terms packed at once: 256 x 32 floats = 32 KiB of B, reused by every row
// block while it is in L1.
constexpr int64_t kChunk = 256;

template <int R>
using Acc = V16[R][2];

template <int R>
inline void ZeroAcc(Acc<R>& acc) {
  for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = ZeroV();
}

// acc(r) += A(r, t) * B(t, :) for t = tb, tb+step, ... < te, one rounding per
// product and one per add, or one per term with FMA (the Dot term order).
template <int R, bool kFma>
inline void Chain(const float* a, int64_t lda, const float* bp, int64_t tb, int64_t te,
                  int64_t step, Acc<R>& acc) {
  for (int64_t t = tb; t < te; t += step) {
    const V16 x0 = LoadV(bp + t * kPanel), x1 = LoadV(bp + t * kPanel + 16);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const V16 w = SplatV(a[r * lda + t]);
      if constexpr (kFma) {
        acc[r][0] = FmaV(x0, w, acc[r][0]);
        acc[r][1] = FmaV(x1, w, acc[r][1]);
      } else {
        acc[r][0] = acc[r][0] + x0 * w;
        acc[r][1] = acc[r][1] + x1 * w;
      }
    }
  }
}

// Neumaier's compensated sum of rounded products, as reduce.cc's Kahan.
template <int R>
inline void KahanChain(const float* a, int64_t lda, const float* bp, int64_t n, Acc<R>& sum,
                       Acc<R>& comp) {
  for (int64_t t = 0; t < n; ++t) {
    V16 x[2] = {LoadV(bp + t * kPanel), LoadV(bp + t * kPanel + 16)};
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const V16 w = SplatV(a[r * lda + t]);
      for (int h = 0; h < 2; ++h) {
        const V16 v = x[h] * w;
        const V16 s = sum[r][h] + v;
        const V16 big = (sum[r][h] - s) + v, small = (v - s) + sum[r][h];
        comp[r][h] += AbsV(sum[r][h]) >= AbsV(v) ? big : small;
        sum[r][h] = s;
      }
    }
  }
}

// Pairwise tree of reduce.cc over terms [b, e), leaves of <= 8 sequential.
template <int R, bool kFma>
void PairwiseBlock(const float* a, int64_t lda, const float* bp, int64_t b, int64_t e,
                   Acc<R>& acc) {
  ZeroAcc<R>(acc);
  if (e - b <= 8) {
    Chain<R, kFma>(a, lda, bp, b, e, 1, acc);
    return;
  }
  const int64_t mid = b + (e - b) / 2;
  Acc<R> right;
  PairwiseBlock<R, kFma>(a, lda, bp, b, mid, acc);
  PairwiseBlock<R, kFma>(a, lda, bp, mid, e, right);
  for (int r = 0; r < R; ++r) {
    acc[r][0] += right[r][0];
    acc[r][1] += right[r][1];
  }
}

template <int R>
inline void LoadAcc(const float* st, int64_t stride, Acc<R>& acc) {
  for (int r = 0; r < R; ++r) {
    acc[r][0] = LoadV(st + r * stride);
    acc[r][1] = LoadV(st + r * stride + 16);
  }
}
template <int R>
inline void StoreAcc(float* st, int64_t stride, const Acc<R>& acc) {
  for (int r = 0; r < R; ++r) {
    StoreV(st + r * stride, acc[r][0]);
    StoreV(st + r * stride + 16, acc[r][1]);
  }
}

// Calls f.template operator()<R>() for the runtime row count 1..kRows.
template <typename F>
void DispatchRows(int rows, F&& f) {
  switch (rows) {
    case 1: f.template operator()<1>(); break;
    case 2: f.template operator()<2>(); break;
#if defined(__AVX512F__)
    case 3: f.template operator()<3>(); break;
    case 4: f.template operator()<4>(); break;
    case 5: f.template operator()<5>(); break;
    case 6: f.template operator()<6>(); break;
    case 7: f.template operator()<7>(); break;
    case 8: f.template operator()<8>(); break;
#endif
    default: break;
  }
}

// Per-thread buffers, grown on demand and kept for the next call.
struct Scratch {
  AlignedFloats bpack, apack, state, out, tmp;
};
Scratch& ThreadScratch() {
  thread_local Scratch s;
  return s;
}
float* Grow(AlignedFloats& v, int64_t n) {
  if (static_cast<int64_t>(v.size()) < n) v.resize(n);
  return v.data();
}

// One task: rows [i0, i1) x columns [j0, j0 + kPanel), all terms.
class Task {
 public:
  Task(const OrderedGemmProblem& p, const ReduceSpec& spec, int64_t i0, int64_t i1, int64_t j0)
      : p_(p), spec_(spec), i0_(i0), rows_(i1 - i0), j0_(j0), s_(ThreadScratch()) {}

  void Run() {
    float* out = Grow(s_.out, rows_ * kPanel);
    if (p_.t <= 0) {
      std::fill(out, out + rows_ * kPanel, 0.0f);
    } else if (spec_.order == ReduceOrder::kKahan) {
      Kahan(out);
    } else if (spec_.order == ReduceOrder::kPairwise) {
      if (spec_.fma) Pairwise<true>(0, p_.t, out); else Pairwise<false>(0, p_.t, out);
    } else {
      // As reduce.cc: lane counts other than 4, 8, 16 sum sequentially.
      const int l = spec_.lanes;
      const int lanes =
          spec_.order == ReduceOrder::kLanes && (l == 4 || l == 8 || l == 16) ? l : 1;
      if (spec_.fma) Lanes<true>(lanes, out); else Lanes<false>(lanes, out);
    }
    p_.store(i0_, i0_ + rows_, j0_, out);
  }

 private:
  // Packs B and fetches A for terms [t0, t1); returns A and sets *ld.
  const float* Load(int64_t t0, int64_t t1, const float** bp, int64_t* ld) {
    float* b = Grow(s_.bpack, (t1 - t0) * kPanel);
    p_.pack_b(j0_, t0, t1, b);
    *bp = b;
    return p_.a(i0_, i0_ + rows_, t0, t1, Grow(s_.apack, rows_ * (t1 - t0)), ld);
  }

  // Sequential (lanes == 1) or K-lane order: lane l of an output accumulates
  // terms t = l (mod K) in order; lanes carry across chunks in `state`.
  template <bool kFma>
  void Lanes(int k, float* out) {
    const int64_t lane_stride = kPanel, row_stride = k * kPanel;
    float* st = Grow(s_.state, rows_ * row_stride);
    std::fill(st, st + rows_ * row_stride, 0.0f);
    for (int64_t t0 = 0; t0 < p_.t; t0 += kChunk) {  // kChunk % K == 0
      const int64_t t1 = std::min(p_.t, t0 + kChunk), n = t1 - t0;
      const float* bp;
      int64_t ld;
      const float* a = Load(t0, t1, &bp, &ld);
      for (int64_t r0 = 0; r0 < rows_; r0 += kRows) {
        DispatchRows(static_cast<int>(std::min<int64_t>(kRows, rows_ - r0)), [&]<int R>() {
          for (int l = 0; l < k && l < n; ++l) {
            Acc<R> acc;
            float* s = st + r0 * row_stride + l * lane_stride;
            LoadAcc<R>(s, row_stride, acc);
            Chain<R, kFma>(a + r0 * ld, ld, bp, l, n, k, acc);
            StoreAcc<R>(s, row_stride, acc);
          }
        });
      }
    }
    // SIMD-style horizontal fold: lane[l] += lane[l + w] for w = K/2 ... 1.
    for (int64_t r = 0; r < rows_; ++r) {
      float* lane = st + r * row_stride;
      for (int w = k / 2; w >= 1; w /= 2) {
        for (int l = 0; l < w; ++l) {
          for (int h = 0; h < kPanel; h += 16) {
            StoreV(lane + l * kPanel + h,
                   LoadV(lane + l * kPanel + h) + LoadV(lane + (l + w) * kPanel + h));
          }
        }
      }
      std::copy(lane, lane + kPanel, out + r * kPanel);
    }
  }

  void Kahan(float* out) {
    float* sum = Grow(s_.state, 2 * rows_ * kPanel);
    float* comp = sum + rows_ * kPanel;
    std::fill(sum, sum + 2 * rows_ * kPanel, 0.0f);
    for (int64_t t0 = 0; t0 < p_.t; t0 += kChunk) {
      const int64_t t1 = std::min(p_.t, t0 + kChunk);
      const float* bp;
      int64_t ld;
      const float* a = Load(t0, t1, &bp, &ld);
      for (int64_t r0 = 0; r0 < rows_; r0 += kKahanRows) {
        DispatchRows(static_cast<int>(std::min<int64_t>(kKahanRows, rows_ - r0)), [&]<int R>() {
          Acc<R> s, c;
          LoadAcc<R>(sum + r0 * kPanel, kPanel, s);
          LoadAcc<R>(comp + r0 * kPanel, kPanel, c);
          KahanChain<R>(a + r0 * ld, ld, bp, t1 - t0, s, c);
          StoreAcc<R>(sum + r0 * kPanel, kPanel, s);
          StoreAcc<R>(comp + r0 * kPanel, kPanel, c);
        });
      }
    }
    for (int64_t i = 0; i < rows_ * kPanel; i += 16) {
      StoreV(out + i, LoadV(sum + i) + LoadV(comp + i));
    }
  }

  // The pairwise tree over [t0, t1): subtrees that fit a chunk are summed in
  // registers, larger ones split exactly as reduce.cc does (n/2 rounded down).
  template <bool kFma>
  void Pairwise(int64_t t0, int64_t t1, float* out) {
    const int64_t n = t1 - t0;
    if (n > kChunk) {
      const int64_t mid = t0 + n / 2;
      AlignedFloats right(rows_ * kPanel);
      Pairwise<kFma>(t0, mid, out);
      Pairwise<kFma>(mid, t1, right.data());
      for (int64_t i = 0; i < rows_ * kPanel; i += 16) {
        StoreV(out + i, LoadV(out + i) + LoadV(right.data() + i));
      }
      return;
    }
    const float* bp;
    int64_t ld;
    const float* a = Load(t0, t1, &bp, &ld);
    for (int64_t r0 = 0; r0 < rows_; r0 += kRows) {
      DispatchRows(static_cast<int>(std::min<int64_t>(kRows, rows_ - r0)), [&]<int R>() {
        Acc<R> acc;
        PairwiseBlock<R, kFma>(a + r0 * ld, ld, bp, 0, n, acc);
        StoreAcc<R>(out + r0 * kPanel, kPanel, acc);
      });
    }
  }

  const OrderedGemmProblem& p_;
  const ReduceSpec& spec_;
  int64_t i0_, rows_, j0_;
  Scratch& s_;
};

}  // namespace

void RunOrderedGemm(const OrderedGemmProblem& p, const ReduceSpec& spec) {
  if (p.m <= 0 || p.n <= 0) return;
  const int64_t panels = (p.n + kPanel - 1) / kPanel;
  const int64_t max_groups = (p.m + kRows - 1) / kRows;
  const int64_t target = std::max<int64_t>(1, p.target_tasks);
  const int64_t groups = std::clamp<int64_t>((target + panels - 1) / panels, 1, max_groups);
  // Row groups are whole register blocks, so the split never changes how a
  // row is computed (only which task computes it).
  const int64_t group_rows = ((p.m + groups - 1) / groups + kRows - 1) / kRows * kRows;
  const int64_t ngroups = (p.m + group_rows - 1) / group_rows;
  ParallelFor(panels * ngroups, 1, [&](int64_t begin, int64_t end) {
    for (int64_t task = begin; task < end; ++task) {
      const int64_t g = task % ngroups, j0 = (task / ngroups) * kPanel;
      const int64_t i0 = g * group_rows, i1 = std::min(p.m, i0 + group_rows);
      Task(p, spec, i0, i1, j0).Run();
    }
  });
}

}  // namespace kernels
}  // namespace xw
