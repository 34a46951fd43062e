// Dynamic loss scaling for fp16 mixed-precision training: the state
// machines of PyTorch's GradScaler and Keras' LossScaleOptimizer, with
// their constants (note §2.3, §2.4; docs/profiles.md "loss_scaling").
//
//   torch_dynamic  (torch/amp/grad_scaler.py, AmpKernels.cu): S0 = 65536;
//     unscale multiplies by inv = float(1 / double(S)); on any non-finite
//     gradient the step is skipped, S = float(S * 0.5), counter = 0; else
//     counter + 1, and at 2000 S = float(S * 2) if that is finite, counter = 0.
//     No lower bound.
//   keras3_dynamic (keras/src/optimizers/loss_scale_optimizer.py): S0 = 32768;
//     unscale divides by S; non-finite: S = S / 2, counter = 0, skip; finite:
//     if counter == 1999, S = S * 2, counter = 0, else counter + 1. No floor,
//     no overflow guard.
//   keras2_dynamic (tf_keras/mixed_precision/loss_scale_optimizer.py):
//     S0 = 32768; unscale multiplies by 1 / S; non-finite: S = max(S / 2, 1),
//     counter = 0, skip; finite: if counter + 1 >= 2000, S = S * 2 if finite,
//     counter = 0, else counter + 1.
// A skipped step changes no parameter and no optimizer state (Adam's step
// count included). Not thread-safe; one per model.
#ifndef XWIRES_TRAINERS_LOSS_SCALER_H_
#define XWIRES_TRAINERS_LOSS_SCALER_H_

#include <cstdint>
#include <string>

#include "xwires/core/status.h"

namespace xw {

enum class LossScaling { kNone, kTorchDynamic, kKeras3Dynamic, kKeras2Dynamic };

std::string LossScalingName(LossScaling s);
Result<LossScaling> ParseLossScaling(const std::string& name);

class LossScaler {
 public:
  explicit LossScaler(LossScaling kind = LossScaling::kNone);

  LossScaling kind() const { return kind_; }
  bool enabled() const { return kind_ != LossScaling::kNone; }
  // The current scale S (1 when disabled).
  float scale() const { return scale_; }
  // The loss gradient's seed: S times the gradient of the unscaled loss, in
  // fp32 (loss * S differentiates to S * dloss).
  float ScaleGradient(float g) const { return enabled() ? g * scale_ : g; }
  // Unscales n gradients in place (PyTorch: times inv, skipped when inv == 1;
  // Keras 3: divided by S; Keras 2: times 1/S) and returns true when every
  // value was finite before unscaling (then the step may be taken).
  bool UnscaleAndCheck(float* g, int64_t n) const;
  // Advances the state machine after a step whose gradients were all finite
  // (found_inf false) or not. Returns true when the optimizer step must be
  // skipped.
  bool Update(bool found_inf);

  int64_t skipped_steps() const { return skipped_; }
  int64_t growth_counter() const { return counter_; }

 private:
  LossScaling kind_;
  float scale_ = 1.0f;
  int64_t counter_ = 0;
  int64_t skipped_ = 0;
};

}  // namespace xw

#endif  // XWIRES_TRAINERS_LOSS_SCALER_H_
