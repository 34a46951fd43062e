// Accelerator (GPU/TPU) arithmetic emulated bit for bit on any CPU: operand
// rounding to TF32/bf16/fp16, the tensor-core block accumulation model,
// split-K partial sums and the order of atomic (scatter) accumulations.
//
// Every function is a pure function of its arguments, written in plain
// integer and double arithmetic (no FMA, no rounding-mode changes), so it
// gives the same bits on every CPU, SIMD target and thread count.
// Sources and the open questions are in docs/profiles.md ("Accelerator
// numerics") and /work/shared/reference/accelerator-numerics.md ("note" below).
// Thread-safe: no state.
#ifndef XWIRES_CORE_ACCEL_NUMERICS_H_
#define XWIRES_CORE_ACCEL_NUMERICS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "xwires/core/reduce.h"
#include "xwires/core/status.h"

namespace xw {

// fp32 -> reduced format -> fp32 for the operands of a product (note §1.1,
// §2.1). Each result is a float whose value is exactly representable in the
// named format.
enum class OperandRounding {
  kNone,     // fp32 as is
  kTf32Rna,  // 10 fraction bits, nearest, ties away (cvt.rna.tf32.f32; Ampere cuBLAS)
  kTf32Rne,  // 10 fraction bits, nearest, ties to even (cvt.rn.tf32.f32)
  kTf32Rz,   // 10 fraction bits, truncated (tensor core fed raw fp32; Hopper wgmma)
  kBf16Rne,  // bfloat16, nearest even (c10::BFloat16, __float2bfloat16)
  kFp16Rne,  // IEEE binary16, nearest even, subnormals kept (c10::Half)
};

// The storage format of a value that is kept in fewer bits: split-K
// partials, mixed-precision activations and gradients.
enum class StorageFormat {
  kFp32,
  kBf16,
  kFp16,
};

// TF32 (RNA, RNE, RZ): NaN stays NaN (RNE returns 0x7fffffff as CUTLASS
// does; RNA/RZ clear the low 13 bits, and a NaN whose payload lies only
// there is returned as the quiet NaN 0x7fffffff rather than the Inf the bit
// recipe would give). Inf stays Inf; finite values past the largest TF32
// value round to Inf under RNA/RNE; subnormals keep fp32's exponent range.
float RoundTf32Rna(float x);
float RoundTf32Rne(float x);
float RoundTf32Rz(float x);

// bfloat16 RNE: (u + 0x7fff + ((u >> 16) & 1)) >> 16; any NaN -> 0x7fc0
// (c10::BFloat16). Overflow carries into Inf. With flush_subnormals (TPU), a
// result whose exponent field is zero becomes a zero of the same sign
// (inputs are rounded first, then flushed).
uint16_t Bf16Bits(float x, bool flush_subnormals = false);
float Bf16ToFloat(uint16_t bits);
// IEEE binary16 RNE with subnormals: |x| >= 65520 -> Inf, NaN -> 0x7e00
// (sign kept), smallest subnormal 2^-24.
uint16_t Fp16Bits(float x);
float Fp16ToFloat(uint16_t bits);

// The value after a round trip through the format (fp32: x itself).
float RoundToFormat(float x, StorageFormat f, bool flush_bf16_subnormals = false);
float RoundOperand(float x, OperandRounding mode, bool flush_bf16_subnormals = false);
// dst[i] = RoundOperand(src[i]) for i < n (dst may equal src). Parallel
// through xw::ParallelFor for large n; elementwise, so thread-independent.
void RoundOperands(const float* src, float* dst, int64_t n, OperandRounding mode,
                   bool flush_bf16_subnormals = false);
void RoundToFormatInPlace(float* x, int64_t n, StorageFormat f, bool flush_bf16_subnormals = false);

// The tensor-core multi-term fused add (Fasi et al. 2021; Khattak &
// Mikaitis 2025, models/*TC.m; note §1.3). One block FMA of `block` terms:
//   p_i = a_i * b_i exactly;  E = max over nonzero {p_i, c} of floor(log2 |.|)
//   every p_i and c truncated toward zero to a multiple of 2^(E - 23 - align_bits)
//   s = exact sum;  c' = s rounded toward zero to fp32.
// A dot product runs blocks of `block` consecutive terms in increasing index
// order on one accumulator starting at +0; a last short block is padded with
// zero terms. Any Inf or NaN among the products or c gives the IEEE sum of
// the exact terms (Inf - Inf = NaN). A finite s beyond the fp32 range gives
// +-FLT_MAX (round toward zero). Products of two fp32 values have at most 48
// significant bits, so doubles hold every step exactly.
struct TensorCoreSpec {
  int block = 4;       // terms per block FMA: 4, 8, 16 or 32 (at most 64)
  int align_bits = 1;  // extra alignment bits (neab): 0 V100, 1 A100, 2 H100
};

// Presets from Khattak & Mikaitis' model files (note §1.3 table): the block
// size depends on the operands' format. A100: tf32 4, bf16/fp16 8, neab 1.
// H100 (and H200 = B200): tf32 8, bf16/fp16 16, neab 2. fp32 operands
// (rounding none) take the tf32 block.
enum class TensorCorePreset { kCustom, kA100, kH100 };
TensorCoreSpec TensorCorePresetSpec(TensorCorePreset preset, OperandRounding operands);

// One block FMA: returns c' for c + sum_{i<n} a[i]*b[i], n <= spec.block
// (missing terms are zeros).
float TensorCoreBlockFma(float c, const float* a, const float* b, int n,
                         const TensorCoreSpec& spec);

// How the terms of one output's dot product are accumulated.
enum class Accumulation {
  kOrdered,     // xw::Dot with the profile's ReduceSpec (today's orders)
  kTensorCore,  // blocks of TensorCoreBlockFma
};

// Everything the accelerator emulation changes in a product. The default is
// inactive: every product runs exactly as before this struct existed.
struct AccelSpec {
  OperandRounding conv_operands = OperandRounding::kNone;    // fwd, dgrad, wgrad
  OperandRounding matmul_operands = OperandRounding::kNone;  // dense / matmul
  bool flush_bf16_subnormals = false;                        // TPU bf16
  Accumulation accumulation = Accumulation::kOrdered;  // for rounded operands only
  TensorCorePreset preset = TensorCorePreset::kCustom;
  TensorCoreSpec tensor_core;  // used with kTensorCore; filled from preset unless kCustom
  // Split-K (CUTLASS parallel split-K, note §3.1, §6.4): partitions of
  // floor(K / P) terms each, the last takes the rest (P is capped at K);
  // each partial is accumulated per `accumulation` from +0, rounded to
  // `partial`, and the partials are added in partition order in fp32
  // round-to-nearest (r = s0; r = r + s_j).
  int split_k = 1;
  StorageFormat partial = StorageFormat::kFp32;
  // Order of the scatter (atomic) accumulations: the convolution filter
  // gradient's per-image partials. false: image order; true: a Philox
  // permutation keyed by (seed, step, tensor, element).
  bool scatter_random = false;
  // Key of the random scatter order, set per call by the layer.
  uint64_t scatter_seed = 0, scatter_step = 0, scatter_tensor = 0;

