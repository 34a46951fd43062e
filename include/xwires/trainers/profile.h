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
//                    "running_update": "lerp", "accumulate": "double",
//                    "fma": true},
//     "same_padding": "symmetric",
//     "loss": {"numerics": "fused_log_softmax", "clip_eps": 1e-7},
//     "shuffle": false,
//     "rng_stream": "torch",
//     "accelerator": {                      // optional; absent = fp32 CPU
//       "conv_operands": "tf32_rna", "matmul_operands": "none",
//       "flush_bf16_subnormals": false,
//       "accumulation": {"kind": "tensor_core", "preset": "a100"},
//       "split_k": {"partitions": 1, "partial": "fp32"},
//       "scatter_order": "index", "mixed_precision": "fp32",
//       "loss_scaling": "none"}
//   }
// accelerator value sets: *_operands none|tf32_rna|tf32_rne|tf32_rz|bf16_rne|
// fp16_rne; accumulation.kind ordered|tensor_core (then preset a100|h100|
// custom, and for custom block 4|8|16|32 and align_bits 0..8);
// split_k.partitions >= 1, partial fp32|bf16|fp16; scatter_order
// index|random; mixed_precision fp32|torch_autocast_bf16|torch_autocast_fp16|
// keras_mixed_bfloat16|keras_mixed_float16; loss_scaling none|torch_dynamic|
// keras3_dynamic|keras2_dynamic.
// Value sets: conv_algo direct|im2col|winograd; gemm owned|eigen; reduce
// sequential|pairwise|kahan|lanes1|lanes4|lanes8|lanes16; adam.variant
// torch|keras; bias_correction double|float32; weight_decay l2|decoupled;
// init torch_default|glorot_uniform; running_var unbiased|biased;
// running_update lerp|subtract; batch_norm.accumulate float|double and
// batch_norm.fma (both optional, absent = float and false; printed only when
// not, or always by ProfileToJsonWithAccelerator); same_padding symmetric|tf_same; loss.numerics
// fused_log_softmax|clipped_softmax. batch_norm.momentum is the weight of the
// NEW batch (PyTorch convention; Keras momentum 0.99 is 0.01 here).
//
// Profile is a plain value type; functions here are thread-safe.
#ifndef XWIRES_TRAINERS_PROFILE_H_
#define XWIRES_TRAINERS_PROFILE_H_

#include <string>
#include <vector>

#include "xwires/core/accel_numerics.h"
#include "xwires/core/batchnorm.h"
#include "xwires/core/loss.h"
#include "xwires/core/numerics.h"
#include "xwires/core/status.h"
#include "xwires/trainers/loss_scaler.h"

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

// Mixed-precision policy (docs/profiles.md "accelerator.mixed_precision").
// PyTorch autocast: convolution and linear outputs (and their input and
// weight gradients) are 16-bit, batch norm keeps its input's dtype (fp32
// statistics, 16-bit output), residual adds and pooling run on 16-bit
// values; softmax, log-softmax and cross-entropy run in fp32 on the upcast
// logits; master weights and the optimizer stay fp32. Keras mixed policies:
// every layer computes in the 16-bit dtype (batch norm's moments and the
// loss in fp32), variables fp32.
enum class MixedPrecision { kFp32, kTorchBf16, kTorchFp16, kKerasBf16, kKerasFp16 };

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
  // Optional "accelerator" object (GPU/TPU numerics): operand rounding,
  // tensor-core accumulation, split-K and scatter order of the products
  // (accel_ops.h), the mixed-precision policy and loss scaling.
  AccelSpec accel;
  MixedPrecision mixed_precision = MixedPrecision::kFp32;
  LossScaling loss_scaling = LossScaling::kNone;
  // Canonical JSON text of this profile (ProfileToJson), kept with every run.
  std::string json;
};

// The shipped profile names, in order: torch, tf, reference.
const std::vector<std::string>& ShippedProfileNames();
// The shipped accelerator profiles (fp32 CPU profiles plus an "accelerator"
// object, docs/profiles.md): torch-a100, tf-a100, torch-h100,
// torch-amp-fp16, torch-bf16, tf-mixed-fp16, tpu-bf16. Each shares its base
// profile's rng_stream, so it starts from the same weights.
const std::vector<std::string>& AcceleratorProfileNames();

// A shipped name ("torch", "tf", "reference" or an accelerator profile), looked up in the profiles
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
// The same with the "accelerator" object even when every key is at its
// default (ProfileToJson leaves it out then), and batch_norm.accumulate and
// .fma even at their defaults, so that two profiles compare
// key by key (attribute). Parses back to the same knobs.
std::string ProfileToJsonWithAccelerator(const Profile& profile);

// Enum <-> JSON spelling, for CLI/metrics messages.
std::string AdamVariantName(AdamVariant v);
std::string WeightDecayModeName(WeightDecayMode m);
std::string InitSchemeName(InitScheme s);
std::string SamePaddingName(SamePadding p);
std::string LossNumericsName(LossNumerics n);
std::string MixedPrecisionName(MixedPrecision m);
// The 16-bit format of a mixed policy (kFp32 for "fp32").
StorageFormat MixedPrecisionFormat(MixedPrecision m);

}  // namespace xw

#endif  // XWIRES_TRAINERS_PROFILE_H_
