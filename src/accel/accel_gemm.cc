// AccelGemm (accel_gemm.h): panels of 16 outputs, split-K partitions and
// the scalar recomputation of the rare lanes the vector steps leave out.
#include "src/accel/accel_gemm.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "xwires/core/parallel.h"

namespace xw {
namespace accel {
namespace {

// Rows per kernel call (its accumulators stay in cache across a chunk) and
// at most per task.
constexpr int64_t kRowsPerTask = 8;
constexpr int64_t kMaxRows = 64;

// Column j of B, contiguous.
void Column(const PanelB& b, int64_t k, int64_t j, float* col) {
  const float* bp = b.b + (j / kPanel) * b.panel_stride + j % kPanel;
  for (int64_t t = 0; t < k; ++t) col[t] = bp[t * b.ld];
}

// The tensor-core dot of one row and one column from +0 (AccelDot's
// partial), in the scalar definition.
float ScalarTensorCoreDot(const float* a, const float* col, int64_t k, const TensorCoreSpec& tc) {
  float acc = 0.0f;
  for (int64_t t = 0; t < k; t += tc.block) {
    const int n = static_cast<int>(std::min<int64_t>(tc.block, k - t));
    acc = TensorCoreBlockFma(acc, a + t, col + t, n, tc);
  }
  return acc;
}

}  // namespace

OperandRange MergeRanges(const OperandRange& x, const OperandRange& y) {
  OperandRange r;
  r.reduced = x.reduced && y.reduced;
  r.min_nonzero = x.min_nonzero == 0   ? y.min_nonzero
                  : y.min_nonzero == 0 ? x.min_nonzero
                                       : std::min(x.min_nonzero, y.min_nonzero);
  r.max_abs = std::max(x.max_abs, y.max_abs);
  return r;
}

bool F32PanelSpec(const TensorCoreSpec& tc) {
  return tc.block >= 1 && tc.block <= 64 && tc.align_bits >= 0 && tc.align_bits <= 8 &&
         int64_t{tc.block + 1} << (24 + tc.align_bits) <= (int64_t{1} << 31) - 128;
}

bool F32PanelApplies(const TensorCoreSpec& tc, const OperandRange& a, const OperandRange& b,
                     int64_t k) {
  if (!F32PanelSpec(tc) || !a.reduced || !b.reduced) return false;
  if (a.min_nonzero == 0 || b.min_nonzero == 0) return true;  // every product is zero
  // Products of floats are exact in double; the bounds are powers of two.
  const double smallest = static_cast<double>(a.min_nonzero) * b.min_nonzero;
  const double largest = static_cast<double>(a.max_abs) * b.max_abs;
  return smallest >= std::ldexp(1.0, tc.align_bits - 103) &&
         largest * static_cast<double>(k) < std::ldexp(1.0, 126);
}

namespace {

// Runs body(task) for task < tasks, on ParallelFor or on this thread.
template <typename F>
void ForTasks(int64_t tasks, bool parallel, const F& body) {
  if (!parallel) {
    for (int64_t t = 0; t < tasks; ++t) body(t);
    return;
  }
  ParallelFor(tasks, 1, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) body(t);
  });
}

// B's terms [t0, t0 + k) (the same panels from row t0 on).
PanelB Rows(const PanelB& b, int64_t t0) { return {b.b + t0 * b.ld, b.ld, b.panel_stride}; }

// OperandRange of B's n columns and k terms.
OperandRange RangeOfB(const PanelB& b, int64_t k, int64_t n) {
  if (!b.Panels()) return F32PanelRange(b.b, k, n, b.ld);
  OperandRange r = F32PanelRange(b.b, k, kPanel, kPanel);
  for (int64_t j0 = kPanel; j0 < n; j0 += kPanel) {
    r = MergeRanges(r, F32PanelRange(b.b + (j0 / kPanel) * b.panel_stride, k, kPanel, kPanel));
  }
  return r;
}

// C = the tensor-core products of all k terms, from +0.
void TensorCoreGemm(const float* a, int64_t lda, const PanelB& b, float* c, int64_t ldc,
                    int64_t m, int64_t n, int64_t k, const TensorCoreSpec& tc, bool parallel,
                    const GemmRanges* ranges) {
  const int64_t panels = (n + kPanel - 1) / kPanel;
  const int64_t full = b.Panels() ? panels : n / kPanel;
  // Row-major B's last, narrower panel padded with zero columns (their
  // lanes are computed and dropped); panel-layout B comes padded.
  std::vector<float> tail;
  if (full < panels) {
    tail.assign(static_cast<size_t>(k * kPanel), 0.0f);
    for (int64_t t = 0; t < k; ++t) {
      std::copy(b.b + t * b.ld + full * kPanel, b.b + t * b.ld + n, tail.data() + t * kPanel);
    }
  }
  // Terms in chunks of whole blocks, so a chunk of B stays in cache while
  // every row of the task goes through it; B's chunk is packed contiguous
  // where its rows lie far apart (a stride of a power of two maps every row
  // to the same few cache sets). A task takes up to kMaxRows rows: all of
  // them on one thread, else enough tasks for the workers.
  const int64_t chunk = tc.block * std::max(1, 256 / tc.block);
  // As many rows per task as leave the workers 8 tasks (a packed chunk then
  // serves the most rows).
  int64_t rows_per_task = kMaxRows;
  while (parallel && rows_per_task > kRowsPerTask &&
         panels * ((m + rows_per_task - 1) / rows_per_task) < 8) {
    rows_per_task /= 2;
  }
  const int64_t row_tasks = (m + rows_per_task - 1) / rows_per_task;
  const bool f32 =
      F32PanelSpec(tc) &&
      (ranges != nullptr ? F32PanelApplies(tc, ranges->a, ranges->b, k)
                         : F32PanelApplies(tc, F32PanelRange(a, m, k, lda), RangeOfB(b, k, n), k));
  ForTasks(panels * row_tasks, parallel, [&](int64_t task) {
    const int64_t p = task / row_tasks, i0 = (task % row_tasks) * rows_per_task;
    const int64_t rows = std::min(rows_per_task, m - i0), j0 = p * kPanel;
    const int64_t width = std::min(kPanel, n - j0);
    const float* bp = p < full ? b.b + p * b.panel_stride : tail.data();
    const int64_t ldbp = p < full ? b.ld : kPanel;
    const bool pack = f32 && ldbp > kPanel && rows > 1;
    alignas(64) float packed[256 * kPanel];
    double acc[kMaxRows * kPanel];
    float acc32[kMaxRows * kPanel];
    if (f32) {
      std::fill(acc32, acc32 + rows * kPanel, 0.0f);
    } else {
      std::fill(acc, acc + rows * kPanel, 0.0);
    }
    bool bad[kMaxRows] = {};
    for (int64_t t0 = 0; t0 < k; t0 += chunk) {
      const int64_t kk = std::min(chunk, k - t0);
      const float* bc = bp + t0 * ldbp;
      int64_t ldbc = ldbp;
      if (pack) {
        // Rows a page or more apart defeat the hardware's prefetch: fetch
        // 40 rows ahead (the next chunk's first rows at the end).
        for (int64_t t = 0; t < kk; ++t) {
          __builtin_prefetch(bc + (t + 40) * ldbp);
          std::memcpy(packed + t * kPanel, bc + t * ldbp, sizeof(float) * kPanel);
        }
        bc = packed;
        ldbc = kPanel;
      }
      for (int64_t r0 = 0; r0 < rows; r0 += kRowsPerTask) {
        const int64_t rr = std::min(kRowsPerTask, rows - r0);
        const float* ar = a + (i0 + r0) * lda + t0;
        if (f32) {
          if (TensorCorePanelBlocks(ar, lda, bc, ldbc, rr, kk, tc, acc32 + r0 * kPanel)) continue;
          TensorCorePanelF32(ar, lda, bc, ldbc, rr, kk, tc, acc32 + r0 * kPanel, bad + r0);
        } else {
          TensorCorePanel(ar, lda, bc, ldbc, rr, kk, tc, acc + r0 * kPanel, bad + r0);
        }
      }
    }
    std::vector<float> col;
    for (int64_t r = 0; r < rows; ++r) {
      float* cr = c + (i0 + r) * ldc + j0;
      if (!bad[r]) {
        for (int64_t j = 0; j < width; ++j) {
          cr[j] = f32 ? acc32[r * kPanel + j] : static_cast<float>(acc[r * kPanel + j]);
        }
        continue;
      }
      col.resize(static_cast<size_t>(k));
      for (int64_t j = 0; j < width; ++j) {
        Column(b, k, j0 + j, col.data());
        cr[j] = ScalarTensorCoreDot(a + (i0 + r) * lda, col.data(), k, tc);
      }
    }
  });
}

// Ordered accumulation: AccelDot per output on B's gathered columns.
void OrderedGemm(const float* a, int64_t lda, const PanelB& b, float* c, int64_t ldc, int64_t m,
                 int64_t n, int64_t k, const AccelSpec& spec, const TensorCoreSpec& tc,
                 const ReduceSpec& reduce, bool parallel) {
  ForTasks(n, parallel, [&](int64_t j) {
    std::vector<float> col(static_cast<size_t>(k));
    Column(b, k, j, col.data());
    for (int64_t i = 0; i < m; ++i) {
      c[i * ldc + j] = AccelDot(a + i * lda, col.data(), k, spec, tc, reduce);
    }
  });
}

}  // namespace

