// Model: a built architecture (root module), its input contract and its
// state_dict: every parameter and buffer in PyTorch's canonical order under
// PyTorch's names, so the weights file of a Model loads into the matching
// torch module with load_state_dict(strict=True).
//
// A Model owns its module tree; the StateEntry pointers stay valid for the
// Model's lifetime. Not thread-safe (one training loop per Model).
#ifndef XWIRES_TRAINERS_MODEL_H_
#define XWIRES_TRAINERS_MODEL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "xwires/core/status.h"
#include "xwires/core/tensor.h"
#include "xwires/dataset/store/tensor_file.h"
#include "xwires/trainers/init.h"
#include "xwires/trainers/module.h"
#include "xwires/trainers/profile.h"

namespace xw {

class Model {
 public:
  // `input_shape` is [C, H, W]; the root maps [N, C, H, W] to [N, classes].
  // Collects the state (root->Register("")) and stamps every entry with
  // `family` (torchvision's init overrides) and the last Linear layer's
  // entries with is_classifier_head.
  Model(std::string arch, ArchFamily family, Shape input_shape, int num_classes,
        ModulePtr root);

  const std::string& arch() const { return arch_; }
  ArchFamily family() const { return family_; }
  const Shape& input_shape() const { return input_shape_; }
  int num_classes() const { return num_classes_; }

  // Every parameter and buffer, canonical order.
  const std::vector<StateEntry>& state() const { return state_; }
  // Trainable parameters and their gradients, in state order (Adam's order).
  const std::vector<Tensor*>& parameters() const { return params_; }
  const std::vector<const Tensor*>& gradients() const { return grads_; }
  // Number of trainable scalars (torch: sum(p.numel() for p in parameters())).
  int64_t ParameterCount() const;

  // Draws every entry from the profile's init scheme (init.h).
  Status Initialize(const Profile& profile, uint64_t seed);

  // Copies of all entries (state_dict order), ready for WriteTensorFile.
  NamedTensors ExportState() const;
  // Strict load by name (order-insensitive): every entry must be present with
  // the same shape and no extra names may appear; InvalidArgument names the
  // first missing, unexpected or mis-shaped tensor, prefixed with `source`.
  // On error the model is unchanged.
  Status LoadState(const NamedTensors& tensors, const std::string& source);
  // WeightsSha256 of ExportState(), without copying.
  std::string WeightsSha256() const;

  // Logits [N, num_classes] for x [N, C, H, W] (N >= 1, C/H/W as
  // input_shape()); the pointer is owned by the model, valid until the next
  // Forward. ctx.training selects batch statistics and dropout.
  Result<const Tensor*> Forward(const Tensor& x, const RunContext& ctx);
  // Backpropagates dL/dlogits (may be overwritten) through the last Forward,
  // overwriting every parameter gradient.
  Status Backward(Tensor& dlogits, const RunContext& ctx);

  // The module tree, for per-module inspection (trainers/capture.h).
  Module& root() { return *root_; }

 private:
  std::string arch_;
  ArchFamily family_;
  Shape input_shape_;
  int num_classes_;
  ModulePtr root_;
  std::vector<StateEntry> state_;
  std::vector<Tensor*> params_;
  std::vector<const Tensor*> grads_;
};

}  // namespace xw

#endif  // XWIRES_TRAINERS_MODEL_H_
