// Profile JSON parsing, canonical printing and lookup of shipped profiles.
#include "xwires/trainers/profile.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <utility>

#include "profile_accel.h"
#include "profile_schema.h"
#include "xwires/core/file_util.h"
#include "xwires/core/json_limits.h"

namespace xw {
namespace {

using nlohmann::ordered_json;
using profile_schema::Reader;

// A float printed as its shortest round-trip decimal ("1e-05", not the
// double 9.99999974737875e-06), so the JSON shows what the user wrote.
double FloatForJson(float f) {
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), f);
  return std::strtod(std::string(buf, res.ptr).c_str(), nullptr);
}

Status ParseKernels(Reader& r, KernelNumerics* k) {
  std::string conv, gemm, reduce;
  bool fma = false;
  XW_RETURN_IF_ERROR(r.String("conv_algo", &conv));
  XW_RETURN_IF_ERROR(r.String("gemm", &gemm));
  XW_RETURN_IF_ERROR(r.String("reduce", &reduce));
  XW_RETURN_IF_ERROR(r.Bool("fma", &fma));
  XW_RETURN_IF_ERROR(r.Finish());
  auto a = ParseConvAlgo(conv);
  if (!a.ok()) return r.Error("conv_algo", a.status().message());
  auto g = ParseGemmKind(gemm);
  if (!g.ok()) return r.Error("gemm", g.status().message());
  auto s = ParseReduceOrder(reduce, fma);
  if (!s.ok()) return r.Error("reduce", s.status().message());
  k->conv_algo = *a;
  k->gemm = *g;
  k->reduce = *s;
  return Status::OK();
}

Status ParseAdam(Reader& r, Profile::AdamNumerics* a) {
  XW_RETURN_IF_ERROR(r.Enum(
      "variant", {{"torch", AdamVariant::kTorch}, {"keras", AdamVariant::kKeras}}, &a->variant));
  XW_RETURN_IF_ERROR(r.Enum("bias_correction", {{"double", true}, {"float32", false}},
                            &a->bias_correction_double));
  XW_RETURN_IF_ERROR(
      r.Enum("weight_decay",
             {{"l2", WeightDecayMode::kL2InGradient}, {"decoupled", WeightDecayMode::kDecoupled}},
             &a->weight_decay));
  XW_RETURN_IF_ERROR(r.Bool("amsgrad", &a->amsgrad));
  XW_RETURN_IF_ERROR(r.Bool("fma", &a->fma));
  return r.Finish();
}

Status ParseBatchNorm(Reader& r, BatchNormSpec* bn) {
  double eps = 0, momentum = 0;
  XW_RETURN_IF_ERROR(r.Number("eps", &eps));
  XW_RETURN_IF_ERROR(r.Number("momentum", &momentum));
  XW_RETURN_IF_ERROR(
      r.Enum("running_var", {{"unbiased", true}, {"biased", false}}, &bn->unbiased_running_var));
  XW_RETURN_IF_ERROR(r.Enum(
      "running_update", {{"lerp", RunningUpdate::kLerp}, {"subtract", RunningUpdate::kSubtract}},
      &bn->update));
  // Optional, both: absent means float32 accumulators and no fused
  // multiply-add (every profile written before the keys existed computed so).
  if (r.Has("accumulate")) {
    XW_RETURN_IF_ERROR(r.Enum(
        "accumulate",
        {{"float", BatchNormAccumulate::kFloat}, {"double", BatchNormAccumulate::kDouble}},
        &bn->accumulate));
  }
  if (r.Has("fma")) XW_RETURN_IF_ERROR(r.Bool("fma", &bn->fma));
  XW_RETURN_IF_ERROR(r.Finish());
  if (!(eps > 0) || !std::isfinite(eps)) {
    return r.Error("eps", "must be a finite number > 0, got " + std::to_string(eps));
  }
  if (!(momentum >= 0 && momentum <= 1)) {
    return r.Error("momentum",
                   "must be in [0, 1] (weight of the new batch), got " + std::to_string(momentum));
  }
  bn->eps = static_cast<float>(eps);
  bn->momentum = static_cast<float>(momentum);
  return Status::OK();
}