void AccelGemm(const float* a, int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc,
               int64_t m, int64_t n, int64_t k, const AccelSpec& spec, const TensorCoreSpec& tc,
               const ReduceSpec& reduce, bool parallel) {
  AccelGemm(a, lda, PanelB{b, ldb, kPanel}, c, ldc, m, n, k, spec, tc, reduce, parallel);
}

void AccelGemm(const float* a, int64_t lda, const PanelB& b, float* c, int64_t ldc, int64_t m,
               int64_t n, int64_t k, const AccelSpec& spec, const TensorCoreSpec& tc,
               const ReduceSpec& reduce, bool parallel, const GemmRanges* ranges) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0 || spec.accumulation != Accumulation::kTensorCore) {
    return OrderedGemm(a, lda, b, c, ldc, m, n, k, spec, tc, reduce, parallel);
  }
  const int64_t parts = std::clamp<int64_t>(spec.split_k, 1, k);
  if (parts == 1) return TensorCoreGemm(a, lda, b, c, ldc, m, n, k, tc, parallel, ranges);
  // Split-K (AccelDot): partitions of floor(k / parts) terms, the last takes
  // the rest; each from +0, rounded to the partial format, then added in
  // partition order in fp32.
  const int64_t len = k / parts;
  std::vector<float> part(static_cast<size_t>(m * n));
  for (int64_t j = 0; j < parts; ++j) {
    const int64_t start = j * len, count = j + 1 == parts ? k - start : len;
    TensorCoreGemm(a + start, lda, Rows(b, start), part.data(), n, m, n, count, tc, parallel,
                   ranges);
    for (int64_t i = 0; i < m; ++i) {
      float* cr = c + i * ldc;
      for (int64_t jj = 0; jj < n; ++jj) {
        const float s = RoundToFormat(part[i * n + jj], spec.partial);
        cr[jj] = j == 0 ? s : cr[jj] + s;
      }
    }
  }
}

}  // namespace accel
}  // namespace xw
