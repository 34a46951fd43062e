// The "accelerator" object of a profile (profile_accel.h).
#include "profile_accel.h"

#include <string>
#include <utility>
#include <vector>

namespace xw::profile_schema {
namespace {

using nlohmann::ordered_json;

const std::vector<std::pair<std::string, OperandRounding>>& RoundingChoices() {
  static const std::vector<std::pair<std::string, OperandRounding>> kChoices = {
      {"none", OperandRounding::kNone},         {"tf32_rna", OperandRounding::kTf32Rna},
      {"tf32_rne", OperandRounding::kTf32Rne},  {"tf32_rz", OperandRounding::kTf32Rz},
      {"bf16_rne", OperandRounding::kBf16Rne},  {"fp16_rne", OperandRounding::kFp16Rne}};
  return kChoices;
}

const std::vector<std::pair<std::string, MixedPrecision>>& MixedChoices() {
  static const std::vector<std::pair<std::string, MixedPrecision>> kChoices = {
      {"fp32", MixedPrecision::kFp32},
      {"torch_autocast_bf16", MixedPrecision::kTorchBf16},
      {"torch_autocast_fp16", MixedPrecision::kTorchFp16},
      {"keras_mixed_bfloat16", MixedPrecision::kKerasBf16},
      {"keras_mixed_float16", MixedPrecision::kKerasFp16}};
  return kChoices;
}

Status ParseAccumulation(Reader& r, AccelSpec* a) {
  XW_RETURN_IF_ERROR(r.Enum(
      "kind", {{"ordered", Accumulation::kOrdered}, {"tensor_core", Accumulation::kTensorCore}},
      &a->accumulation));
  if (a->accumulation == Accumulation::kOrdered) return r.Finish();
  XW_RETURN_IF_ERROR(r.Enum("preset",
                            {{"a100", TensorCorePreset::kA100},
                             {"h100", TensorCorePreset::kH100},
                             {"custom", TensorCorePreset::kCustom}},
                            &a->preset));
  if (a->preset == TensorCorePreset::kCustom) {
    XW_RETURN_IF_ERROR(r.Int("block", 1, 64, &a->tensor_core.block));
    const int b = a->tensor_core.block;
    if (b != 4 && b != 8 && b != 16 && b != 32) {
      return r.Error("block", "must be 4, 8, 16 or 32, got " + std::to_string(b));
    }
    XW_RETURN_IF_ERROR(r.Int("align_bits", 0, 8, &a->tensor_core.align_bits));
  } else if (r.Has("block") || r.Has("align_bits")) {
    return r.Error(r.Has("block") ? "block" : "align_bits",
                   "set by the preset (only preset \"custom\" takes block and align_bits)");
  }
  return r.Finish();
}

Status ParseSplitK(Reader& r, AccelSpec* a) {
  XW_RETURN_IF_ERROR(r.Int("partitions", 1, 4096, &a->split_k));
  XW_RETURN_IF_ERROR(r.Enum(
      "partial", {{"fp32", StorageFormat::kFp32}, {"bf16", StorageFormat::kBf16}, {"fp16", StorageFormat::kFp16}},
      &a->partial));
  return r.Finish();
}

}  // namespace

Status ParseAccelerator(Reader& r, Profile* p) {
  AccelSpec& a = p->accel;
  XW_RETURN_IF_ERROR(r.Enum("conv_operands", RoundingChoices(), &a.conv_operands));
  XW_RETURN_IF_ERROR(r.Enum("matmul_operands", RoundingChoices(), &a.matmul_operands));
  XW_RETURN_IF_ERROR(r.Bool("flush_bf16_subnormals", &a.flush_bf16_subnormals));
  XW_RETURN_IF_ERROR(
      r.Object("accumulation", [&](Reader& s) { return ParseAccumulation(s, &a); }));
  XW_RETURN_IF_ERROR(r.Object("split_k", [&](Reader& s) { return ParseSplitK(s, &a); }));
  XW_RETURN_IF_ERROR(r.Enum("scatter_order", {{"index", false}, {"random", true}},
                            &a.scatter_random));
  XW_RETURN_IF_ERROR(r.Enum("mixed_precision", MixedChoices(), &p->mixed_precision));
  XW_RETURN_IF_ERROR(r.Enum("loss_scaling",
                            {{"none", LossScaling::kNone},
                             {"torch_dynamic", LossScaling::kTorchDynamic},
                             {"keras3_dynamic", LossScaling::kKeras3Dynamic},
                             {"keras2_dynamic", LossScaling::kKeras2Dynamic}},
                            &p->loss_scaling));
  // mixed_precision and the operand roundings are independent knobs: the
  // shipped mixed profiles round both operands to their 16-bit format, as
  // autocast's casts do; other pairings are ablations (attribute).
  return r.Finish();
}

bool IsDefaultAccelerator(const Profile& p) {
  const AccelSpec& a = p.accel;
  return a.conv_operands == OperandRounding::kNone &&
         a.matmul_operands == OperandRounding::kNone && !a.flush_bf16_subnormals &&
         a.accumulation == Accumulation::kOrdered && a.split_k == 1 &&
         a.partial == StorageFormat::kFp32 && !a.scatter_random &&
         p.mixed_precision == MixedPrecision::kFp32 && p.loss_scaling == LossScaling::kNone;
}

ordered_json AcceleratorToJson(const Profile& p) {
  const AccelSpec& a = p.accel;
  ordered_json acc;
  if (a.accumulation == Accumulation::kOrdered) {
    acc["kind"] = "ordered";
  } else {
    acc["kind"] = "tensor_core";
    acc["preset"] = a.preset == TensorCorePreset::kA100   ? "a100"
                    : a.preset == TensorCorePreset::kH100 ? "h100"
                                                          : "custom";
    if (a.preset == TensorCorePreset::kCustom) {
      acc["block"] = a.tensor_core.block;
      acc["align_bits"] = a.tensor_core.align_bits;
    }
  }
  ordered_json j;
  j["conv_operands"] = OperandRoundingName(a.conv_operands);
  j["matmul_operands"] = OperandRoundingName(a.matmul_operands);
  j["flush_bf16_subnormals"] = a.flush_bf16_subnormals;
  j["accumulation"] = acc;
  j["split_k"] = {{"partitions", a.split_k}, {"partial", StorageFormatName(a.partial)}};
  j["scatter_order"] = a.scatter_random ? "random" : "index";
  j["mixed_precision"] = MixedPrecisionName(p.mixed_precision);
  j["loss_scaling"] = LossScalingName(p.loss_scaling);
  return j;
}

}  // namespace xw::profile_schema
