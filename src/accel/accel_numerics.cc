// Operand rounding, the tensor-core block FMA, split-K dot products and the
// scatter permutation (accel_numerics.h). Integer and double arithmetic
// only, so every CPU gives the same bits.
#include "xwires/core/accel_numerics.h"
#include "src/accel/round_lanes.h"

#include <algorithm>
#include <bit>
#include <cfloat>
#include <climits>
#include <cmath>
#include <numeric>

#include "xwires/core/parallel.h"
#include "xwires/core/rng.h"

namespace xw {
namespace {

uint32_t Bits(float x) { return std::bit_cast<uint32_t>(x); }
float FromBits(uint32_t u) { return std::bit_cast<float>(u); }

constexpr uint32_t kTf32Mask = 0xffffe000u;

bool IsNanBits(uint32_t u) { return (u & 0x7fffffffu) > 0x7f800000u; }

// A NaN after clearing its low 13 bits: kept if some payload survives,
// else the quiet NaN of the same sign (never the Inf the bare mask gives).
float Tf32Nan(uint32_t u) {
  const uint32_t m = u & kTf32Mask;
  return FromBits(IsNanBits(m) ? m : ((u & 0x80000000u) | 0x7fc00000u));
}

// 2^e as a double, for |e| <= 1022 (exact; no libm call).
double Pow2(int e) { return std::bit_cast<double>(static_cast<uint64_t>(e + 1023) << 52); }

// floor(log2 |t|) of a nonzero double that is normal (every exact product of
// two floats and every float is: their magnitudes are at least 2^-298).
int ExponentOf(double t) {
  return static_cast<int>((std::bit_cast<uint64_t>(t) >> 52) & 0x7ff) - 1023;
}

// Rounds s toward zero to fp32 (s finite).
float DoubleToFloatRz(double s) {
  float f = static_cast<float>(s);  // nearest even; Inf past FLT_MAX + half ulp
  if (std::fabs(static_cast<double>(f)) > std::fabs(s)) f = std::nextafter(f, 0.0f);
  return f;
}

}  // namespace

float RoundTf32Rna(float x) {
  uint32_t u = Bits(x);
  if (IsNanBits(u)) return Tf32Nan(u);
  if ((u & 0x7f800000u) != 0x7f800000u) u += 0x1000u;
  return FromBits(u & kTf32Mask);
}

float RoundTf32Rne(float x) {
  uint32_t u = Bits(x);
  if (IsNanBits(u)) return FromBits(0x7fffffffu);  // CUTLASS round_to_nearest
  if ((u & 0x7f800000u) != 0x7f800000u) u += 0xfffu + ((u >> 13) & 1u);
  return FromBits(u & kTf32Mask);
}

float RoundTf32Rz(float x) {
  const uint32_t u = Bits(x);
  if (IsNanBits(u)) return Tf32Nan(u);
  return FromBits(u & kTf32Mask);
}

uint16_t Bf16Bits(float x, bool flush_subnormals) {
  const uint32_t u = Bits(x);
  if (IsNanBits(u)) return 0x7fc0;  // c10::BFloat16's NaN
  uint16_t h = static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
  if (flush_subnormals && (h & 0x7f80u) == 0) h &= 0x8000u;
  return h;
}

float Bf16ToFloat(uint16_t bits) { return FromBits(static_cast<uint32_t>(bits) << 16); }

uint16_t Fp16Bits(float x) {
  uint32_t u = Bits(x);
  const uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  u &= 0x7fffffffu;
  if (u > 0x7f800000u) return sign | 0x7e00u;   // NaN (c10::Half)
  if (u >= 0x477ff000u) return sign | 0x7c00u;  // >= 65520 (and Inf): Inf
  if (u <= 0x33000000u) return sign;            // <= 2^-25: ties to the even zero
  const int exp = static_cast<int>(u >> 23) - 127;
  const uint32_t mant = u & 0x7fffffu;
  uint32_t h, rem, half;
  if (exp >= -14) {  // normal: drop 13 fraction bits
    h = (static_cast<uint32_t>(exp + 15) << 10) | (mant >> 13);
    rem = mant & 0x1fffu;
    half = 0x1000u;
  } else {  // subnormal: units of 2^-24
    const uint32_t m = mant | 0x800000u;
    const int shift = -(exp + 1);  // 14 .. 24
    h = m >> shift;
    rem = m & ((1u << shift) - 1u);
    half = 1u << (shift - 1);
  }
  if (rem > half || (rem == half && (h & 1u))) ++h;  // a carry may enter the exponent
  return static_cast<uint16_t>(sign | h);
}

float Fp16ToFloat(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  const uint32_t exp = (bits >> 10) & 0x1fu, mant = bits & 0x3ffu;
  if (exp == 0x1f) return FromBits(sign | 0x7f800000u | (mant << 13));
  if (exp == 0) {  // zero or subnormal: mant * 2^-24, exact in fp32
    const float v = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -v : v;
  }
  return FromBits(sign | ((exp + 112u) << 23) | (mant << 13));
}

float RoundToFormat(float x, StorageFormat f, bool flush_bf16_subnormals) {
  switch (f) {
    case StorageFormat::kFp32: return x;
    case StorageFormat::kBf16: return Bf16ToFloat(Bf16Bits(x, flush_bf16_subnormals));
    case StorageFormat::kFp16: return Fp16ToFloat(Fp16Bits(x));
  }
  return x;
}

float RoundOperand(float x, OperandRounding mode, bool flush_bf16_subnormals) {
  switch (mode) {
    case OperandRounding::kNone: return x;
    case OperandRounding::kTf32Rna: return RoundTf32Rna(x);
    case OperandRounding::kTf32Rne: return RoundTf32Rne(x);
    case OperandRounding::kTf32Rz: return RoundTf32Rz(x);
    case OperandRounding::kBf16Rne: return Bf16ToFloat(Bf16Bits(x, flush_bf16_subnormals));
    case OperandRounding::kFp16Rne: return Fp16ToFloat(Fp16Bits(x));
  }
  return x;
}

void RoundOperands(const float* src, float* dst, int64_t n, OperandRounding mode,
                   bool flush_bf16_subnormals) {
  if (mode == OperandRounding::kNone) {
    if (dst != src) std::copy(src, src + n, dst);
    return;
  }
  ParallelFor(n, GrainFor(n, 1 << 14, 16), [&](int64_t i0, int64_t i1) {
    accel::RoundLanes(src + i0, dst + i0, i1 - i0, mode, flush_bf16_subnormals);
  });
}

void RoundToFormatInPlace(float* x, int64_t n, StorageFormat f, bool flush_bf16_subnormals) {
  if (f == StorageFormat::kFp32) return;
  const OperandRounding mode =
      f == StorageFormat::kBf16 ? OperandRounding::kBf16Rne : OperandRounding::kFp16Rne;
  ParallelFor(n, GrainFor(n, 1 << 14, 16), [&](int64_t i0, int64_t i1) {
    accel::RoundLanes(x + i0, x + i0, i1 - i0, mode, flush_bf16_subnormals);
  });
}

TensorCoreSpec TensorCorePresetSpec(TensorCorePreset preset, OperandRounding operands) {
  const bool sixteen =
      operands == OperandRounding::kBf16Rne || operands == OperandRounding::kFp16Rne;
  switch (preset) {
    case TensorCorePreset::kA100: return {sixteen ? 8 : 4, 1};
    case TensorCorePreset::kH100: return {sixteen ? 16 : 8, 2};
    case TensorCorePreset::kCustom: break;
  }
  return {};
}

float TensorCoreBlockFma(float c, const float* a, const float* b, int n,
                         const TensorCoreSpec& spec) {
  double t[65];
  t[0] = c;
  bool finite = std::isfinite(c);
  for (int i = 0; i < n; ++i) {
    t[i + 1] = static_cast<double>(a[i]) * static_cast<double>(b[i]);  // exact
    finite = finite && std::isfinite(t[i + 1]);
  }
  if (!finite) {  // IEEE sum of the exact terms: Inf stays, Inf - Inf is NaN
    double s = 0;
    for (int i = 0; i <= n; ++i) s += t[i];
    return static_cast<float>(s);
  }
  int e_max = INT_MIN;
  for (int i = 0; i <= n; ++i) {
    if (t[i] != 0) e_max = std::max(e_max, ExponentOf(t[i]));
  }
  if (e_max == INT_MIN) {  // all zeros: the IEEE sum keeps -0 only if all are -0
    double s = t[0];
    for (int i = 1; i <= n; ++i) s += t[i];
    return static_cast<float>(s);
  }
  // Truncate every term onto the grid 2^q (scaling by powers of two is exact:
  // q lies in [-340, 232], every scaled term in [2^-540, 2^(26+align_bits))),
  // then sum exactly: every term is an integer multiple of 2^q below
  // 2^(25 + align_bits) units, so the sum of <= 65 of them fits 53 bits.
  const int q = e_max - 23 - spec.align_bits;
  const double down = Pow2(-q), up = Pow2(q);
  double s = 0;
  for (int i = 0; i <= n; ++i) s += std::trunc(t[i] * down) * up;
  return DoubleToFloatRz(s);
}

AccelSpec AccelSpec::For(OperandRounding operands) const {
  AccelSpec s = *this;
  if (operands == OperandRounding::kNone) s.accumulation = Accumulation::kOrdered;
  return s;
}
bool AccelSpec::ConvActive() const {
  return conv_operands != OperandRounding::kNone || split_k > 1 || scatter_random;
}
bool AccelSpec::MatmulActive() const {
  return matmul_operands != OperandRounding::kNone || split_k > 1;
}

TensorCoreSpec AccelSpec::TensorCoreFor(OperandRounding operands) const {
  return preset == TensorCorePreset::kCustom ? tensor_core
                                             : TensorCorePresetSpec(preset, operands);
}

namespace {
float PartialDot(const float* a, const float* b, int64_t n, const AccelSpec& spec,
                 const TensorCoreSpec& tc, const ReduceSpec& reduce) {
  if (spec.accumulation == Accumulation::kOrdered) return Dot(a, b, n, reduce);
  float acc = 0.0f;
  for (int64_t i = 0; i < n; i += tc.block) {
    acc = TensorCoreBlockFma(acc, a + i, b + i, static_cast<int>(std::min<int64_t>(tc.block, n - i)),
                             tc);
  }
  return acc;
}
}  // namespace

float AccelDot(const float* a, const float* b, int64_t n, const AccelSpec& spec,
               const TensorCoreSpec& tc, const ReduceSpec& reduce) {
  if (n <= 0) return 0.0f;
  const int64_t parts = std::clamp<int64_t>(spec.split_k, 1, n);
  if (parts == 1) return PartialDot(a, b, n, spec, tc, reduce);
  const int64_t len = n / parts;
  float r = 0.0f;
  for (int64_t j = 0; j < parts; ++j) {
    const int64_t start = j * len, count = j + 1 == parts ? n - start : len;
    const float s = RoundToFormat(PartialDot(a + start, b + start, count, spec, tc, reduce),
                                  spec.partial);
    r = j == 0 ? s : r + s;
  }
  return r;
}

void ScatterPermutation(uint64_t seed, uint64_t step, uint64_t tensor, uint64_t element,
                        int64_t n, std::vector<int64_t>* perm) {
  perm->resize(static_cast<size_t>(std::max<int64_t>(n, 0)));
  std::iota(perm->begin(), perm->end(), int64_t{0});
  const Philox rng(seed,
                   MixStream(MixStream(MixStream(StreamId("scatter"), step), tensor), element));
  for (int64_t i = n - 1; i >= 1; --i) {
    const int64_t j = static_cast<int64_t>(rng.U32(static_cast<uint64_t>(i)) %
                                           static_cast<uint32_t>(i + 1));
    std::swap((*perm)[i], (*perm)[j]);
  }
}

std::string OperandRoundingName(OperandRounding r) {
  switch (r) {
    case OperandRounding::kNone: return "none";
    case OperandRounding::kTf32Rna: return "tf32_rna";
    case OperandRounding::kTf32Rne: return "tf32_rne";
    case OperandRounding::kTf32Rz: return "tf32_rz";
    case OperandRounding::kBf16Rne: return "bf16_rne";
    case OperandRounding::kFp16Rne: return "fp16_rne";
  }
  return "none";
}

Result<OperandRounding> ParseOperandRounding(const std::string& name) {
  for (auto r : {OperandRounding::kNone, OperandRounding::kTf32Rna, OperandRounding::kTf32Rne,
                 OperandRounding::kTf32Rz, OperandRounding::kBf16Rne, OperandRounding::kFp16Rne}) {
    if (OperandRoundingName(r) == name) return r;
  }
  return Status::InvalidArgument("unknown value '" + name +
                                 "' (expected none, tf32_rna, tf32_rne, tf32_rz, bf16_rne or "
                                 "fp16_rne)");
}

std::string StorageFormatName(StorageFormat f) {
  switch (f) {
    case StorageFormat::kFp32: return "fp32";
    case StorageFormat::kBf16: return "bf16";
    case StorageFormat::kFp16: return "fp16";
  }
  return "fp32";
}

Result<StorageFormat> ParseStorageFormat(const std::string& name) {
  for (auto f : {StorageFormat::kFp32, StorageFormat::kBf16, StorageFormat::kFp16}) {
    if (StorageFormatName(f) == name) return f;
  }
  return Status::InvalidArgument("unknown value '" + name + "' (expected fp32, bf16 or fp16)");
}

}  // namespace xw
