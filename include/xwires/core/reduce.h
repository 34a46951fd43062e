// Reduction orders: a numerics knob.
//
// Floating-point addition is not associative, so the order in which a
// framework sums (one accumulator, a tree, SIMD lanes) decides the last bits
// of every sum, and over a training run those bits grow into different models.
// Every reduction in the kernels we own (direct conv, owned matmul, batch-norm
// statistics, bias gradients, loss means) goes through these functions with a
// ReduceSpec from the numerics profile. Each order is a fixed, documented
// function of the input: no result depends on threads or timing.
#ifndef XWIRES_CORE_REDUCE_H_
#define XWIRES_CORE_REDUCE_H_

#include <cstdint>
#include <string>

#include "xwires/core/status.h"

namespace xw {

enum class ReduceOrder {
  // s = ((x0 + x1) + x2) + ... : one accumulator, index order (RepDL).
  kSequential,
  // Fixed binary tree: n <= 8 sums sequentially, otherwise
  // pairwise(x[0, n/2)) + pairwise(x[n/2, n)) with n/2 rounded down.
  kPairwise,
  // Kahan-Babuska compensated sequential sum.
  kKahan,
  // K independent accumulators, element i into lane i mod K (as a K-wide
  // SIMD register would), then lanes folded as a SIMD horizontal add:
  // for w = K/2, K/4, ..., 1: lane[j] += lane[j + w]. K = 1 is kSequential.
  kLanes,
};

struct ReduceSpec {
  // Default: the bitwise-reproducible reference order.
  ReduceOrder order = ReduceOrder::kSequential;
  // kLanes only: 1, 4, 8 or 16 (emulates scalar, SSE, AVX2, AVX-512 widths).
  int lanes = 8;
  // Dot products only: accumulate with a fused multiply-add (one rounding per
  // term) instead of a rounded product followed by a rounded add.
  bool fma = false;
};

// Parses "sequential", "pairwise", "kahan", or "lanesK" (K in 1, 4, 8, 16).
Result<ReduceSpec> ParseReduceOrder(const std::string& name, bool fma = false);
// Inverse of ParseReduceOrder ("lanes8", ...).
std::string ReduceOrderName(const ReduceSpec& spec);

// Sum of x[0], x[stride], ..., x[(n-1)*stride] in the given order.
float Sum(const float* x, int64_t n, const ReduceSpec& spec, int64_t stride = 1);
// Sum of a[i*sa] * b[i*sb] for i in [0, n) in the given order.
float Dot(const float* a, const float* b, int64_t n, const ReduceSpec& spec,
          int64_t sa = 1, int64_t sb = 1);

// Terms stored in equal segments, as one channel of an [N, C, S] tensor:
// term i is data[(i / seg) * pitch + i % seg] - shift (one rounding; a
// shift of 0 leaves every term's bits unchanged).
struct Segmented {
  const float* data = nullptr;
  int64_t seg = 1;      // terms per segment (S); >= 1
  int64_t pitch = 1;    // floats from one segment's start to the next (C*S)
  float shift = 0.0f;   // subtracted from every term (a channel mean)
};
// Sum / dot of the n terms, bit for bit what Sum / Dot give on the terms
// gathered into one buffer, without gathering them: batch-norm statistics
// read each channel in place. Pairwise runs 256-term blocks; the other
// orders walk the segments (lanesK as K-wide strips when the segment length
// is a multiple of K).
float SegmentedSum(const Segmented& x, int64_t n, const ReduceSpec& spec);
float SegmentedDot(const Segmented& a, const Segmented& b, int64_t n, const ReduceSpec& spec);
// *sum_b = SegmentedSum(b) and *dot = SegmentedDot(a, b), each bit for bit,
// reading b once for both under kPairwise (batch-norm backward).
void SegmentedSumAndDot(const Segmented& a, const Segmented& b, int64_t n,
                        const ReduceSpec& spec, float* sum_b, float* dot);

}  // namespace xw

#endif  // XWIRES_CORE_REDUCE_H_