  // Tensor cores take only reduced operands: a product whose operands are
  // not rounded (kNone) runs on the CUDA cores' fp32 FMA path, so For(kNone)
  // is this spec with kOrdered accumulation; For(other) is this spec.
  AccelSpec For(OperandRounding operands) const;
  // True when a convolution / matmul differs from today's kernels.
  bool ConvActive() const;
  bool MatmulActive() const;
  // The tensor-core parameters for operands rounded per `operands`.
  TensorCoreSpec TensorCoreFor(OperandRounding operands) const;
};

// One output of an emulated product: sum_{t<n} a[t]*b[t] (operands already
// rounded) under spec's split-K, accumulation and partial format; `reduce`
// is the order of kOrdered accumulation. `tc` is spec.TensorCoreFor(...).
float AccelDot(const float* a, const float* b, int64_t n, const AccelSpec& spec,
               const TensorCoreSpec& tc, const ReduceSpec& reduce);

// The Fisher-Yates permutation of [0, n) drawn from
// Philox(seed, MixStream(MixStream(MixStream(StreamId("scatter"), step),
// tensor), element)): perm[i] for i = n-1 .. 1 swaps i with U32(i) mod (i+1).
// The same bits on every CPU.
void ScatterPermutation(uint64_t seed, uint64_t step, uint64_t tensor, uint64_t element,
                        int64_t n, std::vector<int64_t>* perm);

// Spellings used by profile files.
std::string OperandRoundingName(OperandRounding r);
Result<OperandRounding> ParseOperandRounding(const std::string& name);
std::string StorageFormatName(StorageFormat f);
Result<StorageFormat> ParseStorageFormat(const std::string& name);

}  // namespace xw

#endif  // XWIRES_CORE_ACCEL_NUMERICS_H_
