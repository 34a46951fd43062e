// Matmul with KernelNumerics::operands (the operand-rounding-only route of
// the accelerator emulation): the owned GEMM rounds while it packs (B's
// panels, A's copy), Eigen rounds copies. Either must give the bits of the
// same Matmul on operands rounded beforehand, for every rounding mode,
// transpose, accumulate flag, ragged panel width, SIMD target and thread
// count.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "xwires/core/accel_numerics.h"
#include "xwires/core/matmul.h"
#include "xwires/core/parallel.h"
#include "xwires/core/rng.h"
#include "xwires/core/simd_target.h"

namespace xw {
namespace {

std::vector<float> Wide(int64_t n, uint64_t seed) {
  std::vector<float> v(static_cast<size_t>(n));
  Philox rng(seed, StreamId("matmul-rounding"));
  for (int64_t i = 0; i < n; ++i) {
    // Values over a wide exponent range with low bits set: every mode's
    // rounding changes most of them, some tie, a few are 0.
    const float u = static_cast<float>(rng.U32(2 * i) % 100000) / 7919.0f - 6.0f;
    v[i] = (i % 29 == 0) ? 0.0f : std::ldexp(u, static_cast<int>(rng.U32(2 * i + 1) % 24) - 12);
  }
  return v;
}

TEST(MatmulRounding, RoundsWhilePackingAsOnRoundedCopies) {
  const int64_t m = 7, n = 37, k = 45;  // n: two full panels and a ragged one
  const std::vector<float> a = Wide(m * k, 1), b = Wide(k * n, 2);
  for (const std::string& target : KernelTargets()) {
    ASSERT_TRUE(SetKernelTarget(target).ok());
    for (OperandRounding mode : {OperandRounding::kTf32Rna, OperandRounding::kTf32Rz,
                                 OperandRounding::kBf16Rne, OperandRounding::kFp16Rne}) {
      for (GemmKind gemm : {GemmKind::kOwned, GemmKind::kEigen}) {
        for (int mask = 0; mask < 8; ++mask) {
          const bool ta = mask & 1, tb = mask & 2, acc = mask & 4;
          SCOPED_TRACE(target + " " + OperandRoundingName(mode) + " " + GemmKindName(gemm) +
                       " mask " + std::to_string(mask));
          KernelNumerics plain;
          plain.gemm = gemm;
          plain.reduce = *ParseReduceOrder("pairwise");
          KernelNumerics rounding = plain;
          rounding.operands = mode;
          std::vector<float> ar(a.size()), br(b.size());
          RoundOperands(a.data(), ar.data(), m * k, mode);
          RoundOperands(b.data(), br.data(), k * n, mode);
          std::vector<float> want(m * n, 0.5f), got(m * n, 0.5f);
          Matmul(ar.data(), br.data(), want.data(), m, n, k, ta, tb, acc, plain);
          for (int threads : {1, 2}) {
            ThreadScope scope(threads);
            std::fill(got.begin(), got.end(), 0.5f);
            Matmul(a.data(), b.data(), got.data(), m, n, k, ta, tb, acc, rounding);
            ASSERT_EQ(0, std::memcmp(got.data(), want.data(), got.size() * sizeof(float)));
          }
          // The rounding is not a no-op on these operands.
          std::vector<float> raw(m * n, 0.5f);
          Matmul(a.data(), b.data(), raw.data(), m, n, k, ta, tb, acc, plain);
          EXPECT_NE(0, std::memcmp(raw.data(), want.data(), raw.size() * sizeof(float)));
        }
      }
    }
  }
  ASSERT_TRUE(SetKernelTarget("").ok());
}

}  // namespace
}  // namespace xw
