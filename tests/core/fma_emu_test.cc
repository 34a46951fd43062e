// The dispatched kernels' fused multiply-add (MulAddExact, through
// kernels::FmaLanes) against libm's fmaf (std::fma), bit for bit, on every
// SIMD target the CPU runs: the FMA instruction on AVX2/AVX-512/NEON, the
// emulation in double with rounding to odd on SSE4, SSSE3 and the scalar
// target. The
// operands: random bits over the whole float range (NaN, inf, subnormals
// included), products that cancel c exactly or nearly, subnormal and
// overflowing results, every combination of special values, and triples
// built so that rounding a*b + c first to double and then to float gives a
// different float than the one rounding (the cases rounding to odd exists
// for; the test asserts the construction really produces them). The same
// triples check the library's scalar FmaF (src/fma_scalar.h) with its
// emulation forced and as the CPU chooses, and the shared scalar core it
// emulates with (kernels::FmaEmulated), which in a native build on FMA
// hardware FmaF never reaches.
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "src/fma_scalar.h"
#include "src/kernels/fma_emu_scalar.h"
#include "src/kernels/fma_lanes.h"
#include "xwires/core/rng.h"
#include "xwires/core/simd_target.h"

namespace xw {
namespace {

uint32_t Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}

float FromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}

// a * b + c rounded twice: to double, then to float (what the emulation
// would give without rounding to odd).
float TwiceRounded(float a, float b, float c) {
  const double s = static_cast<double>(a) * static_cast<double>(b) + static_cast<double>(c);
  return static_cast<float>(s);
}

struct Triples {
  std::vector<float> a, b, c;
  void Add(float x, float y, float z) {
    a.push_back(x);
    b.push_back(y);
    c.push_back(z);
  }
  size_t size() const { return a.size(); }
};

// libm's fmaf itself, called (not inlined as this build's FMA instruction).
float (*volatile libm_fmaf)(float, float, float) = ::fmaf;

// The NaN the emulation promises (fma_emu-inl.h): the first NaN operand,
// quieted; 0 (any NaN) when the NaN comes from inf * 0 or inf - inf.
uint32_t PromisedNaN(float a, float b, float c) {
  for (float x : {a, b, c}) {
    if (std::isnan(x)) return Bits(x) | 0x00400000u;
  }
  return 0;
}

// got against libm's want, bit for bit, failures reported as `what` on
// `where`. A NaN result must be NaN; which NaN, FMA instructions and libm
// choose by their own rules (on this Xeon, libm's fmaf(NaN, -NaN, 0) is
// -NaN where the AVX-512 instruction returns NaN), so payloads are checked
// against the emulation's own promise where it emulates.
void ExpectSame(const Triples& t, const std::vector<float>& want, const std::vector<float>& got,
                bool emulated, const std::string& what, const std::string& where) {
  int64_t wrong = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    bool same = Bits(got[i]) == Bits(want[i]);
    if (std::isnan(want[i])) {
      const uint32_t promised = PromisedNaN(t.a[i], t.b[i], t.c[i]);
      same = std::isnan(got[i]) && (!emulated || promised == 0 || Bits(got[i]) == promised);
    }
    if (!same && ++wrong <= 3) {
      ADD_FAILURE() << what << " on " << where << ": fma(" << std::hexfloat << t.a[i] << ", "
                    << t.b[i] << ", " << t.c[i] << ") = " << want[i] << " (0x" << std::hex
                    << Bits(want[i]) << "), got " << std::hexfloat << got[i] << " (0x" << std::hex
                    << Bits(got[i]) << ")";
    }
  }
  EXPECT_EQ(wrong, 0) << what << " on " << where << ", of " << t.size();
}

