// Matmul with KernelNumerics::operands (the operand-rounding-only route of
// the accelerator emulation): the owned GEMM rounds while it packs (B's
// panels, A's copy), Eigen rounds copies. Either must give the bits of the
// same Matmul on operands rounded beforehand, for every rounding mode,
// transpose, accumulate flag, ragged panel width, SIMD target and thread
// count. The packing kernels themselves (RoundRows, TransposeToPanelRounded)
// must write RoundOperand of every value, special values included.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "src/accel/round_lanes.h"
#include "src/kernels/conv_internal.h"
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

// A [rows, ld] matrix of Wide values where every 7th row also holds NaNs,
// Inf and the values next to overflow and to the formats' ties, so that
// the packers see vectors with and without special lanes.
std::vector<float> WithSpecials(int64_t rows, int64_t ld) {
  std::vector<float> v = Wide(rows * ld, 3);
  const uint32_t specials[] = {0x7f800000u, 0x7f800001u, 0x7fc00000u, 0x7fffffffu, 0x7f7fffffu,
                               0x7f7ff000u, 0x477fefffu, 0x477ff000u, 0x3f801000u, 0x3f808000u,
                               0x00000001u, 0x007fffffu, 0x33000000u, 0x387fc000u};
  for (int64_t r = 0; r < rows; r += 7) {
    for (int64_t c = 0; c < ld; ++c) {
      const uint32_t u = specials[(r + c) % std::size(specials)];
      v[r * ld + c] = std::bit_cast<float>(c % 2 ? u : u ^ 0x80000000u);
    }
  }
  // Large finite values alone in whole rows (the short recipes' case).
  for (int64_t c = 0; c < ld; ++c) v[3 * ld + c] = std::bit_cast<float>(static_cast<uint32_t>(0x7f7fe000u + c * 0x55u));
  return v;
}

std::vector<uint32_t> BitsOf(const std::vector<float>& v) {
  std::vector<uint32_t> b(v.size());
  for (size_t i = 0; i < v.size(); ++i) b[i] = std::bit_cast<uint32_t>(v[i]);
  return b;
}

TEST(MatmulRounding, PackersRoundEveryValueAsRoundOperand) {
  const int64_t rows = 40, ld = 53;  // 32-float panels and ragged widths
  const std::vector<float> src = WithSpecials(rows, ld);
  for (const std::string& target : KernelTargets()) {
    ASSERT_TRUE(SetKernelTarget(target).ok());
    for (OperandRounding mode : {OperandRounding::kTf32Rna, OperandRounding::kTf32Rne,
                                 OperandRounding::kTf32Rz, OperandRounding::kBf16Rne,
                                 OperandRounding::kFp16Rne}) {
      for (bool flush : {false, true}) {
        SCOPED_TRACE(target + " " + OperandRoundingName(mode) + " flush " +
                     std::to_string(flush));
        for (int64_t cols : {32, 16, 21, 53}) {
          // RoundRows: rows of `cols` floats, ld apart, into rows of 64.
          std::vector<float> got(rows * 64, -7.0f), want(rows * 64, -7.0f);
          for (int64_t r = 0; r < rows; ++r) {
            for (int64_t c = 0; c < cols; ++c) {
              want[r * 64 + c] = RoundOperand(src[r * ld + c], mode, flush);
            }
          }
          accel::RoundRows(src.data(), ld, rows, cols, got.data(), 64, mode, flush);
          EXPECT_EQ(BitsOf(got), BitsOf(want)) << "RoundRows, " << cols << " columns";
          // TransposeToPanelRounded: `cols` values of each of 32 rows, into
          // a panel of 32 columns.
          std::vector<float> panel(cols * 32), panel_want(cols * 32);
          for (int64_t q = 0; q < cols; ++q) {
            for (int64_t j = 0; j < 32; ++j) {
              panel_want[q * 32 + j] = RoundOperand(src[(j + 1) * ld + q], mode, flush);
            }
          }
          kernels::TransposeToPanelRounded(src.data() + ld, ld, cols, 32, panel.data(), mode,
                                           flush);
          EXPECT_EQ(BitsOf(panel), BitsOf(panel_want)) << "transpose, " << cols << " columns";
        }
      }
    }
  }
  ASSERT_TRUE(SetKernelTarget("").ok());
}

}  // namespace
}  // namespace xw
