// The pairwise 256-term block (reduce_block.h) on every SIMD target. A lane
// holds one leaf: LoadInterleaved4 over 4N terms and ConcatEven/ConcatOdd
// turn 8N consecutive terms into 8 vectors whose lane j holds leaf j's terms
// in order, so the leaves are summed vertically, in their own order, N at a
// time, with no horizontal add.
#include "src/kernels/reduce_block.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/kernels/reduce_block.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "src/kernels/hwy_ops.h"

HWY_BEFORE_NAMESPACE();
namespace xw {
namespace kernels {
namespace HWY_NAMESPACE {
namespace {

constexpr int kLeaves = 32, kLeaf = 8;
constexpr int kLanes = HWY_LANES(float);

// The perfect binary tree over the 32 leaf sums, in order.
HWY_INLINE float Tree(float* v) {
  for (int w = kLeaves / 2; w >= 1; w /= 2) {
    for (int i = 0; i < w; ++i) v[i] = v[2 * i] + v[2 * i + 1];
  }
  return v[0];
}

// t[c] (c < 8): lane j = term c of leaf j of the 8N terms at p, minus shift.
// (Not on the scalar target, which has no ConcatEven and sums leaf by leaf.)
#if HWY_TARGET != HWY_SCALAR
template <class D, class V>
HWY_INLINE void LeafTerms(D d, const float* HWY_RESTRICT p, float shift, V (&t)[kLeaf]) {
  V a0, a1, a2, a3, b0, b1, b2, b3;
  hn::LoadInterleaved4(d, p, a0, a1, a2, a3);  // a_k[i] = p[4i + k]
  hn::LoadInterleaved4(d, p + 4 * kLanes, b0, b1, b2, b3);
  const V s = hn::Set(d, shift);
  const V lo[4] = {a0, a1, a2, a3}, hi[4] = {b0, b1, b2, b3};
  for (int k = 0; k < 4; ++k) {
    t[k] = hn::Sub(hn::ConcatEven(d, hi[k], lo[k]), s);      // p[8j + k]
    t[k + 4] = hn::Sub(hn::ConcatOdd(d, hi[k], lo[k]), s);   // p[8j + 4 + k]
  }
}
#endif

// Leaf sums of a (summed, kind 0), of a*b (kind 1), or both of b and of a*b
// (kind 2: sums into leaf, dots into leaf2).
template <int kKind, bool kFma>
void Leaves(const float* a, float sa, const float* b, float sb, float* leaf, float* leaf2) {
#if HWY_TARGET == HWY_SCALAR
  {  // the leaves one by one
    for (int j = 0; j < kLeaves; ++j) {
      float s = 0.0f, q = 0.0f;
      for (int c = 0; c < kLeaf; ++c) {
        const float x = a[kLeaf * j + c] - sa;
        if constexpr (kKind == 0) {
          s = s + x;
        } else {
          const float y = b[kLeaf * j + c] - sb;
          if constexpr (kKind == 2) s = s + y;
          q = kFma ? FmaEmulated(x, y, q) : q + x * y;  // SCALAR: no FMA
        }
      }
      leaf[j] = kKind == 1 ? q : s;
      if constexpr (kKind == 2) leaf2[j] = q;
    }
  }
#else
  {
    const DF d;
    for (int j0 = 0; j0 < kLeaves; j0 += kLanes) {
      VF ta[kLeaf], tb[kLeaf];
      LeafTerms(d, a + kLeaf * j0, sa, ta);
      if constexpr (kKind != 0) LeafTerms(d, b + kLeaf * j0, sb, tb);
      VF s = hn::Zero(d), q = hn::Zero(d);
      for (int c = 0; c < kLeaf; ++c) {
        if constexpr (kKind == 0) {
          s = hn::Add(s, ta[c]);
        } else {
          if constexpr (kKind == 2) s = hn::Add(s, tb[c]);
          q = Accumulate<kFma>(q, ta[c], tb[c]);
        }
      }
      hn::StoreU(kKind == 1 ? q : s, d, leaf + j0);
      if constexpr (kKind == 2) hn::StoreU(q, d, leaf2 + j0);
    }
  }
#endif
}

}  // namespace

float BlockSum(const float* a, float sa) {
  HWY_ALIGN float leaf[kLeaves];
  Leaves<0, false>(a, sa, nullptr, 0.0f, leaf, nullptr);
  return Tree(leaf);
}

float BlockDot(const float* a, float sa, const float* b, float sb, bool fma) {
  HWY_ALIGN float leaf[kLeaves];
  if (fma) {
    Leaves<1, true>(a, sa, b, sb, leaf, nullptr);
  } else {
    Leaves<1, false>(a, sa, b, sb, leaf, nullptr);
  }
  return Tree(leaf);
}

void BlockSumDot(const float* a, float sa, const float* b, float sb, bool fma, float* sum_b,
                 float* dot) {
  HWY_ALIGN float sums[kLeaves], dots[kLeaves];
  if (fma) {
    Leaves<2, true>(a, sa, b, sb, sums, dots);
  } else {
    Leaves<2, false>(a, sa, b, sb, sums, dots);
  }
  *sum_b = Tree(sums);
  *dot = Tree(dots);
}

}  // namespace HWY_NAMESPACE
}  // namespace kernels
}  // namespace xw
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace xw {
namespace kernels {

HWY_EXPORT(BlockSum);
HWY_EXPORT(BlockDot);
HWY_EXPORT(BlockSumDot);

float PairwiseBlockSum(const float* a, float sa) {
  return HWY_DYNAMIC_DISPATCH(BlockSum)(a, sa);
}
float PairwiseBlockDot(const float* a, float sa, const float* b, float sb, bool fma) {
  return HWY_DYNAMIC_DISPATCH(BlockDot)(a, sa, b, sb, fma);
}
void PairwiseBlockSumDot(const float* a, float sa, const float* b, float sb, bool fma,
                         float* sum_b, float* dot) {
  HWY_DYNAMIC_DISPATCH(BlockSumDot)(a, sa, b, sb, fma, sum_b, dot);
}

}  // namespace kernels
}  // namespace xw
#endif  // HWY_ONCE
