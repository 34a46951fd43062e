// The vectorized tensor-core GEMM (src/accel/accel_gemm.h) against its
// scalar definition, AccelDot per output, bit for bit on every SIMD target:
// random operands over a wide exponent range (cancellation, alignment
// losses), every block size and alignment, split-K with each partial
// format, widths that leave a narrow last panel, and the lanes the vector
// steps hand back to the scalar code (Inf, NaN, fp32-subnormal and
// overflowing results).
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <limits>
#include <vector>

#include "conv_test_util.h"
#include "src/accel/accel_gemm.h"
#include "src/accel/round_lanes.h"
#include "xwires/core/accel_numerics.h"
#include "xwires/core/rng.h"

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>  // _mm_getcsr, _mm_setcsr
#endif

namespace xw {
namespace {

// Values m * 2^e with m uniform in [-1, 1) and e in [-lo, hi], rounded.
std::vector<float> Operands(int64_t size, uint64_t seed, int spread, OperandRounding r) {
  std::vector<float> v(static_cast<size_t>(size));
  Philox rng(seed, StreamId("accel-panel-test"));
  for (int64_t i = 0; i < size; ++i) {
    // With spread 20, a third are zeros (whole zero blocks leave c alone).
    const uint32_t u = rng.U32(2 * i);
    const float m =
        spread == 20 && u % 3 == 0 ? 0.0f : static_cast<float>(u % 2001) / 1000.0f - 1.0f;
    const int e = static_cast<int>(rng.U32(2 * i + 1) % (2 * spread + 1)) - spread;
    v[i] = RoundOperand(std::ldexp(m, e), r);
  }
  return v;
}

std::vector<uint32_t> Bits(const std::vector<float>& v) {
  std::vector<uint32_t> b;
  for (float f : v) b.push_back(std::bit_cast<uint32_t>(f));
  return b;
}

// C by the scalar definition: AccelDot of row i and column j.
std::vector<float> Scalar(const std::vector<float>& a, const std::vector<float>& b, int64_t m,
                          int64_t n, int64_t k, const AccelSpec& s, const TensorCoreSpec& tc) {
  std::vector<float> c(static_cast<size_t>(m * n)), col(static_cast<size_t>(k));
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t t = 0; t < k; ++t) col[t] = b[t * n + j];
    for (int64_t i = 0; i < m; ++i) {
      c[i * n + j] = AccelDot(a.data() + i * k, col.data(), k, s, tc, ReduceSpec{});
    }
  }
  return c;
}

// parallel = false: every panel on this thread (under its MXCSR).
std::vector<float> Fast(const std::vector<float>& a, const std::vector<float>& b, int64_t m,
                        int64_t n, int64_t k, const AccelSpec& s, const TensorCoreSpec& tc,
                        bool parallel = true) {
  std::vector<float> c(static_cast<size_t>(m * n), -1.0f);
  accel::AccelGemm(a.data(), k, b.data(), n, c.data(), n, m, n, k, s, tc, ReduceSpec{},
                   parallel);
  return c;
}

struct Shape3 {
  int64_t m, n, k;
};

TEST(AccelPanel, SameBitsAsScalarDefinitionOnEveryTarget) {
  const Shape3 shapes[] = {{3, 16, 37}, {9, 21, 64}, {1, 5, 300}, {17, 40, 9}};
  const TensorCoreSpec tcs[] = {{4, 1}, {8, 1}, {8, 2}, {16, 2}, {32, 0}, {4, 8}};
  for (const Shape3& sh : shapes) {
    for (const TensorCoreSpec& tc : tcs) {
      for (int spread : {2, 20, 40}) {
        SCOPED_TRACE(testing::Message() << sh.m << "x" << sh.n << "x" << sh.k << " block "
                                        << tc.block << " align " << tc.align_bits << " spread "
                                        << spread);
        // bf16 and TF32 operands take the float panels where the block allows.
        const OperandRounding r = spread == 2    ? OperandRounding::kBf16Rne
                                  : spread == 20 ? OperandRounding::kTf32Rz
                                                 : OperandRounding::kNone;
        const auto a = Operands(sh.m * sh.k, 1 + sh.k, spread, r);
        const auto b = Operands(sh.k * sh.n, 2 + sh.n, spread, r);
        AccelSpec s;
        s.accumulation = Accumulation::kTensorCore;
        const auto want = Bits(Scalar(a, b, sh.m, sh.n, sh.k, s, tc));
        convtest::ForEachTarget([&](const std::string&) {
          EXPECT_EQ(Bits(Fast(a, b, sh.m, sh.n, sh.k, s, tc)), want);
        });
      }
    }
  }
}

