// TensorCorePanelBlocks (accel_gemm.h): the float panels' block FMAs for
// the presets' block sizes (4, 8, 16) as compile-time constants, so that a
// block's products, maxima and sums live in registers: per block and lane
// the exact products (fp32: at most 24 significant bits, F32PanelApplies),
// the largest magnitude of the products and c, every term scaled onto the
// block's grid and truncated to int32, their sum, rounded toward zero to
// fp32 and scaled back. Each step is exact and the same on every target
// (see PanelF32Rows in accel_tiles.cc, which this file specialises), so the
// lane width, the rows that advance together and whether products are kept
// or formed again cannot change a bit.
#include <algorithm>
#include <cstdint>

#include "src/accel/accel_gemm.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/accel/tc_block_tiles.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "src/accel/tc_lanes-inl.h"

HWY_BEFORE_NAMESPACE();
namespace xw {
namespace accel {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
namespace {

using DF = hn::CappedTag<float, kPanel>;

#undef XW_TC_AVX3
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL || HWY_TARGET == HWY_AVX3_ZEN4
#define XW_TC_AVX3 1
#else
#define XW_TC_AVX3 0
#endif

// Vector registers of the target (x86 below AVX-512: 16; else 32).
#if HWY_ARCH_X86 && !XW_TC_AVX3
constexpr int kRegisters = 16;
#else
constexpr int kRegisters = 32;
#endif

using tc_lanes::ConvertRz;
using tc_lanes::MaxAbs;
using tc_lanes::TruncToInt;

// Rows [0, kRows) of the panel through `blocks` whole blocks of kBlock terms
// from a and b (a[r * lda + t], b[t * ldb + j]); acc[r * kPanel + j] holds
// the fp32 accumulators. kKeep: the products stay in registers between the
// block's maximum and its sum; else they are formed again (one more
// multiply per term, where keeping them would spill).
template <int kVectors, int kRows, int kBlock, bool kKeep>
HWY_NOINLINE void BlockRows(const float* a, int64_t lda, const float* b, int64_t ldb,
                            int64_t blocks, int align, float* acc) {
  const DF d;
  const hn::RebindToSigned<DF> di;
  const hn::RebindToUnsigned<DF> du;
  using V = hn::Vec<DF>;
  using VI = hn::Vec<decltype(di)>;
  constexpr int kChains = kVectors * kRows;
  const int n = static_cast<int>(hn::Lanes(d));
  const auto exp_mask = hn::Set(du, 0x7f800000u);
  // down = 2^(23 + align - E) and up = 2^(E - 23 - align) from E's field;
  // the maximum starts at 2^(align - 103), at most the smallest nonzero
  // product (accel_tiles.cc, PanelF32Rows).
  const auto down_base = hn::Set(du, static_cast<uint32_t>(277 + align) << 23);
  const auto up_sub = hn::Set(du, static_cast<uint32_t>(23 + align) << 23);
  const V floor = hn::BitCast(d, hn::Set(du, static_cast<uint32_t>(24 + align) << 23));
  // Round toward zero for the conversions (x86 below AVX-512), set before
  // acc is loaded and restored after it is stored: every other float
  // operation here is exact, so the mode changes no other value.
  const tc_lanes::RoundTowardZeroMode rz;
  V c[kChains];
  for (int r = 0; r < kRows; ++r) {
    for (int v = 0; v < kVectors; ++v) c[r * kVectors + v] = hn::LoadU(d, acc + r * kPanel + v * n);
  }
  for (int64_t blk = 0; blk < blocks; ++blk) {
    const float* ab = a + blk * kBlock;
    const float* bb = b + blk * kBlock * ldb;
    V mp[kChains];
    V prod[kKeep ? kBlock * kChains : 1];
    for (int q = 0; q < kChains; ++q) mp[q] = floor;
#pragma GCC unroll 16
    for (int t = 0; t < kBlock; ++t) {
      for (int v = 0; v < kVectors; ++v) {
        const V bv = hn::LoadU(d, bb + t * ldb + v * n);
        for (int r = 0; r < kRows; ++r) {
          const int q = r * kVectors + v;
          const V p = hn::Mul(bv, hn::Set(d, ab[r * lda + t]));
          if constexpr (kKeep) prod[t * kChains + q] = p;
          mp[q] = MaxAbs(mp[q], p);
        }
      }
    }
    VI s[kChains];
    V down[kChains];
    for (int q = 0; q < kChains; ++q) {
      const auto field = hn::And(hn::BitCast(du, MaxAbs(mp[q], c[q])), exp_mask);
      down[q] = hn::BitCast(d, hn::Sub(down_base, field));
      mp[q] = hn::BitCast(d, hn::Sub(field, up_sub));  // up, in mp's register
      s[q] = TruncToInt(di, hn::Mul(c[q], down[q]));
    }
#pragma GCC unroll 16
    for (int t = 0; t < kBlock; ++t) {
      for (int v = 0; v < kVectors; ++v) {
        V bv;
        if constexpr (!kKeep) bv = hn::LoadU(d, bb + t * ldb + v * n);
        for (int r = 0; r < kRows; ++r) {
          const int q = r * kVectors + v;
          V p;
          if constexpr (kKeep) {
            p = prod[t * kChains + q];
          } else {
            p = hn::Mul(bv, hn::Set(d, ab[r * lda + t]));
          }
          s[q] = hn::Add(s[q], TruncToInt(di, hn::Mul(p, down[q])));
        }
      }
    }
    for (int q = 0; q < kChains; ++q) c[q] = hn::Mul(ConvertRz(rz, d, s[q]), mp[q]);
  }
  for (int r = 0; r < kRows; ++r) {
    for (int v = 0; v < kVectors; ++v) hn::StoreU(c[r * kVectors + v], d, acc + r * kPanel + v * n);
  }
}

// Rows [0, kRows) through kk terms: the whole blocks in place, then the
// last, shorter block as a whole block padded with zero terms (a zero
// product changes neither the block's maximum, which starts above zero,
// nor its sum).
template <int kVectors, int kRows, int kBlock, bool kKeep>
void Rows(const float* a, int64_t lda, const float* b, int64_t ldb, int64_t kk, int align,
          float* acc) {
  const int64_t whole = kk / kBlock;
  if (whole > 0) BlockRows<kVectors, kRows, kBlock, kKeep>(a, lda, b, ldb, whole, align, acc);
  const int64_t rest = kk - whole * kBlock;
  if (rest == 0) return;
  HWY_ALIGN float at[kRows * kBlock] = {};
  HWY_ALIGN float bt[kBlock * kPanel] = {};
  for (int r = 0; r < kRows; ++r) {
    for (int64_t t = 0; t < rest; ++t) at[r * kBlock + t] = a[r * lda + whole * kBlock + t];
  }
  const int64_t width = kVectors * static_cast<int64_t>(hn::Lanes(DF()));  // lanes in use
  for (int64_t t = 0; t < rest; ++t) {
    std::copy(b + (whole * kBlock + t) * ldb, b + (whole * kBlock + t) * ldb + width,
              bt + t * kPanel);
  }
  BlockRows<kVectors, kRows, kBlock, kKeep>(at, kBlock, bt, kPanel, 1, align, acc);
}

// Rows in groups of up to four chains; products kept where a block's fit
// in the registers beside the accumulators, maxima and sums.
template <int kVectors, int kBlock>
void Panel(const float* a, int64_t lda, const float* b, int64_t ldb, int64_t rows, int64_t kk,
           int align, float* acc) {
  if constexpr (kRegisters == 16 && kVectors == 2) {
    // 16 registers: the panel's two halves one after the other (both
    // halves' chains at once would spill), each with three rows' chains,
    // the products formed again; the last rows in a pair or alone.
    const int64_t half = static_cast<int64_t>(hn::Lanes(DF()));
    for (int v = 0; v < 2; ++v) {
      int64_t r = 0;
      for (; r + 3 <= rows; r += 3) {
        Rows<1, 3, kBlock, false>(a + r * lda, lda, b + v * half, ldb, kk, align,
                                  acc + r * kPanel + v * half);
      }
      if (r + 2 <= rows) {
        Rows<1, 2, kBlock, (kBlock <= 4)>(a + r * lda, lda, b + v * half, ldb, kk, align,
                                          acc + r * kPanel + v * half);
        r += 2;
      }
      if (r < rows) {
        Rows<1, 1, kBlock, (kBlock <= 8)>(a + r * lda, lda, b + v * half, ldb, kk, align,
                                          acc + r * kPanel + v * half);
      }
    }
    return;
  }
  constexpr int kGroup = kVectors >= 4 ? 1 : 4 / kVectors;
  constexpr bool kKeep = kBlock * kVectors * kGroup + 2 * kVectors * kGroup + 4 <= kRegisters;
  constexpr bool kKeepOne = kBlock * kVectors + 2 * kVectors + 4 <= kRegisters;
  int64_t r = 0;
  for (; r + kGroup <= rows; r += kGroup) {
    Rows<kVectors, kGroup, kBlock, kKeep>(a + r * lda, lda, b, ldb, kk, align, acc + r * kPanel);
  }
  for (; r < rows; ++r) {
    Rows<kVectors, 1, kBlock, kKeepOne>(a + r * lda, lda, b, ldb, kk, align, acc + r * kPanel);
  }
}

template <int kVectors>
bool PanelFor(const float* a, int64_t lda, const float* b, int64_t ldb, int64_t rows,
              int64_t kk, const TensorCoreSpec& tc, float* acc) {
  switch (tc.block) {
    case 4: Panel<kVectors, 4>(a, lda, b, ldb, rows, kk, tc.align_bits, acc); return true;
    case 8: Panel<kVectors, 8>(a, lda, b, ldb, rows, kk, tc.align_bits, acc); return true;
    case 16: Panel<kVectors, 16>(a, lda, b, ldb, rows, kk, tc.align_bits, acc); return true;
    default: return false;
  }
}

}  // namespace

bool TensorCorePanelBlocksT(const float* a, int64_t lda, const float* b, int64_t ldb,
                            int64_t rows, int64_t kk, const TensorCoreSpec& tc, float* acc) {
  switch (kPanel / hn::Lanes(DF())) {
    case 1: return PanelFor<1>(a, lda, b, ldb, rows, kk, tc, acc);
    case 2: return PanelFor<2>(a, lda, b, ldb, rows, kk, tc, acc);
    case 4: return PanelFor<4>(a, lda, b, ldb, rows, kk, tc, acc);
    default: return false;  // narrower vectors: the generic float panel
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace accel
}  // namespace xw
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace xw {
namespace accel {

HWY_EXPORT(TensorCorePanelBlocksT);

bool TensorCorePanelBlocks(const float* a, int64_t lda, const float* b, int64_t ldb,
                           int64_t rows, int64_t kk, const TensorCoreSpec& tc, float* acc) {
  return HWY_DYNAMIC_DISPATCH(TensorCorePanelBlocksT)(a, lda, b, ldb, rows, kk, tc, acc);
}

}  // namespace accel
}  // namespace xw
#endif  // HWY_ONCE
