// Numerics profiles: every arithmetic choice that distinguishes one
// framework's training from another's, as data.
//
// A profile is a JSON file. Shipped: "torch", "tf" and "reference"
// (trainers/profiles/<name>.json); users may write their own. Every knob, its
// formula and the source of the behaviour are documented in docs/profiles.md.
// The JSON form (all keys required, no others allowed):
//   {
//     "name": "torch",
//     "kernels": {"conv_algo": "direct", "gemm": "owned",
//                 "reduce": "lanes8", "fma": true},
//     "adam": {"variant": "torch", "bias_correction": "double",
//              "weight_decay": "l2", "amsgrad": false, "fma": true},
//     "init": "torch_default",
//     "batch_norm": {"eps": 1e-5, "momentum": 0.1, "running_var": "unbiased",
//                    "running_update": "lerp"},
//     "same_padding": "symmetric",
//     "loss": {"numerics": "fused_log_softmax", "clip_eps": 1e-7},
//     "shuffle": false,
//     "rng_stream": "torch"
//   }
// Value sets: conv_algo direct|im2col|winograd; gemm owned|eigen; reduce
// sequential|pairwise|kahan|lanes1|lanes4|lanes8|lanes16; adam.variant
// torch|keras; bias_correction double|float32; weight_decay l2|decoupled;
// init torch_default|glorot_uniform; running_var unbiased|biased;
// running_update lerp|subtract; same_padding symmetric|tf_same; loss.numerics
// fused_log_softmax|clipped_softmax. batch_norm.momentum is the weight of the
// NEW batch (PyTorch convention; Keras momentum 0.99 is 0.01 here).
//
// Profile is a plain value type; functions here are thread-safe.
#ifndef XWIRES_TRAINERS_PROFILE_H_
#define XWIRES_TRAINERS_PROFILE_H_

#include <string>
#include <vector>

#include "xwires/core/batchnorm.h"
#include "xwires/core/loss.h"
#include "xwires/core/numerics.h"
#include "xwires/core/status.h"

namespace xw {

enum class AdamVariant {
  kTorch,  // eps added to sqrt(v)/sqrt(1-b2^t) (torch.optim.Adam)
  kKeras,  // eps-hat: alpha = lr*sqrt(1-b2^t)/(1-b1^t), p -= alpha*m/(sqrt(v)+eps)
};

enum class WeightDecayMode {
  kL2InGradient,  // g += wd*p (torch.optim.Adam weight_decay)
  kDecoupled,     // torch: p *= 1-lr*wd (AdamW); keras: p -= p*wd*lr (Keras Adam)
};

enum class InitScheme {
  kTorchDefault,   // U(+-1/sqrt(fan_in)) weights and biases + torchvision overrides
  kGlorotUniform,  // U(+-sqrt(6/(fan_in+fan_out))) weights, zero biases
};

// How a conv declared with 'same' padding pads (the model maps this to the
// conv kernel's padding). Equal for stride 1 and odd kernels.
enum class SamePadding {
  kSymmetric,  // PyTorch: explicit pad (k-1)/2 on every side
  kTfSame,     // TF SAME: pad_total = max((ceil(in/s)-1)*s + k - in, 0),
               // floor(pad_total/2) before, the rest (extra) bottom/right
};

struct Profile {
  // Optimizer arithmetic; hyperparameter values live in AdamOptions.
  struct AdamNumerics {
    AdamVariant variant = AdamVariant::kTorch;
    // b1^t, b2^t, sqrt(1-b2^t), lr/(1-b1^t) (or alpha) in double, rounded to
    // float once (PyTorch's Python scalars) -- or float32 throughout (TF).
    bool bias_correction_double = true;
    WeightDecayMode weight_decay = WeightDecayMode::kL2InGradient;
    bool amsgrad = false;
    // "x + a*y" moment/decay updates as one fused multiply-add, as ATen's
    // vectorised CPU add(alpha) does (vec::fmadd). See optimizer.h.
    bool fma = false;
  };

  std::string name;        // "torch"; free text for user profiles
  KernelNumerics kernels;  // conv algorithm, gemm kind, reduction order, FMA
  AdamNumerics adam;
  InitScheme init = InitScheme::kGlorotUniform;
  BatchNormSpec bn;        // eps, momentum (new-batch weight), running var
  SamePadding same_padding = SamePadding::kSymmetric;
  LossSpec loss;
  bool shuffle = false;    // reshuffle training data each epoch
  // Prefix of every Philox stream the profile draws from:
  // StreamId(rng_stream + "/init/<param>"), "/dropout/...", so profiles
  // never share random numbers unless they name the same stream.
  std::string rng_stream;
  // Canonical JSON text of this profile (ProfileToJson), kept with every run.
  std::string json;
};

// The shipped profile names, in order: torch, tf, reference.
const std::vector<std::string>& ShippedProfileNames();

// A shipped name ("torch", "tf", "reference"), looked up in the profiles
// directory (XWIRES_PROFILES_DIR env var if set, else the source tree's
// trainers/profiles), or a path to a .json file (anything containing '/' or
// ending in ".json"). NotFound names the missing file or unknown name; parse
// errors are prefixed with the file path.
Result<Profile> LoadProfile(const std::string& name_or_path);

// Parses profile JSON (schema above). Unknown keys, missing keys, wrong types
// and bad enum values give InvalidArgument naming the key path (e.g.
// "adam.variant: unknown value 'tf' (expected torch or keras)"). Also
// checks bn.eps > 0, 0 <= bn.momentum <= 1, loss.clip_eps in (0, 0.5) and a
// non-empty name and rng_stream. The result's `json` is canonical.
Result<Profile> ParseProfileJson(const std::string& text);

// Canonical JSON (fixed key order, 2-space indent, floats printed as their
// shortest round-trip decimal, trailing newline). For every valid profile p,
// ParseProfileJson(ProfileToJson(p)) has the same knobs and the same text.
std::string ProfileToJson(const Profile& profile);

// Enum <-> JSON spelling, for CLI/metrics messages.
std::string AdamVariantName(AdamVariant v);
std::string WeightDecayModeName(WeightDecayMode m);
std::string InitSchemeName(InitScheme s);
std::string SamePaddingName(SamePadding p);
std::string LossNumericsName(LossNumerics n);

}  // namespace xw

#endif  // XWIRES_TRAINERS_PROFILE_H_