TEST(AccelPanel, SplitKPartialFormats) {
  const auto a = Operands(5 * 70, 3, 6, OperandRounding::kTf32Rna);
  const auto b = Operands(70 * 19, 4, 6, OperandRounding::kTf32Rna);
  for (StorageFormat f : {StorageFormat::kFp32, StorageFormat::kBf16, StorageFormat::kFp16}) {
    for (int parts : {2, 3, 70, 200}) {
      AccelSpec s;
      s.accumulation = Accumulation::kTensorCore;
      s.split_k = parts;
      s.partial = f;
      const TensorCoreSpec tc{8, 1};
      EXPECT_EQ(Bits(Fast(a, b, 5, 19, 70, s, tc)), Bits(Scalar(a, b, 5, 19, 70, s, tc)))
          << StorageFormatName(f) << " parts " << parts;
      s.accumulation = Accumulation::kOrdered;
      EXPECT_EQ(Bits(Fast(a, b, 5, 19, 70, s, tc)), Bits(Scalar(a, b, 5, 19, 70, s, tc)))
          << "ordered " << StorageFormatName(f) << " parts " << parts;
    }
  }
}

TEST(AccelPanel, SpecialValuesFallBackToTheScalarDefinition) {
  const int64_t m = 4, n = 18, k = 24;
  auto a = Operands(m * k, 5, 3, OperandRounding::kNone);
  auto b = Operands(k * n, 6, 3, OperandRounding::kNone);
  const float inf = std::numeric_limits<float>::infinity();
  a[0 * k + 3] = inf;                                   // row 0: Inf products
  a[1 * k + 5] = std::numeric_limits<float>::quiet_NaN();  // row 1: NaN
  for (int64_t t = 0; t < k; ++t) {                     // row 2: tiny, fp32-subnormal sums
    a[2 * k + t] = std::ldexp(a[2 * k + t], -70);
    b[t * n + 17] = std::ldexp(b[t * n + 17], -70);
  }
  for (int64_t t = 0; t < k; ++t) a[3 * k + t] = FLT_MAX;  // row 3: past FLT_MAX
  b[0 * n + 1] = inf;
  b[2 * n + 1] = -inf;  // Inf - Inf in column 1
  AccelSpec s;
  s.accumulation = Accumulation::kTensorCore;
  const TensorCoreSpec tc{8, 1};
  const auto want = Bits(Scalar(a, b, m, n, k, s, tc));
  convtest::ForEachTarget(
      [&](const std::string&) { EXPECT_EQ(Bits(Fast(a, b, m, n, k, s, tc)), want); });
  // The checks above must reach the special cases: an Inf, a NaN, an fp32
  // subnormal and FLT_MAX are among the outputs.
  const auto c = Scalar(a, b, m, n, k, s, tc);
  bool has_inf = false, has_nan = false, has_sub = false, has_max = false;
  for (float v : c) {
    has_inf |= std::isinf(v);
    has_nan |= std::isnan(v);
    has_sub |= v != 0 && std::fabs(v) < FLT_MIN;
    has_max |= std::fabs(v) == FLT_MAX;
  }
  EXPECT_TRUE(has_inf && has_nan && has_sub && has_max)
      << has_inf << has_nan << has_sub << has_max;
}

