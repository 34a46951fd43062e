// Golden vectors of the accelerator-numerics reference note (§6.1-§6.5):
// TF32 ties, bf16/fp16 ties, overflow, NaN and subnormals, the tensor-core
// block model and split-K.
#include "xwires/core/accel_numerics.h"

#include <gtest/gtest.h>

#include <bit>
#include <cfloat>
#include <cmath>
#include <limits>
#include <set>
#include <vector>

namespace xw {
namespace {

float F(uint32_t u) { return std::bit_cast<float>(u); }
uint32_t U(float f) { return std::bit_cast<uint32_t>(f); }

// One 1x1 "GEMM" a*b under operand rounding `r` and A100 accumulation.
float Gemm1(float a, float b, OperandRounding r) {
  AccelSpec s;
  s.accumulation = Accumulation::kTensorCore;
  s.preset = TensorCorePreset::kA100;
  const float ar = RoundOperand(a, r), br = RoundOperand(b, r);
  return AccelDot(&ar, &br, 1, s, s.TensorCoreFor(r), ReduceSpec{});
}

TEST(Tf32, TieAt1024Point5) {
  const float x = F(0x44801000);  // 1024.5, a tie at 10 fraction bits
  EXPECT_EQ(Gemm1(x, 1.0f, OperandRounding::kTf32Rna), 1025.0f);
  EXPECT_EQ(Gemm1(x, 1.0f, OperandRounding::kTf32Rne), 1024.0f);
  EXPECT_EQ(Gemm1(x, 1.0f, OperandRounding::kTf32Rz), 1024.0f);
}

TEST(Tf32, AboveTie) {
  const float x = F(0x3F801800);  // 1 + 3 * 2^-12
  EXPECT_EQ(Gemm1(x, 1.0f, OperandRounding::kTf32Rna), 1.0009765625f);
  EXPECT_EQ(Gemm1(x, 1.0f, OperandRounding::kTf32Rne), 1.0009765625f);
  EXPECT_EQ(Gemm1(x, 1.0f, OperandRounding::kTf32Rz), 1.0f);
}

TEST(Tf32, JustBelowOne) {
  const float x = F(0x3F7FFFFF);
  EXPECT_EQ(Gemm1(x, x, OperandRounding::kTf32Rz), 0.9990236759185791015625f);
  EXPECT_EQ(Gemm1(x, x, OperandRounding::kTf32Rna), 1.0f);
  EXPECT_EQ(Gemm1(x, x, OperandRounding::kTf32Rne), 1.0f);
}

TEST(Tf32, OverflowInfNaN) {
  const float max = F(0x7F7FFFFF);
  EXPECT_EQ(RoundTf32Rna(max), std::numeric_limits<float>::infinity());
  EXPECT_EQ(RoundTf32Rne(max), std::numeric_limits<float>::infinity());
  EXPECT_EQ(U(RoundTf32Rz(max)), 0x7F7FE000u);
  EXPECT_EQ(RoundTf32Rna(-INFINITY), -INFINITY);
  EXPECT_EQ(RoundTf32Rne(INFINITY), INFINITY);
  EXPECT_EQ(RoundTf32Rz(-INFINITY), -INFINITY);
  EXPECT_TRUE(std::isnan(RoundTf32Rna(F(0x7F800001))));  // payload only in the low bits
  EXPECT_TRUE(std::isnan(RoundTf32Rz(F(0xFF800001))));
  EXPECT_EQ(U(RoundTf32Rne(F(0x7FC00000))), 0x7FFFFFFFu);
  EXPECT_EQ(U(RoundTf32Rna(F(0x7FC00000))), 0x7FC00000u);
  // Subnormals keep fp32's exponent: 2^-149 (low bit) is a tie below 2^-136.
  EXPECT_EQ(RoundTf32Rz(F(0x00001FFF)), 0.0f);
  EXPECT_EQ(U(RoundTf32Rna(F(0x00001000))), 0x00002000u);
  EXPECT_EQ(U(RoundTf32Rne(F(0x00001000))), 0x00000000u);
  EXPECT_EQ(U(RoundTf32Rne(F(0x00003000))), 0x00004000u);
  // Sign is kept.
  EXPECT_EQ(RoundTf32Rna(-1024.5f), -1025.0f);
}

TEST(Bf16, TiesOverflowNaNSubnormal) {
  EXPECT_EQ(Bf16Bits(F(0x3F808000)), 0x3F80);  // 1 + 2^-8, tie to even (down)
  EXPECT_EQ(Bf16Bits(F(0x3F818000)), 0x3F82);  // tie to even (up)
  EXPECT_EQ(Bf16Bits(F(0x3F808001)), 0x3F81);  // above the tie
  EXPECT_EQ(Bf16Bits(F(0x7F7FFFFF)), 0x7F80);  // overflow to Inf
  EXPECT_EQ(Bf16Bits(F(0xFF7FFFFF)), 0xFF80);
  EXPECT_EQ(Bf16Bits(std::numeric_limits<float>::quiet_NaN()), 0x7FC0);
  EXPECT_EQ(Bf16Bits(F(0x7F800001)), 0x7FC0);
  EXPECT_EQ(Bf16Bits(INFINITY), 0x7F80);
  EXPECT_EQ(Bf16Bits(F(0x00008000)), 0x0000);  // subnormal tie to even zero
  EXPECT_EQ(Bf16Bits(F(0x00018000)), 0x0002);  // subnormal tie to even, up
  EXPECT_EQ(Bf16Bits(F(0x00018000), /*flush_subnormals=*/true), 0x0000);
  EXPECT_EQ(Bf16Bits(F(0x80018000), true), 0x8000);
  EXPECT_EQ(Bf16Bits(F(0x007FFFFF), true), 0x0080);  // rounds up to the normal min: kept
  EXPECT_EQ(Bf16ToFloat(0x3F82), 1.015625f);
  EXPECT_EQ(RoundOperand(F(0x3F818000), OperandRounding::kBf16Rne), 1.015625f);
}

TEST(Fp16, TiesOverflowNaNSubnormal) {
  EXPECT_EQ(Fp16Bits(1.0f), 0x3C00);
  EXPECT_EQ(Fp16Bits(F(0x3F801000)), 0x3C00);  // 1 + 2^-11: tie to even (down)
  EXPECT_EQ(Fp16Bits(F(0x3F803000)), 0x3C02);  // 1 + 3*2^-11: tie to even (up)
  EXPECT_EQ(Fp16Bits(65504.0f), 0x7BFF);
  EXPECT_EQ(Fp16Bits(65519.996f), 0x7BFF);
  EXPECT_EQ(Fp16Bits(65520.0f), 0x7C00);  // the tie at 65520 goes to 2^16: Inf
  EXPECT_EQ(Fp16Bits(-1e6f), 0xFC00);
  EXPECT_EQ(Fp16Bits(std::numeric_limits<float>::quiet_NaN()), 0x7E00);
  EXPECT_EQ(Fp16Bits(-std::numeric_limits<float>::quiet_NaN()), 0xFE00);
  EXPECT_EQ(Fp16Bits(std::ldexp(1.0f, -24)), 0x0001);   // smallest subnormal
  EXPECT_EQ(Fp16Bits(std::ldexp(1.0f, -25)), 0x0000);   // tie to even zero
  EXPECT_EQ(Fp16Bits(std::ldexp(1.5f, -25)), 0x0001);   // above the tie
  EXPECT_EQ(Fp16Bits(std::ldexp(3.0f, -25)), 0x0002);   // 1.5 units: tie to even (up)
  EXPECT_EQ(Fp16Bits(std::ldexp(1.0f, -14)), 0x0400);   // smallest normal
  EXPECT_EQ(Fp16Bits(std::ldexp(1023.5f, -24)), 0x0400);  // carry into the normals
  EXPECT_EQ(Fp16ToFloat(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(Fp16ToFloat(0x8400), -std::ldexp(1.0f, -14));
  EXPECT_EQ(Fp16ToFloat(0x7C00), INFINITY);
  EXPECT_TRUE(std::isnan(Fp16ToFloat(0x7E00)));
  // Round trip of every finite half through float and back.
  for (uint32_t h = 0; h < 0x10000; ++h) {
    if ((h & 0x7C00) == 0x7C00) continue;
    ASSERT_EQ(Fp16Bits(Fp16ToFloat(static_cast<uint16_t>(h))), h) << h;
  }
  // A scaled gradient of 2^-30 (loss scale 2^16) survives as the fp16 normal
  // minimum; unscaled it underflows to zero (note §6.3 (c)).
  EXPECT_EQ(RoundToFormat(std::ldexp(1.0f, -30) * 65536.0f, StorageFormat::kFp16),
            std::ldexp(1.0f, -14));
  EXPECT_EQ(RoundToFormat(std::ldexp(1.0f, -30), StorageFormat::kFp16), 0.0f);
}

TEST(TensorCore, FourTermBlockA100) {
  // note §6.1 step 5 / Fasi test C.1: RZ drops 2^-23 (the 2^-24 is truncated).
  const float a[4] = {1, 1, 1, 1};
  const float b[4] = {2, std::ldexp(1.0f, -23) + std::ldexp(1.0f, -24), 0, 0};
  EXPECT_EQ(TensorCoreBlockFma(0.0f, a, b, 4, {4, 1}), 2.0f);
  // Plain fp32 (even a sequential sum) keeps it: 2 + 2^-23 rounds to nearest.
  EXPECT_EQ(2.0f + b[1], 2.0f + std::ldexp(1.0f, -22));
}

TEST(TensorCore, RoundTowardZeroAndNonFinite) {
  const float one = 1.0f;
  // 1 + 2^-24 * 3: exact 1 + 3*2^-24 RZ to fp32 -> 1 + 2^-23.
  const float a[2] = {1.0f, 3.0f}, b[2] = {1.0f, std::ldexp(1.0f, -24)};
  EXPECT_EQ(TensorCoreBlockFma(0.0f, a, b, 2, {4, 1}), 1.0f + std::ldexp(1.0f, -23));
  EXPECT_EQ(TensorCoreBlockFma(0.0f, a, b, 2, {4, 2}), 1.0f + std::ldexp(1.0f, -23));
  // Negative: toward zero.
  const float na[2] = {-1.0f, -3.0f};
  EXPECT_EQ(TensorCoreBlockFma(0.0f, na, b, 2, {4, 2}), -1.0f - std::ldexp(1.0f, -23));
  // Overflow saturates at FLT_MAX under RZ.
  const float big[2] = {FLT_MAX, FLT_MAX};
  const float ones[2] = {1.0f, 1.0f};
  EXPECT_EQ(TensorCoreBlockFma(0.0f, big, ones, 2, {4, 1}), FLT_MAX);
  const float inf = INFINITY;
  EXPECT_EQ(TensorCoreBlockFma(0.0f, &inf, &one, 1, {4, 1}), INFINITY);
  const float pm[2] = {INFINITY, -INFINITY};
  EXPECT_TRUE(std::isnan(TensorCoreBlockFma(0.0f, pm, ones, 2, {4, 1})));
  // The accumulator takes part in the alignment: c = 2^24 absorbs a 1 at neab 0.
  EXPECT_EQ(TensorCoreBlockFma(16777216.0f, &one, &one, 1, {4, 0}), 16777216.0f);
  EXPECT_EQ(TensorCoreBlockFma(16777216.0f, &one, &one, 1, {4, 1}), 16777216.0f);  // RZ
}

TEST(SplitK, GoldenFourTerms) {
  const float a[4] = {16777216.0f, 1.0f, 1.0f, -16777216.0f};
  const float b[4] = {1, 1, 1, 1};
  AccelSpec s;
  ReduceSpec seq;
  EXPECT_EQ(Dot(a, b, 4, seq), 0.0f);
  EXPECT_EQ(AccelDot(a, b, 4, s, {}, seq), 0.0f);  // sequential
  s.split_k = 2;
  EXPECT_EQ(AccelDot(a, b, 4, s, {}, seq), 1.0f);  // split in two
  AccelSpec tc;
  tc.accumulation = Accumulation::kTensorCore;
  tc.preset = TensorCorePreset::kA100;
  EXPECT_EQ(AccelDot(a, b, 4, tc, tc.TensorCoreFor(OperandRounding::kTf32Rna), seq), 2.0f);
  tc.preset = TensorCorePreset::kCustom;
  tc.tensor_core = {4, 0};  // V100-like: the 1s are truncated away
  EXPECT_EQ(AccelDot(a, b, 4, tc, tc.tensor_core, seq), 0.0f);
}

TEST(SplitK, PartitionsAndPartialFormat) {
  // CUTLASS rule: K = 10, P = 3 -> 3, 3, 4. Partials in bf16 lose bits.
  std::vector<float> a(10), b(10, 1.0f);
  for (int i = 0; i < 10; ++i) a[i] = i < 6 ? 1.0f : std::ldexp(1.0f, -9);
  AccelSpec s;
  s.split_k = 3;
  // Partials 3, 3, 4*2^-9 = 2^-7; fp32 sum 6 + 2^-7.
  EXPECT_EQ(AccelDot(a.data(), b.data(), 10, s, {}, ReduceSpec{}), 6.0f + std::ldexp(1.0f, -7));
  // If the last partial took terms 7..9 only (3, 3, 4 split wrong), the sum
  // would still be exact; so check the boundary with bf16 partials instead:
  // 1 + 1 + 1 + 2^-9 in one partial would round to 3 in bf16.
  a[5] = std::ldexp(1.0f, -9);
  s.partial = StorageFormat::kBf16;
  // Partials: 3 | 2 + 2^-9 -> bf16 2 | 2^-7 -> 3 + 2 + 2^-7.
  EXPECT_EQ(AccelDot(a.data(), b.data(), 10, s, {}, ReduceSpec{}), 5.0f + std::ldexp(1.0f, -7));
  // P larger than K is capped at K.
  s.split_k = 50;
  s.partial = StorageFormat::kFp32;
  EXPECT_EQ(AccelDot(a.data(), b.data(), 3, s, {}, ReduceSpec{}), 3.0f);
}

TEST(TensorCore, Presets) {
  EXPECT_EQ(TensorCorePresetSpec(TensorCorePreset::kA100, OperandRounding::kTf32Rna).block, 4);
  EXPECT_EQ(TensorCorePresetSpec(TensorCorePreset::kA100, OperandRounding::kBf16Rne).block, 8);
  EXPECT_EQ(TensorCorePresetSpec(TensorCorePreset::kA100, OperandRounding::kFp16Rne).align_bits,
            1);
  EXPECT_EQ(TensorCorePresetSpec(TensorCorePreset::kH100, OperandRounding::kTf32Rz).block, 8);
  EXPECT_EQ(TensorCorePresetSpec(TensorCorePreset::kH100, OperandRounding::kFp16Rne).block, 16);
  EXPECT_EQ(TensorCorePresetSpec(TensorCorePreset::kH100, OperandRounding::kNone).align_bits, 2);
}

TEST(TensorCore, LongDotBlocksInOrder) {
  // 8 terms, block 4: the first block's exact sum is truncated before the
  // second block adds to it.
  std::vector<float> a = {1, 1, 1, 1, 1, 1, 1, 1};
  std::vector<float> b = {16777216.0f, 1, 0, 0, 1, 0, 0, 0};
  // Block 1: 2^24 + 1 exact, RZ -> 2^24. Block 2: 2^24 + 1 -> 2^24.
  EXPECT_EQ(AccelDot(a.data(), b.data(), 8,
                     [] {
                       AccelSpec s;
                       s.accumulation = Accumulation::kTensorCore;
                       return s;
                     }(),
                     {4, 1}, ReduceSpec{}),
            16777216.0f);
  // One block of 8 sees 2^24 + 2 exactly.
  AccelSpec s;
  s.accumulation = Accumulation::kTensorCore;
  EXPECT_EQ(AccelDot(a.data(), b.data(), 8, s, {8, 1}, ReduceSpec{}), 16777218.0f);
}

TEST(Scatter, IndexVersusOrderAndStablePermutation) {
  // note §6.5: (1, 2^24, -2^24) in index order -> 0; (2^24, -2^24, 1) -> 1.
  float r = 0;
  for (float v : {1.0f, 16777216.0f, -16777216.0f}) r += v;
  EXPECT_EQ(r, 0.0f);
  r = 0;
  for (float v : {16777216.0f, -16777216.0f, 1.0f}) r += v;
  EXPECT_EQ(r, 1.0f);
  std::vector<int64_t> p1, p2, p3;
  ScatterPermutation(7, 3, 11, 5, 100, &p1);
  ScatterPermutation(7, 3, 11, 5, 100, &p2);
  ScatterPermutation(7, 4, 11, 5, 100, &p3);
  EXPECT_EQ(p1, p2);
  EXPECT_NE(p1, p3);
  EXPECT_EQ(std::set<int64_t>(p1.begin(), p1.end()).size(), 100u);
  // A fixed key gives a fixed permutation (same on every CPU): its first entries.
  std::vector<int64_t> p4;
  ScatterPermutation(1, 0, 0, 0, 8, &p4);
  std::vector<int64_t> sorted = p4;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7}));
}

TEST(Names, RoundTrip) {
  for (auto r : {OperandRounding::kNone, OperandRounding::kTf32Rna, OperandRounding::kTf32Rne,
                 OperandRounding::kTf32Rz, OperandRounding::kBf16Rne, OperandRounding::kFp16Rne}) {
    EXPECT_EQ(*ParseOperandRounding(OperandRoundingName(r)), r);
  }
  EXPECT_FALSE(ParseOperandRounding("tf32").ok());
  EXPECT_FALSE(ParseStorageFormat("fp64").ok());
}

}  // namespace
}  // namespace xw
