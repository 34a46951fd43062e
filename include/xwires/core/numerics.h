// Kernel-level numerics knobs shared by every kernel we own.
//
// A numerics profile (trainers/) decides these; kernels only obey them. The
// defaults are the bitwise-reproducible reference: direct convolution, our own
// matmul, strictly sequential accumulation, no FMA.
#ifndef XWIRES_CORE_NUMERICS_H_
#define XWIRES_CORE_NUMERICS_H_

#include <string>

#include "xwires/core/accel_numerics.h"
#include "xwires/core/reduce.h"
#include "xwires/core/status.h"

namespace xw {

enum class ConvAlgo {
  kDirect,      // loops over outputs; the C*KH*KW reduction follows `reduce`
  kIm2colGemm,  // patch matrix times weight matrix, on the engine `gemm` names
  kWinograd,    // F(2x2, 3x3) for 3x3 stride 1; other shapes fall back to kIm2colGemm
};

enum class GemmKind {
  kEigen,  // Eigen's blocked sgemm (and for im2col its implicit FMA tiles): an
           // ISA-dependent, thread-independent order
  kOwned,  // the exact-order kernels: dense products accumulate per `reduce`,
           // im2col's and Winograd's in sequential chains (fma per `reduce.fma`)
};

struct KernelNumerics {
  ConvAlgo conv_algo = ConvAlgo::kDirect;
  GemmKind gemm = GemmKind::kOwned;
  ReduceSpec reduce;  // sequential, no FMA
  // Matmul only (matmul.h): both operands of every product are taken as
  // RoundOperand(value, operands, flush_bf16_subnormals) (accel_numerics.h).
  // Default kNone: as given. Set by the accelerator emulation (accel_ops.h)
  // for its operand-rounding-only route, never by a profile's "kernels".
  OperandRounding operands = OperandRounding::kNone;
  bool flush_bf16_subnormals = false;
};

// True when every kernel these knobs select is exact-order (gemm "owned",
// any conv_algo), so the results are the same bits on every ISA and every
// dispatched SIMD target. gemm "eigen" (Eigen's sgemm, and for im2col the
// implicit tiles' L-lane partial sums) has an ISA-dependent order.
bool SameBitsOnEveryIsa(const KernelNumerics& k);

// "direct", "im2col", "winograd".
Result<ConvAlgo> ParseConvAlgo(const std::string& name);
std::string ConvAlgoName(ConvAlgo a);
// "eigen", "owned".
Result<GemmKind> ParseGemmKind(const std::string& name);
std::string GemmKindName(GemmKind g);

}  // namespace xw

#endif  // XWIRES_CORE_NUMERICS_H_
