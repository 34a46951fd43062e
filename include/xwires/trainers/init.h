// Parameter initialisation under a numerics profile's init scheme.
//
// Schemes (Profile::init; formulas and sources in docs/profiles.md, reference
// notes section 2):
//   kTorchDefault  conv/linear weight and bias ~ U(-1/sqrt(fan_in), +1/sqrt(fan_in))
//                  (kaiming_uniform(a=sqrt(5)) and the bias rule of
//                  torch.nn.Conv2d/Linear.reset_parameters), then torchvision's
//                  per-architecture overrides:
//                    kResNet:   conv weight ~ N(0, sqrt(2/fan_out)); fc default
//                    kVgg:      conv weight ~ N(0, sqrt(2/fan_out)), conv bias 0;
//                               linear weight ~ N(0, 0.01), linear bias 0
//                    kDenseNet: conv weight ~ N(0, sqrt(2/fan_in)); linear bias 0
//   kGlorotUniform conv/linear weight ~ U(+-sqrt(6/(fan_in+fan_out))), biases 0
//                  (Keras Conv2D/Dense defaults; the architecture family is
//                  ignored, as keras.applications has no overrides)
// Every scheme: batch-norm weight 1, bias 0, running_mean 0, running_var 1,
// other buffers (num_batches_tracked) 0.
//
// Fans are the caller's: conv fan_in = C_in*kh*kw, fan_out = C_out*kh*kw;
// linear fan_in = in, fan_out = out; a bias carries its layer's fans.
//
// Randomness: element i of parameter `name` is drawn from
//   Philox(seed, StreamId(profile.rng_stream + "/init/" + name))
// at index i (Uniform(i) or Normal(i)), so values depend only on (seed,
// profile stream, name, shape): not on creation order, other parameters or
// the thread count. Thread-safe (pure function of its arguments).
#ifndef XWIRES_TRAINERS_INIT_H_
#define XWIRES_TRAINERS_INIT_H_

#include <cstdint>
#include <string>

#include "xwires/core/status.h"
#include "xwires/core/tensor.h"
#include "xwires/trainers/profile.h"

namespace xw {

enum class ParamKind {
  kConvWeight,     // OIHW
  kConvBias,       // [O]
  kLinearWeight,   // [out, in]
  kLinearBias,     // [out]
  kBnWeight,       // gamma [C]
  kBnBias,         // beta [C]
  kBnRunningMean,  // buffer [C]
  kBnRunningVar,   // buffer [C]
  kBuffer,         // any other buffer (e.g. num_batches_tracked): zeros
};

// Selects torchvision's overrides under kTorchDefault.
enum class ArchFamily { kPlain, kVgg, kResNet, kDenseNet };

struct ParamInfo {
  std::string name;  // state_dict name, e.g. "layer1.0.conv1.weight"
  ParamKind kind = ParamKind::kBuffer;
  int64_t fan_in = 0;   // required > 0 for conv/linear weights and biases
  int64_t fan_out = 0;  // required > 0 for conv/linear weights and biases
  ArchFamily family = ArchFamily::kPlain;
  // The final classifier layer. Informational: the shipped schemes key on
  // layer type (torchvision applies its Linear rules to every Linear).
  bool is_classifier_head = false;
};

// Conv fans for OIHW weight dims (groups = 1): {C_in*kh*kw, C_out*kh*kw}.
struct Fans {
  int64_t fan_in;
  int64_t fan_out;
};
Fans ConvFans(int64_t out_channels, int64_t in_channels, int64_t kh, int64_t kw);
Fans LinearFans(int64_t out_features, int64_t in_features);

// The distribution a parameter is drawn from: U(a, b), N(a, b) with b the
// standard deviation, or the constant a.
struct InitRule {
  enum class Dist { kConstant, kUniform, kNormal } dist = Dist::kConstant;
  double a = 0.0;
  double b = 0.0;
};
// "U(-0.125, 0.125)", "N(0, 0.01)", "const 1".
std::string InitRuleToString(const InitRule& rule);

// The rule for `info` under `profile`; InvalidArgument if a weight or bias
// has a non-positive fan (message names the parameter).
Result<InitRule> RuleFor(const ParamInfo& info, const Profile& profile);

// Fills *value (shape set by the caller, not changed) with RuleFor's
// distribution, drawing as described above. On error *value is unchanged.
Status InitParameter(const ParamInfo& info, const Profile& profile, uint64_t seed,
                     Tensor* value);

// The Philox stream of a parameter: StreamId(profile.rng_stream + "/init/" + name).
uint64_t InitStream(const Profile& profile, const std::string& param_name);

}  // namespace xw

#endif  // XWIRES_TRAINERS_INIT_H_