Status ParseLoss(Reader& r, LossSpec* loss) {
  double clip = 0;
  XW_RETURN_IF_ERROR(r.Enum("numerics",
                            {{"fused_log_softmax", LossNumerics::kFusedLogSoftmax},
                             {"clipped_softmax", LossNumerics::kClippedSoftmax}},
                            &loss->numerics));
  XW_RETURN_IF_ERROR(r.Number("clip_eps", &clip));
  XW_RETURN_IF_ERROR(r.Finish());
  if (!(clip > 0 && clip < 0.5)) {
    return r.Error("clip_eps", "must be in (0, 0.5), got " + std::to_string(clip));
  }
  loss->clip_eps = static_cast<float>(clip);
  return Status::OK();
}

Status ParseTop(Reader& r, Profile* p) {
  XW_RETURN_IF_ERROR(r.String("name", &p->name));
  XW_RETURN_IF_ERROR(r.Object("kernels", [&](Reader& s) { return ParseKernels(s, &p->kernels); }));
  XW_RETURN_IF_ERROR(r.Object("adam", [&](Reader& s) { return ParseAdam(s, &p->adam); }));
  XW_RETURN_IF_ERROR(r.Enum("init",
                            {{"torch_default", InitScheme::kTorchDefault},
                             {"glorot_uniform", InitScheme::kGlorotUniform}},
                            &p->init));
  XW_RETURN_IF_ERROR(r.Object("batch_norm", [&](Reader& s) { return ParseBatchNorm(s, &p->bn); }));
  XW_RETURN_IF_ERROR(r.Enum(
      "same_padding", {{"symmetric", SamePadding::kSymmetric}, {"tf_same", SamePadding::kTfSame}},
      &p->same_padding));
  XW_RETURN_IF_ERROR(r.Object("loss", [&](Reader& s) { return ParseLoss(s, &p->loss); }));
  XW_RETURN_IF_ERROR(r.Bool("shuffle", &p->shuffle));
  XW_RETURN_IF_ERROR(r.String("rng_stream", &p->rng_stream));
  // Optional: absent means plain fp32 CPU arithmetic (every key at its default).
  if (r.Has("accelerator")) {
    XW_RETURN_IF_ERROR(r.Object(
        "accelerator", [&](Reader& s) { return profile_schema::ParseAccelerator(s, p); }));
  }
  XW_RETURN_IF_ERROR(r.Finish());
  if (p->name.empty()) return r.Error("name", "must not be empty");
  if (p->rng_stream.empty()) return r.Error("rng_stream", "must not be empty");
  return Status::OK();
}

std::string ProfilesDir() {
  if (const char* env = std::getenv("XWIRES_PROFILES_DIR"); env && *env) return env;
#ifdef XWIRES_PROFILES_DIR
  return XWIRES_PROFILES_DIR;
#else
  return "trainers/profiles";
#endif
}

}  // namespace

const std::vector<std::string>& ShippedProfileNames() {
  static const std::vector<std::string> kNames = {"torch", "tf", "reference"};
  return kNames;
}

const std::vector<std::string>& AcceleratorProfileNames() {
  static const std::vector<std::string> kNames = {"torch-a100",     "tf-a100",    "torch-h100",
                                                  "torch-amp-fp16", "torch-bf16", "tf-mixed-fp16",
                                                  "tpu-bf16"};
  return kNames;
}

std::string AdamVariantName(AdamVariant v) { return v == AdamVariant::kTorch ? "torch" : "keras"; }
std::string WeightDecayModeName(WeightDecayMode m) {
  return m == WeightDecayMode::kL2InGradient ? "l2" : "decoupled";
}
std::string InitSchemeName(InitScheme s) {
  return s == InitScheme::kTorchDefault ? "torch_default" : "glorot_uniform";
}
std::string SamePaddingName(SamePadding p) {
  return p == SamePadding::kSymmetric ? "symmetric" : "tf_same";
}
std::string MixedPrecisionName(MixedPrecision m) {
  switch (m) {
    case MixedPrecision::kFp32: return "fp32";
    case MixedPrecision::kTorchBf16: return "torch_autocast_bf16";
    case MixedPrecision::kTorchFp16: return "torch_autocast_fp16";
    case MixedPrecision::kKerasBf16: return "keras_mixed_bfloat16";
    case MixedPrecision::kKerasFp16: return "keras_mixed_float16";
  }
  return "fp32";
}
StorageFormat MixedPrecisionFormat(MixedPrecision m) {
  switch (m) {
    case MixedPrecision::kFp32: return StorageFormat::kFp32;
    case MixedPrecision::kTorchBf16:
    case MixedPrecision::kKerasBf16: return StorageFormat::kBf16;
    case MixedPrecision::kTorchFp16:
    case MixedPrecision::kKerasFp16: return StorageFormat::kFp16;
  }
  return StorageFormat::kFp32;
}
std::string LossNumericsName(LossNumerics n) {
  return n == LossNumerics::kFusedLogSoftmax ? "fused_log_softmax" : "clipped_softmax";
}