// Reduced operands whose products reach down to the float panels' floor,
// 2^(align - 103): tiny gradients times small weights, blocks of zeros
// (ReLU, padding) and cancellation that leaves the accumulator below the
// floor. They take the float panels (F32PanelApplies), and give the scalar
// definition's bits on every target; one product below the floor hands the
// GEMM to the double panels, with the same bits.
TEST(AccelPanel, ProductsDownToTheFloorTakeTheFloatPanels) {
  const int64_t m = 6, n = 35, k = 70;
  for (const TensorCoreSpec tc :
       {TensorCoreSpec{4, 1}, TensorCoreSpec{8, 2}, TensorCoreSpec{16, 2}}) {
    const int half = (tc.align_bits - 103) / 2;  // each operand's smallest exponent
    std::vector<float> a(static_cast<size_t>(m * k)), b(static_cast<size_t>(k * n));
    Philox rng(7 + tc.block, StreamId("accel-panel-floor"));
    auto value = [&](uint64_t i, int lowest) {
      const uint32_t u = rng.U32(i);
      if (u % 5 == 0) return 0.0f;
      const float mant = 1.0f + static_cast<float>(u % 1024) / 1024.0f;  // 11 bits
      const float v = std::ldexp(mant, lowest + static_cast<int>((u >> 10) % 14));
      return (u >> 20) % 2 ? -v : v;
    };
    for (int64_t i = 0; i < m * k; ++i) a[i] = value(2 * i, half);
    for (int64_t i = 0; i < k * n; ++i) b[i] = value(2 * i + 1, half + (tc.align_bits - 103) % 2);
    const int low_b = half + (tc.align_bits - 103) % 2;             // half + low_b = floor
    for (int64_t t = 16; t < 32; ++t) a[t] = 0;                     // whole zero blocks, row 0
    a[k + 1] = std::ldexp(1.0f, half);                              // a product at the floor
    b[1 * n + 2] = std::ldexp(1.0f, low_b);
    for (int64_t t = 0; t < k; ++t) a[2 * k + t] = 0;               // row 2, column 2: 1.5 - 1
    a[2 * k + 0] = std::ldexp(1.5f, half);                          // times the floor, half the
    a[2 * k + 1] = -std::ldexp(1.0f, half);                         // floor, then zero blocks
    b[0 * n + 2] = std::ldexp(1.0f, low_b);
    for (int64_t t = 0; t < k; ++t) {  // row 3, column 3: 22-bit products in [floor, 4 floor)
      a[3 * k + t] = std::ldexp(1.0f + static_cast<float>(2 * t + 1) / 1024.0f, half);
      b[t * n + 3] = std::ldexp(1.0f + static_cast<float>(1023 - 2 * t) / 1024.0f, low_b);
    }
    const auto ra = accel::F32PanelRange(a.data(), m, k, k);
    const auto rb = accel::F32PanelRange(b.data(), k, n, n);
    ASSERT_TRUE(accel::F32PanelApplies(tc, ra, rb, k)) << tc.block;
    AccelSpec s;
    s.accumulation = Accumulation::kTensorCore;
    const auto want = Bits(Scalar(a, b, m, n, k, s, tc));
    convtest::ForEachTarget(
        [&](const std::string&) { EXPECT_EQ(Bits(Fast(a, b, m, n, k, s, tc)), want); });
    // Cancellation reached an accumulator below the floor somewhere.
    const auto c = Scalar(a, b, m, n, k, s, tc);
    EXPECT_TRUE(std::any_of(c.begin(), c.end(), [&](float v) {
      return v != 0 && std::fabs(v) < std::ldexp(1.0f, tc.align_bits - 103);
    })) << tc.block;
    // Half the floor: the GEMM leaves the float panels, same bits.
    a[k + 1] = std::ldexp(1.0f, half - 1);
    ASSERT_FALSE(accel::F32PanelApplies(tc, accel::F32PanelRange(a.data(), m, k, k), rb, k));
    const auto want2 = Bits(Scalar(a, b, m, n, k, s, tc));
    convtest::ForEachTarget(
        [&](const std::string&) { EXPECT_EQ(Bits(Fast(a, b, m, n, k, s, tc)), want2); });
  }
}

// The float panels round each block's sum toward zero; x86 below AVX-512
// does it by switching MXCSR to round toward zero around each kernel.
// Whatever rounding mode the caller has set (toward zero, up, down), the
// GEMM gives the bits it gives under round to nearest, on every target and
// through both float panels (the presets' blocks and a block of 32), and
// the caller's MXCSR is as it was afterwards. The GEMM runs on the calling
// thread (MXCSR is per thread).
TEST(AccelPanel, SameBitsUnderTheCallersRoundingMode) {
#if defined(__x86_64__) || defined(__i386__)
  const int64_t m = 5, n = 37, k = 75;
  const auto a = Operands(m * k, 8, 6, OperandRounding::kTf32Rna);
  const auto b = Operands(k * n, 9, 6, OperandRounding::kTf32Rna);
  ASSERT_TRUE(accel::F32PanelApplies(TensorCoreSpec{32, 0}, accel::F32PanelRange(a.data(), m, k, k),
                                     accel::F32PanelRange(b.data(), k, n, n), k));
  AccelSpec s;
  s.accumulation = Accumulation::kTensorCore;
  const unsigned saved = _mm_getcsr();
  ASSERT_EQ(saved & 0x6000u, 0u);  // the test runs under round to nearest
  for (const TensorCoreSpec tc :
       {TensorCoreSpec{4, 1}, TensorCoreSpec{8, 2}, TensorCoreSpec{16, 2}, TensorCoreSpec{32, 0}}) {
    const auto want = Bits(Scalar(a, b, m, n, k, s, tc));
    for (unsigned rc : {0x6000u, 0x4000u, 0x2000u}) {  // toward zero, up, down
      convtest::ForEachTarget([&](const std::string&) {
        _mm_setcsr((saved & ~0x6000u) | rc);
        const auto got = Bits(Fast(a, b, m, n, k, s, tc, /*parallel=*/false));
        const unsigned after = _mm_getcsr();
        _mm_setcsr(saved);
        EXPECT_EQ(got, want) << "block " << tc.block << " MXCSR rounding 0x" << std::hex << rc;
        // The control bits (the exception flags, bits 0-5, may have been raised).
        EXPECT_EQ(after & ~0x3fu, ((saved & ~0x6000u) | rc) & ~0x3fu)
            << "MXCSR not restored, block " << tc.block;
      });
    }
  }
  EXPECT_EQ(_mm_getcsr() & ~0x3fu, saved & ~0x3fu);
#else
  GTEST_SKIP() << "MXCSR exists on x86 only";
#endif
}

