// Per-module activations of a model's forward pass, for comparing two models
// layer by layer (`xwires compare`, tier 2).
//
// The forward pass is the model's own (eval mode, the profile's numerics):
// Sequential containers are walked child by child and every other module
// (a layer, or a composite block such as a ResNet BasicBlock, whose internals
// are not split) is one captured step. The last step's output equals
// Model::Forward's logits bit for bit.
//
// Paths are state_dict-style: "layer1.0", "features.3"; an unnamed child
// (a functional op like torchvision's F.relu) is "<parent path>(<index>)".
// Not thread-safe (runs the model's modules, which are not).
#ifndef XWIRES_TRAINERS_CAPTURE_H_
#define XWIRES_TRAINERS_CAPTURE_H_

#include <string>
#include <vector>

#include "xwires/core/status.h"
#include "xwires/core/tensor.h"
#include "xwires/trainers/model.h"
#include "xwires/trainers/profile.h"

namespace xw {

struct Activation {
  std::string path;  // "features.0", "layer1.0", "fc"
  std::string type;  // module class: "Conv2d", "BasicBlock", "ReLU", ...
  Tensor value;      // a copy of the module's output, [N, ...]
};

// Runs x [N, C, H, W] (N >= 1, C/H/W = model.input_shape()) through `model`
// in eval mode under `profile` and returns every step's output in forward
// order. InvalidArgument for a mis-shaped x (naming the module that refused).
Result<std::vector<Activation>> ForwardCapture(Model& model,
                                               const Profile& profile,
                                               const Tensor& x);

}  // namespace xw

#endif  // XWIRES_TRAINERS_CAPTURE_H_