// Every target's FmaLanes, the scalar emulation and FmaF (emulation forced,
// then the CPU's choice) against libm's fmaf.
void ExpectExact(const Triples& t, const std::string& what) {
  const int64_t n = static_cast<int64_t>(t.size());
  std::vector<float> want(t.size()), got(t.size());
  for (size_t i = 0; i < t.size(); ++i) want[i] = libm_fmaf(t.a[i], t.b[i], t.c[i]);
  const std::vector<std::string> targets = KernelTargets();
#if defined(__x86_64__)
  ASSERT_GE(targets.size(), 3u) << "x86-64 compiles at least AVX2, SSE4 and a scalar target";
#endif
  for (const std::string& target : targets) {
    ASSERT_TRUE(SetKernelTarget(target).ok()) << target;
    const bool emulated = target == "SSE4" || target == "SSSE3" || target == "SSE2" ||
                          target == "EMU128" || target == "SCALAR";
    kernels::FmaLanes(t.a.data(), t.b.data(), t.c.data(), n, got.data());
    ExpectSame(t, want, got, emulated, what, target);
  }
  ASSERT_TRUE(SetKernelTarget("").ok());

  for (size_t i = 0; i < t.size(); ++i) got[i] = kernels::FmaEmulated(t.a[i], t.b[i], t.c[i]);
  ExpectSame(t, want, got, true, what, "kernels::FmaEmulated");
  ForceFmaFEmulationForTest(true);
#if XW_FMAF_RUNTIME
  ASSERT_FALSE(FmaFUsesInstruction());
#endif
  for (size_t i = 0; i < t.size(); ++i) got[i] = FmaF(t.a[i], t.b[i], t.c[i]);
  ExpectSame(t, want, got, XW_FMAF_RUNTIME != 0, what, "FmaF, emulation forced");
  ForceFmaFEmulationForTest(false);
  const bool instruction = FmaFUsesInstruction();
  for (size_t i = 0; i < t.size(); ++i) got[i] = FmaF(t.a[i], t.b[i], t.c[i]);
  ExpectSame(t, want, got, !instruction, what,
             std::string("FmaF, ") + (instruction ? "FMA instruction" : "emulated"));
}

// A float of random sign and significand with exponent field e (1..254 for
// normal floats, 0 for subnormals).
float RandomWithExponent(const Philox& rng, uint64_t i, uint32_t e) {
  return FromBits((rng.U32(i) & 0x807FFFFFu) | (e << 23));
}

TEST(FmaEmulation, RandomBitsOverTheWholeRange) {
  const Philox rng(44, StreamId("fma_emu/bits"));
  Triples t;
  for (uint64_t i = 0; i < 60000; ++i) {
    t.Add(FromBits(rng.U32(3 * i)), FromBits(rng.U32(3 * i + 1)), FromBits(rng.U32(3 * i + 2)));
  }
  ExpectExact(t, "random bits");
}

TEST(FmaEmulation, ModerateExponentsAndCancellation) {
  const Philox rng(44, StreamId("fma_emu/cancel"));
  Triples t;
  for (uint64_t i = 0; i < 40000; ++i) {
    // Exponents near 1 so products and sums stay normal: the common case.
    const float a = RandomWithExponent(rng, 4 * i, 100 + rng.U32(4 * i + 3) % 55);
    const float b = RandomWithExponent(rng, 4 * i + 1, 100 + rng.U32(4 * i + 3) / 55 % 55);
    const float c = RandomWithExponent(rng, 4 * i + 2, 80 + rng.U32(4 * i + 3) / 3025 % 95);
    t.Add(a, b, c);
    // c = -RN(a*b) (+- a few float ulps): the product cancels and the
    // result is the product's rounding error, exact in float or not.
    const float p = a * b;
    const int32_t ulps = static_cast<int32_t>(rng.U32(4 * i + 3) >> 29) - 4;
    t.Add(a, b, -FromBits(Bits(p) + ulps));
    t.Add(a, b, -p);
    t.Add(-a, b, p);
  }
  ExpectExact(t, "cancellation");
}

TEST(FmaEmulation, SubnormalAndOverflowingResults) {
  const Philox rng(44, StreamId("fma_emu/range"));
  Triples t;
  for (uint64_t i = 0; i < 20000; ++i) {
    // Products from 2^-170 to 2^-110 with c subnormal or tiny: subnormal
    // results and underflow to (signed) zero.
    const uint32_t ea = 40 + rng.U32(5 * i + 4) % 30, eb = 40 + rng.U32(5 * i + 4) / 30 % 30;
    const float a = RandomWithExponent(rng, 5 * i, ea), b = RandomWithExponent(rng, 5 * i + 1, eb);
    t.Add(a, b, RandomWithExponent(rng, 5 * i + 2, 0));
    t.Add(a, b, RandomWithExponent(rng, 5 * i + 2, 1 + rng.U32(5 * i + 3) % 4));
    t.Add(a, b, -(a * b));
    // Products near FLT_MAX: overflow to inf, or back into range by c.
    const float x = RandomWithExponent(rng, 5 * i + 3, 190 + rng.U32(5 * i + 4) / 900 % 20);
    const float y = RandomWithExponent(rng, 5 * i + 4, 190 + rng.U32(5 * i) % 20);
    t.Add(x, y, RandomWithExponent(rng, 5 * i + 2, 250 + rng.U32(5 * i + 1) % 5));
    t.Add(x, y, -(x * y));
  }
  ExpectExact(t, "subnormal and overflowing results");
}