namespace {
std::string ProfileJson(const Profile& p, bool with_accelerator);
}  // namespace

std::string ProfileToJson(const Profile& p) { return ProfileJson(p, false); }
std::string ProfileToJsonWithAccelerator(const Profile& p) { return ProfileJson(p, true); }

namespace {
std::string ProfileJson(const Profile& p, bool with_accelerator) {
  ordered_json j;
  j["name"] = p.name;
  j["kernels"] = {{"conv_algo", ConvAlgoName(p.kernels.conv_algo)},
                  {"gemm", GemmKindName(p.kernels.gemm)},
                  {"reduce", ReduceOrderName(p.kernels.reduce)},
                  {"fma", p.kernels.reduce.fma}};
  j["adam"] = {{"variant", AdamVariantName(p.adam.variant)},
               {"bias_correction", p.adam.bias_correction_double ? "double" : "float32"},
               {"weight_decay", WeightDecayModeName(p.adam.weight_decay)},
               {"amsgrad", p.adam.amsgrad},
               {"fma", p.adam.fma}};
  j["init"] = InitSchemeName(p.init);
  j["batch_norm"] = {{"eps", FloatForJson(p.bn.eps)},
                     {"momentum", FloatForJson(p.bn.momentum)},
                     {"running_var", p.bn.unbiased_running_var ? "unbiased" : "biased"},
                     {"running_update", p.bn.update == RunningUpdate::kLerp ? "lerp" : "subtract"}};
  // Printed where it is not the default, and always in the full form, so
  // that `attribute` sees (and ablates) it between any two profiles.
  if (with_accelerator || p.bn.accumulate != BatchNormAccumulate::kFloat) {
    j["batch_norm"]["accumulate"] =
        p.bn.accumulate == BatchNormAccumulate::kDouble ? "double" : "float";
  }
  if (with_accelerator || p.bn.fma) j["batch_norm"]["fma"] = p.bn.fma;
  j["same_padding"] = SamePaddingName(p.same_padding);
  j["loss"] = {{"numerics", LossNumericsName(p.loss.numerics)},
               {"clip_eps", FloatForJson(p.loss.clip_eps)}};
  j["shuffle"] = p.shuffle;
  j["rng_stream"] = p.rng_stream;
  if (with_accelerator || !profile_schema::IsDefaultAccelerator(p)) {
    j["accelerator"] = profile_schema::AcceleratorToJson(p);
  }
  return j.dump(2) + "\n";
}
}  // namespace

Result<Profile> ParseProfileJson(const std::string& text) {
  ordered_json j = ordered_json::parse(text, nullptr, /*allow_exceptions=*/false,
                                       /*ignore_comments=*/false);
  if (j.is_discarded()) return Status::InvalidArgument("profile is not valid JSON");
  XW_RETURN_IF_ERROR(CheckJsonLimits(text, "profile"));
  Profile p;
  Reader top(j, "");
  XW_RETURN_IF_ERROR(top.CheckObject());
  XW_RETURN_IF_ERROR(ParseTop(top, &p));
  p.json = ProfileToJson(p);
  return p;
}

Result<Profile> LoadProfile(const std::string& name_or_path) {
  std::string path = name_or_path;
  const bool is_path =
      name_or_path.find('/') != std::string::npos ||
      (name_or_path.size() > 5 && name_or_path.compare(name_or_path.size() - 5, 5, ".json") == 0);
  if (!is_path) {
    bool shipped = false;
    for (const auto& n : ShippedProfileNames()) shipped = shipped || n == name_or_path;
    for (const auto& n : AcceleratorProfileNames()) shipped = shipped || n == name_or_path;
    if (!shipped) {
      std::string accel;
      for (const auto& n : AcceleratorProfileNames()) accel += ", " + n;
      return Status::NotFound("unknown profile '" + name_or_path +
                              "' (shipped: torch, tf, reference" + accel +
                              "; or give a .json file path)");
    }
    path = ProfilesDir() + "/" + name_or_path + ".json";
  }
  XW_ASSIGN_OR_RETURN(std::string text, ReadWholeFile(path, "profile file"));
  auto p = ParseProfileJson(text);
  if (!p.ok()) return p.status().WithContext("profile file '" + path + "'");
  return p;
}

}  // namespace xw
