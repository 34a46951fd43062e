#include "xwires/core/reduce.h"

#include <algorithm>
#include <cmath>
#include <tuple>
#include <type_traits>
#include <utility>

#include "src/fma_scalar.h"
#include "src/kernels/reduce_block.h"
#include "src/kernels/reduce_lanes.h"

namespace xw {

namespace {

// Term accessor: either x[i*s] (sum) or a[i*sa]*b[i*sb] (dot).
struct SumTerm {
  const float* x;
  int64_t s;
  float operator()(int64_t i) const { return x[i * s]; }
  float Acc(float acc, int64_t i) const { return acc + x[i * s]; }
};
struct DotTerm {
  const float* a;
  const float* b;
  int64_t sa, sb;
  bool fma;
  float operator()(int64_t i) const { return a[i * sa] * b[i * sb]; }
  float Acc(float acc, int64_t i) const {
    return fma ? FmaF(a[i * sa], b[i * sb], acc) : acc + a[i * sa] * b[i * sb];
  }
};

template <typename T>
float Sequential(const T& t, int64_t begin, int64_t end) {
  float acc = 0.0f;
  for (int64_t i = begin; i < end; ++i) acc = t.Acc(acc, i);
  return acc;
}

// Pairwise over exactly 256 contiguous terms runs on the SIMD target
// (src/kernels/reduce_block.h): the tree below a 256-range is always the
// same, leaves of 8 consecutive terms, then pairs.
constexpr int64_t kBlock = kernels::kPairwiseBlock;

// a[0..256) - sa summed, or dotted with b[0..256) - sb when b is not null.
float Block(const float* a, float sa, const float* b, float sb, bool fma) {
  if (b == nullptr) return kernels::PairwiseBlockSum(a, sa);
  return kernels::PairwiseBlockDot(a, sa, b, sb, fma);
}
float Block(const SumTerm& t, int64_t begin) { return Block(t.x + begin, 0.0f, nullptr, 0.0f, false); }
float Block(const DotTerm& t, int64_t begin) {
  return Block(t.a + begin, 0.0f, t.b + begin, 0.0f, t.fma);
}

// Segmented terms (reduce.h): a (summed, or dotted with b).
struct SegTerm {
  Segmented a, b;
  bool dot, fma;
  static float At(const Segmented& s, int64_t i) {
    return s.data[(i / s.seg) * s.pitch + i % s.seg] - s.shift;
  }
  float operator()(int64_t i) const { return dot ? At(a, i) * At(b, i) : At(a, i); }
  float Acc(float acc, int64_t i) const {
    if (!dot) return acc + At(a, i);
    return fma ? FmaF(At(a, i), At(b, i), acc) : acc + At(a, i) * At(b, i);
  }
};

// Terms [begin, begin + 256) of s before the shift: in place when they lie
// in one segment, else copied run by run into buf.
const float* SegmentedBlock(const Segmented& s, int64_t begin, float* buf) {
  const int64_t r0 = begin % s.seg;
  if (r0 + kBlock <= s.seg) return s.data + (begin / s.seg) * s.pitch + r0;
  for (int64_t i = begin, end = begin + kBlock; i < end;) {
    const int64_t r = i % s.seg, run = std::min(s.seg - r, end - i);
    const float* src = s.data + (i / s.seg) * s.pitch + r;
    float* dst = buf + (i - begin);
    // A plain loop: the compiler vectorizes it, and a library call per
    // 64-term run costs more than the copy.
    for (int64_t k = 0; k < run; ++k) dst[k] = src[k];
    i += run;
  }
  return buf;
}

float Block(const SegTerm& t, int64_t begin) {
  alignas(64) float la[kBlock], lb[kBlock];
  const float* a = SegmentedBlock(t.a, begin, la);
  if (!t.dot) return Block(a, t.a.shift, nullptr, 0.0f, false);
  const bool same = t.b.data == t.a.data && t.b.seg == t.a.seg && t.b.pitch == t.a.pitch;
  const float* b = same ? a : SegmentedBlock(t.b, begin, lb);
  return Block(a, t.a.shift, b, t.b.shift, t.fma);
}

// SegTerm's terms [first, ...) of one segment as plain arrays: the same
// terms and arithmetic, without a division per term.
struct ShiftedTerm {
  const float* a;
  const float* b;
  float sa, sb;
  bool dot, fma;
  float At(int64_t i) const { return a[i] - sa; }
  float operator()(int64_t i) const { return dot ? At(i) * (b[i] - sb) : At(i); }
  float Acc(float acc, int64_t i) const {
    if (!dot) return acc + At(i);
    return fma ? FmaF(At(i), b[i] - sb, acc) : acc + At(i) * (b[i] - sb);
  }
};
float Block(const ShiftedTerm& t, int64_t begin) {
  return Block(t.a + begin, t.sa, t.dot ? t.b + begin : nullptr, t.sb, t.fma);
}

// Whether terms [begin, end) of t lie in one segment of each operand, and
// then those terms as a ShiftedTerm indexed from begin.
bool OneSegment(const SegTerm& t, int64_t begin, int64_t end, ShiftedTerm* out) {
  const auto inside = [&](const Segmented& s) { return begin / s.seg == (end - 1) / s.seg; };
  if (!inside(t.a) || (t.dot && !inside(t.b))) return false;
  const auto at = [&](const Segmented& s) {
    return s.data + (begin / s.seg) * s.pitch + begin % s.seg;
  };
  *out = {at(t.a), t.dot ? at(t.b) : nullptr, t.a.shift, t.b.shift, t.dot, t.fma};
  return true;
}

bool Contiguous(const SegTerm&) { return true; }
bool Contiguous(const ShiftedTerm&) { return true; }
bool Contiguous(const SumTerm& t) { return t.s == 1; }
bool Contiguous(const DotTerm& t) { return t.sa == 1 && t.sb == 1; }

template <typename T>
float Pairwise(const T& t, int64_t begin, int64_t end) {
  const int64_t n = end - begin;
  if (n <= 8) return Sequential(t, begin, end);
  if (n == kBlock && Contiguous(t)) return Block(t, begin);
  if constexpr (std::is_same_v<T, SegTerm>) {
    // A subtree inside one segment (an image's plane of a channel) walks
    // plain arrays: same tree, same terms.
    ShiftedTerm flat;
    if (OneSegment(t, begin, end, &flat)) return Pairwise(flat, 0, n);
  }
  const int64_t mid = begin + n / 2;
  return Pairwise(t, begin, mid) + Pairwise(t, mid, end);
}

// Compensated summation, Neumaier's variant: also correct when a term is
// larger than the sum.
struct Neumaier {
  float sum = 0.0f, comp = 0.0f;
  void Add(float v) {
    const float s = sum + v;
    if (std::fabs(sum) >= std::fabs(v)) {
      comp += (sum - s) + v;
    } else {
      comp += (v - s) + sum;
    }
    sum = s;
  }
  float Result() const { return sum + comp; }
};

template <typename T>
float Kahan(const T& t, int64_t n) {
  Neumaier k;
  for (int64_t i = 0; i < n; ++i) k.Add(t(i));
  return k.Result();
}

// Unit-stride terms as (a, b) for kernels::LanesStrips (b null: a sum).
bool Strided(const SumTerm& t, const float** a, const float** b) {
  *a = t.x;
  *b = nullptr;
  return t.s == 1;
}
bool Strided(const DotTerm& t, const float** a, const float** b) {
  *a = t.a;
  *b = t.b;
  return t.sa == 1 && t.sb == 1;
}
bool Fma(const SumTerm&) { return false; }
bool Fma(const DotTerm& t) { return t.fma; }

template <int K, typename T>
float LanesFixed(const T& t, int64_t n) {
  float lane[K] = {};
  int64_t i = 0;
  const float *a, *b;
  if constexpr (!std::is_same_v<T, SegTerm>) {
    if (Strided(t, &a, &b)) {
      // Whole strips on the dispatched SIMD target: K chains per step.
      i = n / K * K;
      kernels::LanesStrips(a, 0.0f, b, 0.0f, Fma(t), K, i, lane);
    }
  }
  for (; i + K <= n; i += K) {
    for (int l = 0; l < K; ++l) lane[l] = t.Acc(lane[l], i + l);
  }
  for (int l = 0; i < n; ++i, ++l) lane[l] = t.Acc(lane[l], i);
  for (int w = K / 2; w >= 1; w /= 2) {
    for (int l = 0; l < w; ++l) lane[l] += lane[l + w];
  }
  return lane[0];
}

// Segmented terms whose operands share one segment length: f(a, b, s0, len)
// for each segment in order, a and b pointing at the segment's first term
// s0 and len = its term count (the last one may be cut at n).
template <typename F>
bool ForEachSegment(const SegTerm& t, int64_t n, const F& f) {
  if (t.dot && t.b.seg != t.a.seg) return false;
  const int64_t seg = t.a.seg;
  for (int64_t s0 = 0; s0 < n; s0 += seg) {
    f(t.a.data + (s0 / seg) * t.a.pitch, t.b.data + (s0 / seg) * t.b.pitch, s0,
      std::min(seg, n - s0));
  }
  return true;
}

// Kahan over segmented terms, walking the segments instead of dividing per
// term; the same terms in the same order.
float Kahan(const SegTerm& t, int64_t n) {
  Neumaier k;
  const float sa = t.a.shift, sb = t.b.shift;
  const bool walked = ForEachSegment(t, n, [&](const float* a, const float* b, int64_t,
                                               int64_t len) {
    for (int64_t i = 0; i < len; ++i) k.Add(t.dot ? (a[i] - sa) * (b[i] - sb) : a[i] - sa);
  });
  if (walked) return k.Result();
  return Kahan<SegTerm>(t, n);
}

// LanesFixed on segmented terms whose segments are multiples of K long:
// term i's lane (i mod K) is its position mod K within its segment, so each
// segment runs as plain K-wide strips.
template <int K>
float LanesFixed(const SegTerm& t, int64_t n) {
  if (t.a.seg % K != 0) return LanesFixed<K, SegTerm>(t, n);
  float lane[K] = {};
  const float sa = t.a.shift, sb = t.b.shift;
  const bool walked = ForEachSegment(t, n, [&](const float* a, const float* b, int64_t s0,
                                               int64_t len) {
    const int64_t strips = len / K * K;
    // The strips on the dispatched SIMD target: K chains per step.
    kernels::LanesStrips(a, sa, t.dot ? b : nullptr, sb, t.fma, K, strips, lane);
    int64_t k = strips;
    for (int l = 0; k < len; ++k, ++l) lane[l] = t.Acc(lane[l], s0 + k);
  });
  if (!walked) return LanesFixed<K, SegTerm>(t, n);
  for (int w = K / 2; w >= 1; w /= 2) {
    for (int l = 0; l < w; ++l) lane[l] += lane[l + w];
  }
  return lane[0];
}

template <typename T>
float Reduce(const T& t, int64_t n, const ReduceSpec& spec) {
  if (n <= 0) return 0.0f;
  switch (spec.order) {
    case ReduceOrder::kSequential: return Sequential(t, 0, n);
    case ReduceOrder::kPairwise: return Pairwise(t, 0, n);
    case ReduceOrder::kKahan: return Kahan(t, n);
    case ReduceOrder::kLanes:
      switch (spec.lanes) {
        case 4: return LanesFixed<4>(t, n);
        case 8: return LanesFixed<8>(t, n);
        case 16: return LanesFixed<16>(t, n);
        default: return Sequential(t, 0, n);  // lanes == 1
      }
  }
  return Sequential(t, 0, n);
}

}  // namespace

Result<ReduceSpec> ParseReduceOrder(const std::string& name, bool fma) {
  ReduceSpec s;
  s.fma = fma;
  if (name == "sequential") {
    s.order = ReduceOrder::kSequential;
  } else if (name == "pairwise") {
    s.order = ReduceOrder::kPairwise;
  } else if (name == "kahan") {
    s.order = ReduceOrder::kKahan;
  } else if (name == "lanes1" || name == "lanes4" || name == "lanes8" || name == "lanes16") {
    s.order = ReduceOrder::kLanes;
    s.lanes = std::stoi(name.substr(5));
  } else {
    return Status::InvalidArgument("unknown reduction order '" + name +
                                   "' (expected sequential, pairwise, kahan, lanes1, lanes4, "
                                   "lanes8 or lanes16)");
  }
  return s;
}

std::string ReduceOrderName(const ReduceSpec& spec) {
  switch (spec.order) {
    case ReduceOrder::kSequential: return "sequential";
    case ReduceOrder::kPairwise: return "pairwise";
    case ReduceOrder::kKahan: return "kahan";
    case ReduceOrder::kLanes: return "lanes" + std::to_string(spec.lanes);
  }
  return "sequential";
}

float Sum(const float* x, int64_t n, const ReduceSpec& spec, int64_t stride) {
  return Reduce(SumTerm{x, stride}, n, spec);
}

float Dot(const float* a, const float* b, int64_t n, const ReduceSpec& spec, int64_t sa,
          int64_t sb) {
  return Reduce(DotTerm{a, b, sa, sb, spec.fma}, n, spec);
}

float SegmentedSum(const Segmented& x, int64_t n, const ReduceSpec& spec) {
  return Reduce(SegTerm{x, x, false, false}, n, spec);
}

float SegmentedDot(const Segmented& a, const Segmented& b, int64_t n, const ReduceSpec& spec) {
  return Reduce(SegTerm{a, b, true, spec.fma}, n, spec);
}

namespace {

// Pairwise SegmentedSum(b) and SegmentedDot(a, b) on one tree walk, each 256-
// term block of b loaded and transposed once for both.
template <typename T>
std::pair<float, float> PairwiseSumDot(const T& sum, const T& dot, int64_t begin, int64_t end) {
  const int64_t n = end - begin;
  if (n <= 8) return {Sequential(sum, begin, end), Sequential(dot, begin, end)};
  if (n == kBlock) {
    float sum_b, dot_ab;
    if constexpr (std::is_same_v<T, SegTerm>) {
      alignas(64) float la[kBlock], lb[kBlock];
      const float* a = SegmentedBlock(dot.a, begin, la);
      const float* b = SegmentedBlock(dot.b, begin, lb);
      kernels::PairwiseBlockSumDot(a, dot.a.shift, b, dot.b.shift, dot.fma, &sum_b, &dot_ab);
    } else {
      kernels::PairwiseBlockSumDot(dot.a + begin, dot.sa, dot.b + begin, dot.sb, dot.fma,
                                   &sum_b, &dot_ab);
    }
    return {sum_b, dot_ab};
  }
  if constexpr (std::is_same_v<T, SegTerm>) {
    ShiftedTerm s, d;
    if (OneSegment(sum, begin, end, &s) && OneSegment(dot, begin, end, &d)) {
      return PairwiseSumDot(s, d, 0, n);
    }
  }
  const int64_t mid = begin + n / 2;
  const auto lo = PairwiseSumDot(sum, dot, begin, mid), hi = PairwiseSumDot(sum, dot, mid, end);
  return {lo.first + hi.first, lo.second + hi.second};
}

}  // namespace

void SegmentedSumAndDot(const Segmented& a, const Segmented& b, int64_t n,
                        const ReduceSpec& spec, float* sum_b, float* dot) {
  if (spec.order != ReduceOrder::kPairwise || n <= 0) {
    *sum_b = SegmentedSum(b, n, spec);
    *dot = SegmentedDot(a, b, n, spec);
    return;
  }
  std::tie(*sum_b, *dot) =
      PairwiseSumDot(SegTerm{b, b, false, false}, SegTerm{a, b, true, spec.fma}, 0, n);
}

}  // namespace xw
