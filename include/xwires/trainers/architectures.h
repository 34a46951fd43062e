// The architectures xwires trains, built from the modules of layers.h and
// blocks.h with PyTorch / torchvision state_dict names. Details, CIFAR
// changes and parameter counts: docs/architectures.md; PyTorch twins:
// tests/fixtures/torch_models/xw_models.py.
//
//   mlp          Flatten -> (fcI -> ReLU) x depth -> fc{depth+1}; hidden 512*w
//   simple_cnn   conv1 bn1 relu pool, conv2 bn2 relu pool, fc1 relu fc2
//   vgg11/vgg16  torchvision VGG (no BN), classifier.0 takes 512*(H/32)*(W/32)
//   resnet20     CIFAR ResNet (He et al. 2016), 3 stages 16/32/64, 6n+2 deep
//   resnet18/50  torchvision ResNet, conv1 3x3 stride 1, no max-pool
//   densenet121  torchvision DenseNet-121, conv0 3x3 stride 1, no pool0
// The graph is the same under every numerics profile; only the arithmetic
// (and where 'same' convolutions put their padding) follows the profile.
#ifndef XWIRES_TRAINERS_ARCHITECTURES_H_
#define XWIRES_TRAINERS_ARCHITECTURES_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "xwires/core/status.h"
#include "xwires/trainers/model.h"

namespace xw {

struct ArchOptions {
  // Channel / unit multiplier: every width c becomes max(1, round(c * width))
  // (round half to even). In (0, 16].
  double width = 1.0;
  // 0 = the architecture's own depth. mlp: number of hidden layers (>= 1,
  // default 2); resnet20: total depth 6n+2 (8, 14, 20, 32, ...). Other
  // architectures have a fixed depth and reject a different value.
  int depth = 0;
  // Dropout probability of vgg's two classifier Dropout layers (torchvision:
  // 0.5). In [0, 1).
  double dropout = 0.5;
};

// What the data looks like: images [N, channels, height, width] and labels
// in [0, num_classes).
struct InputSpec {
  int64_t channels = 3;
  int64_t height = 32;
  int64_t width = 32;
  int num_classes = 10;
};

// mlp, simple_cnn, vgg11, vgg16, resnet20, resnet18, resnet50, densenet121.
const std::vector<std::string>& ArchitectureNames();

// Builds an architecture with zero parameters (call Model::Initialize or
// LoadState). InvalidArgument for an unknown name (the message lists the
// known ones), bad options, or an input too small for the architecture.
Result<std::unique_ptr<Model>> BuildModel(const std::string& arch, const InputSpec& input,
                                          const ArchOptions& options = {});

}  // namespace xw

#endif  // XWIRES_TRAINERS_ARCHITECTURES_H_
