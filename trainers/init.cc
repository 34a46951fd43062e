// Initialisation rules of PyTorch (+ torchvision) and Keras, drawn from
// per-parameter Philox streams. Rules and sources: init.h, docs/profiles.md.
#include "xwires/trainers/init.h"

#include <cmath>
#include <sstream>

#include "xwires/core/rng.h"

namespace xw {
namespace {

InitRule Constant(double c) { return {InitRule::Dist::kConstant, c, 0.0}; }
InitRule Uniform(double bound) { return {InitRule::Dist::kUniform, -bound, bound}; }
InitRule Normal(double stddev) { return {InitRule::Dist::kNormal, 0.0, stddev}; }

bool IsConvOrLinear(ParamKind k) {
  return k == ParamKind::kConvWeight || k == ParamKind::kConvBias ||
         k == ParamKind::kLinearWeight || k == ParamKind::kLinearBias;
}

// torch.nn default (kaiming_uniform(a=sqrt(5)) weight, U(+-1/sqrt(fan_in))
// bias) with torchvision's model-constructor overrides on top.
InitRule TorchRule(const ParamInfo& info) {
  const InitRule torch_default = Uniform(1.0 / std::sqrt(static_cast<double>(info.fan_in)));
  switch (info.kind) {
    case ParamKind::kConvWeight:
      // kaiming_normal_(mode=fan_out|fan_in, nonlinearity='relu'): gain sqrt(2).
      if (info.family == ArchFamily::kResNet || info.family == ArchFamily::kVgg) {
        return Normal(std::sqrt(2.0 / static_cast<double>(info.fan_out)));
      }
      if (info.family == ArchFamily::kDenseNet) {
        return Normal(std::sqrt(2.0 / static_cast<double>(info.fan_in)));
      }
      return torch_default;
    case ParamKind::kConvBias:
      return info.family == ArchFamily::kVgg ? Constant(0.0) : torch_default;
    case ParamKind::kLinearWeight:
      return info.family == ArchFamily::kVgg ? Normal(0.01) : torch_default;
    case ParamKind::kLinearBias:
      return (info.family == ArchFamily::kVgg || info.family == ArchFamily::kDenseNet)
                 ? Constant(0.0)
                 : torch_default;
    default:
      return Constant(0.0);  // not reached: handled by RuleFor
  }
}

InitRule GlorotRule(const ParamInfo& info) {
  if (info.kind == ParamKind::kConvWeight || info.kind == ParamKind::kLinearWeight) {
    return Uniform(std::sqrt(6.0 / static_cast<double>(info.fan_in + info.fan_out)));
  }
  return Constant(0.0);  // Keras bias_initializer="zeros"
}

}  // namespace

Fans ConvFans(int64_t out_channels, int64_t in_channels, int64_t kh, int64_t kw) {
  return {in_channels * kh * kw, out_channels * kh * kw};
}

Fans LinearFans(int64_t out_features, int64_t in_features) { return {in_features, out_features}; }

std::string InitRuleToString(const InitRule& rule) {
  std::ostringstream s;
  s.precision(6);
  switch (rule.dist) {
    case InitRule::Dist::kConstant:
      s << "const " << rule.a;
      break;
    case InitRule::Dist::kUniform:
      s << "U(" << rule.a << ", " << rule.b << ")";
      break;
    case InitRule::Dist::kNormal:
      s << "N(" << rule.a << ", " << rule.b << ")";
      break;
  }
  return s.str();
}

Result<InitRule> RuleFor(const ParamInfo& info, const Profile& profile) {
  switch (info.kind) {
    case ParamKind::kBnWeight:
    case ParamKind::kBnRunningVar:
      return Constant(1.0);
    case ParamKind::kBnBias:
    case ParamKind::kBnRunningMean:
    case ParamKind::kBuffer:
      return Constant(0.0);
    default:
      break;
  }
  if (IsConvOrLinear(info.kind) && (info.fan_in <= 0 || info.fan_out <= 0)) {
    return Status::InvalidArgument("init of '" + info.name + "': fan_in " +
                                   std::to_string(info.fan_in) + " and fan_out " +
                                   std::to_string(info.fan_out) + " must be > 0");
  }
  return profile.init == InitScheme::kTorchDefault ? TorchRule(info) : GlorotRule(info);
}

uint64_t InitStream(const Profile& profile, const std::string& param_name) {
  return StreamId(profile.rng_stream + "/init/" + param_name);
}

Status InitParameter(const ParamInfo& info, const Profile& profile, uint64_t seed, Tensor* value) {
  if (value == nullptr) {
    return Status::InvalidArgument("init of '" + info.name + "': null tensor");
  }
  XW_ASSIGN_OR_RETURN(InitRule rule, RuleFor(info, profile));
  const Philox rng(seed, InitStream(profile, info.name));
  switch (rule.dist) {
    case InitRule::Dist::kConstant:
      value->Fill(static_cast<float>(rule.a));
      break;
    case InitRule::Dist::kUniform:
      rng.FillUniform(value->data(), value->size(), static_cast<float>(rule.a),
                      static_cast<float>(rule.b));
      break;
    case InitRule::Dist::kNormal:
      rng.FillNormal(value->data(), value->size(), static_cast<float>(rule.a),
                     static_cast<float>(rule.b));
      break;
  }
  return Status::OK();
}

}  // namespace xw
