// Adam as PyTorch 1.13 and as Keras/TensorFlow compute it, chosen by the
// numerics profile (docs/profiles.md, "adam.*").
//
// The two variants differ in where epsilon enters and in the precision of the
// bias-correction scalars (reference notes, sections 1.1-1.4):
//   torch (torch.optim.Adam 1.13, single-tensor path):
//     g  = g + wd*p                    (weight_decay "l2" only)
//     m  = m*b1 + (1-b1)*g             (mul_ then add_(alpha))
//     v  = v*b2 + ((1-b2)*g)*g         (mul_ then addcmul_)
//     vmax = max(vmax, v)              (amsgrad; v below means vmax then)
//     denom = sqrt(v)/sqrt(bc2) + eps  bc1 = 1-b1^t, bc2 = 1-b2^t
//     p  = p + ((-lr/bc1)*m)/denom     (addcdiv_)
//   keras (Keras 3 / tf-keras Adam.update_step; TF ApplyAdam):
//     p  = p - (p*wd)*lr               (weight_decay "decoupled", before the step)
//     m  = m + (g-m)*(1-b1)
//     v  = v + (g*g-v)*(1-b2)
//     vmax = max(vmax, v)              (amsgrad)
//     alpha = (lr*sqrt(1-b2^t))/(1-b1^t)
//     p  = p - (m*alpha)/(sqrt(v)+eps) (eps is Kingma & Ba's "epsilon hat")
// Decoupled decay under the torch variant is AdamW's p = p*(1-lr*wd) before
// the moments; L2 decay under the keras variant folds wd*p into g.
// Every elementwise operation is one float32 rounding in the order written;
// hyperparameter scalars are formed in double and rounded to float once, as
// Python does before handing them to a float32 kernel. The bias-correction
// scalars (b^t, sqrt(bc2), lr/bc1, alpha) are computed in double or float32 as
// the profile's adam.bias_correction says. When adam.fma is set, "x + a*y"
// steps that ATen's vectorised CPU kernels run as fused multiply-adds use
// std::fma (see docs/profiles.md); otherwise every product is rounded.
//
// The update is elementwise, runs on xw::ParallelFor, and is therefore
// bitwise identical for any thread count. Not thread-safe: one Adam per model,
// called from one thread at a time.
#ifndef XWIRES_TRAINERS_OPTIMIZER_H_
#define XWIRES_TRAINERS_OPTIMIZER_H_

#include <cstdint>
#include <vector>

#include "xwires/core/status.h"
#include "xwires/core/tensor.h"
#include "xwires/trainers/profile.h"

namespace xw {

// Hyperparameters (what a user tunes); the arithmetic comes from the profile.
struct AdamOptions {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.0;  // how it is applied: Profile::adam.weight_decay
};

// Checks 0 <= lr, 0 <= beta1 < 1, 0 <= beta2 < 1, eps >= 0, weight_decay >= 0,
// all finite; the message names the offending field.
Status ValidateAdamOptions(const AdamOptions& options);

// Per-parameter optimizer state, shaped like the parameter. vmax is empty
// unless the profile enables AMSGrad.
struct AdamSlot {
  Tensor m;     // first moment (torch exp_avg, keras m)
  Tensor v;     // second moment (torch exp_avg_sq, keras v)
  Tensor vmax;  // AMSGrad running max of raw v (torch max_exp_avg_sq, keras vhat)
};

class Adam {
 public:
  // `options` should have passed ValidateAdamOptions; the profile's adam
  // section selects variant, scalar precision, decay mode, AMSGrad and FMA.
  Adam(const AdamOptions& options, const Profile& profile);

  // One step over all parameters: params[i] is updated in place from
  // grads[i] (same shape; grads are not modified). On the first call the
  // state is created with zeros for these shapes; later calls must pass the
  // same number of tensors with the same shapes, otherwise an
  // InvalidArgument status names the index and shapes and nothing changes.
  // Pointers are borrowed for the duration of the call only.
  Status Step(const std::vector<Tensor*>& params,
              const std::vector<const Tensor*>& grads);

  // Number of completed steps t (the bias corrections of the next step use
  // t + 1).
  int64_t step() const { return step_; }
  const AdamOptions& options() const { return options_; }
  // Learning-rate changes (schedules) take effect at the next Step.
  void set_lr(double lr) { options_.lr = lr; }

  // State for checkpoints and continued training: one slot per parameter, in
  // the order given to Step. Empty before the first Step.
  const std::vector<AdamSlot>& slots() const { return slots_; }
  // Restores a checkpoint. Slots must have matching m/v shapes, and a vmax of
  // the same shape exactly when AMSGrad is on; step >= 0. On error nothing
  // changes. Shapes are checked against params again at the next Step.
  Status Restore(int64_t step, std::vector<AdamSlot> slots);

 private:
  AdamOptions options_;
  Profile::AdamNumerics numerics_;
  int64_t step_ = 0;
  std::vector<AdamSlot> slots_;
};

// The float32 scalars one step t (1-based) uses; exposed so tests and docs
// can show exactly what the kernel multiplies by.
struct AdamScalars {
  float beta1, one_minus_beta1, beta2, one_minus_beta2, eps;
  // torch: -lr/bc1 and sqrt(bc2); keras: alpha (bc2_sqrt unused, 0).
  float neg_step_size, bc2_sqrt, alpha;
  // decoupled decay: torch 1-lr*wd; keras wd and lr as floats; L2: wd.
  float decay_factor, wd, lr;
};
AdamScalars ComputeAdamScalars(const AdamOptions& options,
                               const Profile::AdamNumerics& numerics, int64_t t);

}  // namespace xw

#endif  // XWIRES_TRAINERS_OPTIMIZER_H_