// F32PanelRange: smallest nonzero and largest magnitude over a strided
// block with ragged rows, and reduced only for zeros and normal floats of at
// most 12 significant bits; one subnormal, Inf, NaN or 13-bit value anywhere
// clears it, on every target.
TEST(AccelPanel, OperandRangeOfAStridedBlock) {
  const int64_t rows = 3, cols = 21, ld = 24;
  std::vector<float> x(static_cast<size_t>(rows * ld), 0.0f);
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      x[i * ld + j] = j % 3 == 0 ? 0.0f : std::ldexp(-1.5f + 0.25f * static_cast<float>(i), j - 10);
    }
  }
  x[2 * ld + 20] = std::ldexp(1.0f, -100);  // the smallest, in a row's last lane
  x[1 * ld + 7] = -std::ldexp(1.0f, 90);     // the largest
  x[0 * ld + 22] = std::numeric_limits<float>::quiet_NaN();  // outside the block
  const float special[] = {std::ldexp(1.0f, -130), std::numeric_limits<float>::infinity(),
                           std::numeric_limits<float>::quiet_NaN(), 1.0f + 0x1p-12f};
  convtest::ForEachTarget([&](const std::string&) {
    const auto r = accel::F32PanelRange(x.data(), rows, cols, ld);
    EXPECT_TRUE(r.reduced);
    EXPECT_EQ(r.min_nonzero, std::ldexp(1.0f, -100));
    EXPECT_EQ(r.max_abs, std::ldexp(1.0f, 90));
    for (float v : special) {
      std::vector<float> y = x;
      y[1 * ld + 19] = v;
      EXPECT_FALSE(accel::F32PanelRange(y.data(), rows, cols, ld).reduced) << v;
    }
    const std::vector<float> zeros(40, 0.0f);
    const auto z = accel::F32PanelRange(zeros.data(), 2, 19, 20);
    EXPECT_TRUE(z.reduced);
    EXPECT_EQ(z.min_nonzero, 0.0f);
  });
}

// RoundLanes against RoundOperand on bit patterns spread over all of fp32
// (every 4099th pattern: each exponent, both signs, NaN payloads) plus the
// ties, overflow and subnormal edges of each format, on every target, with
// a length that leaves a partial vector.
TEST(AccelRoundLanes, SameBitsAsRoundOperandOnEveryTarget) {
  std::vector<float> x;
  for (uint64_t u = 0; u <= 0xffffffffull; u += 4099) {
    x.push_back(std::bit_cast<float>(static_cast<uint32_t>(u)));
  }
  for (uint32_t u : {0x44801000u, 0x3f801800u, 0x477fefffu, 0x477ff000u, 0x477fe000u, 0x33000000u,
                     0x33000001u, 0x33c00000u, 0x387fc000u, 0x38800000u, 0x7f7fffffu, 0x7f800000u,
                     0x7f800001u, 0x7f801000u, 0x7fc00000u, 0x00000001u, 0x00400000u, 0x007fffffu,
                     0x3f808000u, 0x3f818000u, 0x3f80ffffu, 0x80000000u, 0xff7fffffu}) {
    x.push_back(std::bit_cast<float>(u));
    x.push_back(std::bit_cast<float>(u ^ 0x80000000u));
  }
  x.push_back(1.0f);  // an odd count
  const OperandRounding modes[] = {OperandRounding::kTf32Rna, OperandRounding::kTf32Rne,
                                   OperandRounding::kTf32Rz, OperandRounding::kBf16Rne,
                                   OperandRounding::kFp16Rne};
  for (OperandRounding mode : modes) {
    for (bool flush : {false, true}) {
      std::vector<float> want(x.size());
      for (size_t i = 0; i < x.size(); ++i) want[i] = RoundOperand(x[i], mode, flush);
      convtest::ForEachTarget([&](const std::string&) {
        std::vector<float> got(x.size());
        accel::RoundLanes(x.data(), got.data(), static_cast<int64_t>(x.size()), mode, flush);
        const auto w = Bits(want), g = Bits(got);
        size_t diff = 0;
        while (diff < w.size() && w[diff] == g[diff]) ++diff;
        EXPECT_EQ(diff, w.size()) << OperandRoundingName(mode) << " flush " << flush << " at 0x"
                                  << std::hex << std::bit_cast<uint32_t>(x[diff]) << ": 0x"
                                  << g[diff] << " vs 0x" << w[diff];
      });
    }
  }
}

}  // namespace
}  // namespace xw