TEST(FmaEmulation, SpecialValuesInEveryPosition) {
  const float inf = INFINITY, nan = std::nanf("");
  const float specials[] = {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, 3.0f, -2.0f, inf, -inf, nan,
                            -nan, FLT_MAX, -FLT_MAX, FLT_MIN, -FLT_MIN, FLT_TRUE_MIN,
                            -FLT_TRUE_MIN, FromBits(0x007FFFFFu), FromBits(0x1F800001u),
                            FromBits(0x5F7FFFFFu), FLT_EPSILON, 1.0f + FLT_EPSILON,
                            FromBits(0x7FC12345u), FromBits(0xFFC00001u),
                            FromBits(0x7F812345u) /* signaling */};
  Triples t;
  for (float a : specials) {
    for (float b : specials) {
      for (float c : specials) t.Add(a, b, c);
    }
  }
  ExpectExact(t, "special values");
}

// a = (2^23 + k) 2^-23, b = (2^23 - k) 2^-23 (k < 256) make a * b =
// 1 - k^2 2^-46: scaled to half an ulp of c, the exact sum lies below a
// float midpoint by less than half a double ulp (k^2 2^-70 against 2^-53 of
// c's binade), so rounding to double lands on the midpoint and the tie then
// goes to c's even neighbour, while the one rounding gives c. c's last bit
// is odd; its exponent spans the normal range, subnormal c in [2^-127,
// 2^-126) (the fixed 2^-149 grid: a subnormal result) and FLT_MAX (whose
// midpoint with 2^128 is the overflow threshold: inf when rounded twice).
TEST(FmaEmulation, DoubleRoundingHardCases) {
  const Philox rng(44, StreamId("fma_emu/hard"));
  Triples t, alone;
  int64_t twice_differs = 0;
  for (uint64_t i = 0; i < 20000; ++i) {
    const uint32_t k = 1 + rng.U32(3 * i) % 255;
    const int e = static_cast<int>(rng.U32(3 * i + 1) % 256);  // c's exponent field, 0..255
    uint32_t cbits = (rng.U32(3 * i + 2) & 0x007FFFFFu) | 1u;  // odd significand
    if (e == 255) {
      cbits = 0x7F7FFFFFu;  // FLT_MAX
    } else if (e == 0) {
      cbits |= 0x00400000u;  // subnormal in [2^-127, 2^-126)
    } else {
      cbits |= static_cast<uint32_t>(e) << 23;
    }
    const bool negative = (rng.U32(3 * i) >> 31) != 0;
    const float c = negative ? -FromBits(cbits) : FromBits(cbits);
    // half an ulp of c: 2^(E - 24) with E = max(e, 1) - 127
    const int half_ulp_exp = std::max(e == 255 ? 254 : e, 1) - 127 - 24;
    // split the scale between a and b so neither leaves float's range
    const int ea = half_ulp_exp / 2, eb = half_ulp_exp - ea;
    float a = std::ldexp(static_cast<float>((1u << 23) + k), ea - 23);
    float b = std::ldexp(static_cast<float>((1u << 23) - k), eb - 23);
    if (negative) a = -a;  // the product pushes c away from zero
    if ((rng.U32(3 * i + 1) >> 31) != 0) std::swap(a, b);
    t.Add(a, b, c);
    if (TwiceRounded(a, b, c) != libm_fmaf(a, b, c)) ++twice_differs;
    // Then each one alone among ordinary sums (one per 16-lane vector at
    // most), so a vector's other lanes cannot send it down the exact path:
    // products of full 24-bit significands, whose double sums with c are
    // no float midpoints (a sum of a few significant bits, 0.375 + 1/3 say,
    // often is one, exactly).
    alone.Add(a, b, c);
    for (int j = 0; j < 15; ++j) alone.Add(1.1f + 0.01f * static_cast<float>(j), 0.7f, 0.3f);
  }
  // Every one of them is a double-rounding case.
  EXPECT_EQ(twice_differs, 20000);
  ExpectExact(t, "double-rounding hard cases");
  ExpectExact(alone, "double-rounding hard cases among ordinary sums");
}

}  // namespace
}  // namespace xw
