#include "xwires/core/numerics.h"

namespace xw {

Result<ConvAlgo> ParseConvAlgo(const std::string& name) {
  if (name == "direct") return ConvAlgo::kDirect;
  if (name == "im2col") return ConvAlgo::kIm2colGemm;
  if (name == "winograd") return ConvAlgo::kWinograd;
  return Status::InvalidArgument("unknown conv algorithm '" + name +
                                 "' (expected direct, im2col or winograd)");
}

std::string ConvAlgoName(ConvAlgo a) {
  switch (a) {
    case ConvAlgo::kDirect: return "direct";
    case ConvAlgo::kIm2colGemm: return "im2col";
    case ConvAlgo::kWinograd: return "winograd";
  }
  return "direct";
}

Result<GemmKind> ParseGemmKind(const std::string& name) {
  if (name == "eigen") return GemmKind::kEigen;
  if (name == "owned") return GemmKind::kOwned;
  return Status::InvalidArgument("unknown gemm kind '" + name + "' (expected eigen or owned)");
}

bool SameBitsOnEveryIsa(const KernelNumerics& k) {
  // Under gemm "owned" every algorithm's products run on the exact-order
  // kernels (im2col and Winograd in their TapOrder chains).
  return k.gemm == GemmKind::kOwned;
}

std::string GemmKindName(GemmKind g) { return g == GemmKind::kEigen ? "eigen" : "owned"; }

}  // namespace xw
