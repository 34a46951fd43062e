// The eight architectures, each a top-to-bottom list of modules named as in
// its PyTorch twin (python/xwires/torch_models.py).
#include "xwires/trainers/architectures.h"

#include <cmath>
#include <utility>

#include "xwires/trainers/blocks.h"
#include "xwires/trainers/layers.h"

namespace xw {

namespace {

using SeqPtr = std::unique_ptr<Sequential>;

template <typename M, typename... Args>
ModulePtr Make(Args&&... args) {
  return std::make_unique<M>(std::forward<Args>(args)...);
}

ModulePtr BuildMlp(const InputSpec& in, double width, int depth) {
  auto net = std::make_unique<Sequential>();
  const int64_t hidden = ScaledChannels(512, width);
  int64_t features = in.channels * in.height * in.width;
  // No Flatten: Linear reads [N, C, H, W] as [N, C*H*W] (DenseForward),
  // and a Flatten module would copy every batch (3% of mlp's step).
  for (int i = 0; i < depth; ++i) {
    net->Add("fc" + std::to_string(i + 1), Make<Linear>(features, hidden));
    net->Add("", Make<ReLU>());
    features = hidden;
  }
  net->Add("fc" + std::to_string(depth + 1), Make<Linear>(features, in.num_classes));
  return net;
}

ModulePtr BuildSimpleCnn(const InputSpec& in, double width) {
  const int64_t c1 = ScaledChannels(32, width), c2 = ScaledChannels(64, width);
  const int64_t hidden = ScaledChannels(128, width);
  auto net = std::make_unique<Sequential>();
  net->Add("conv1", Make<Conv2d>(in.channels, c1, 3, 1, Conv2d::kSame, false));
  net->Add("bn1", Make<BatchNorm2d>(c1));
  net->Add("", Make<ReLU>());
  net->Add("", Make<MaxPool2d>(2, 2));
  net->Add("conv2", Make<Conv2d>(c1, c2, 3, 1, Conv2d::kSame, false));
  net->Add("bn2", Make<BatchNorm2d>(c2));
  net->Add("", Make<ReLU>());
  net->Add("", Make<MaxPool2d>(2, 2));
  net->Add("", Make<Flatten>());
  net->Add("fc1", Make<Linear>(c2 * (in.height / 2 / 2) * (in.width / 2 / 2), hidden));
  net->Add("", Make<ReLU>());
  net->Add("fc2", Make<Linear>(hidden, in.num_classes));
  return net;
}

// torchvision cfgs "A" (vgg11) and "D" (vgg16); 0 is a max-pool ("M").
const std::vector<int> kVgg11 = {64, 0, 128, 0, 256, 256, 0, 512, 512, 0, 512, 512, 0};
const std::vector<int> kVgg16 = {64,  64,  0,   128, 128, 0,   256, 256, 256,
                                 0,   512, 512, 512, 0,   512, 512, 512, 0};

ModulePtr BuildVgg(const std::vector<int>& cfg, const InputSpec& in, double width,
                   double dropout) {
  auto features = std::make_unique<Sequential>();
  int64_t c = in.channels, h = in.height, w = in.width;
  for (int v : cfg) {
    if (v == 0) {
      features->Add(Make<MaxPool2d>(2, 2));
      h /= 2;
      w /= 2;
    } else {
      const int64_t out = ScaledChannels(v, width);
      features->Add(Make<Conv2d>(c, out, 3, 1, Conv2d::kSame, true));
      features->Add(Make<ReLU>());
      c = out;
    }
  }
  const int64_t hidden = ScaledChannels(4096, width);
  auto classifier = std::make_unique<Sequential>();
  classifier->Add(Make<Linear>(c * h * w, hidden));
  classifier->Add(Make<ReLU>());
  classifier->Add(Make<Dropout>(dropout));
  classifier->Add(Make<Linear>(hidden, hidden));
  classifier->Add(Make<ReLU>());
  classifier->Add(Make<Dropout>(dropout));
  classifier->Add(Make<Linear>(hidden, in.num_classes));
  auto net = std::make_unique<Sequential>();
  net->Add("features", std::move(features));
  net->Add("", Make<Flatten>());
  net->Add("classifier", std::move(classifier));
  return net;
}

// torchvision ResNet._make_layer over `planes` per stage, CIFAR stem.
template <typename Block>
ModulePtr BuildResNet(const std::vector<int>& blocks, const std::vector<int64_t>& planes,
                      const InputSpec& in) {
  auto net = std::make_unique<Sequential>();
  int64_t inplanes = planes[0];
  net->Add("conv1", Make<Conv2d>(in.channels, inplanes, 3, 1, Conv2d::kSame, false));
  net->Add("bn1", Make<BatchNorm2d>(inplanes));
  net->Add("relu", Make<ReLU>());
  for (size_t k = 0; k < blocks.size(); ++k) {
    auto layer = std::make_unique<Sequential>();
    for (int i = 0; i < blocks[k]; ++i) {
      const int stride = (k > 0 && i == 0) ? 2 : 1;
      layer->Add(Make<Block>(inplanes, planes[k], stride));
      inplanes = planes[k] * Block::kExpansion;
    }
    net->Add("layer" + std::to_string(k + 1), std::move(layer));
  }
  net->Add("avgpool", Make<GlobalAvgPool>());
  net->Add("fc", Make<Linear>(inplanes, in.num_classes));
  return net;
}

// torchvision DenseNet-121 (growth g, bn_size 4, 2g initial features, blocks
// 6/12/24/16, transitions halve the channels), CIFAR stem.
ModulePtr BuildDenseNet121(const InputSpec& in, double width) {
  const int64_t g = ScaledChannels(32, width), bn_size = 4;
  const int block_config[] = {6, 12, 24, 16};
  auto features = std::make_unique<Sequential>();
  int64_t c = 2 * g;
  features->Add("conv0", Make<Conv2d>(in.channels, c, 3, 1, Conv2d::kSame, false));
  features->Add("norm0", Make<BatchNorm2d>(c));
  features->Add("relu0", Make<ReLU>());
  for (int k = 0; k < 4; ++k) {
    auto block = std::make_unique<DenseBlock>(block_config[k], c, g, bn_size);
    c = block->out_channels();
    features->Add("denseblock" + std::to_string(k + 1), std::move(block));
    if (k != 3) {
      features->Add("transition" + std::to_string(k + 1), MakeDenseTransition(c, c / 2));
      c /= 2;
    }
  }
  features->Add("norm5", Make<BatchNorm2d>(c));
  auto net = std::make_unique<Sequential>();
  net->Add("features", std::move(features));
  net->Add("", Make<ReLU>());
  net->Add("", Make<GlobalAvgPool>());
  net->Add("classifier", Make<Linear>(c, in.num_classes));
  return net;
}

Status CheckOptions(const std::string& arch, const InputSpec& in, const ArchOptions& o) {
  if (!(o.width > 0.0 && o.width <= 16.0)) {
    return Status::InvalidArgument("width must be in (0, 16], got " + std::to_string(o.width));
  }
  if (!(o.dropout >= 0.0 && o.dropout < 1.0)) {
    return Status::InvalidArgument("dropout must be in [0, 1), got " +
                                   std::to_string(o.dropout));
  }
  if (in.channels < 1 || in.height < 1 || in.width < 1 || in.num_classes < 1) {
    return Status::InvalidArgument("input must have positive channels, height, width and "
                                   "classes");
  }
  if (o.depth != 0) {
    const bool ok = (arch == "mlp" && o.depth >= 1 && o.depth <= 64) ||
                    (arch == "resnet20" && o.depth >= 8 && (o.depth - 2) % 6 == 0);
    if (!ok) {
      return Status::InvalidArgument(
          "depth " + std::to_string(o.depth) + " is not valid for " + arch +
          " (mlp: hidden layers 1..64; resnet20: 6n+2 >= 8; others: fixed depth)");
    }
  }
  int64_t min_side = 1;
  if (arch == "simple_cnn") min_side = 4;
  if (arch == "vgg11" || arch == "vgg16") min_side = 32;
  if (arch == "densenet121") min_side = 8;
  if (in.height < min_side || in.width < min_side) {
    return Status::InvalidArgument(arch + " needs images of at least " +
                                   std::to_string(min_side) + "x" + std::to_string(min_side) +
                                   ", got " + std::to_string(in.height) + "x" +
                                   std::to_string(in.width));
  }
  return Status::OK();
}

}  // namespace

const std::vector<std::string>& ArchitectureNames() {
  static const std::vector<std::string> names = {"mlp",      "simple_cnn", "vgg11",
                                                 "vgg16",    "resnet20",   "resnet18",
                                                 "resnet50", "densenet121"};
  return names;
}

Result<std::unique_ptr<Model>> BuildModel(const std::string& arch, const InputSpec& in,
                                          const ArchOptions& o) {
  bool known = false;
  std::string list;
  for (const auto& n : ArchitectureNames()) {
    known |= n == arch;
    list += (list.empty() ? "" : ", ") + n;
  }
  if (!known) return Status::InvalidArgument("unknown architecture '" + arch + "' (known: " + list + ")");
  XW_RETURN_IF_ERROR(CheckOptions(arch, in, o));
  const double w = o.width;
  ModulePtr root;
  ArchFamily family = ArchFamily::kPlain;
  if (arch == "mlp") {
    root = BuildMlp(in, w, o.depth == 0 ? 2 : o.depth);
  } else if (arch == "simple_cnn") {
    root = BuildSimpleCnn(in, w);
  } else if (arch == "vgg11" || arch == "vgg16") {
    root = BuildVgg(arch == "vgg11" ? kVgg11 : kVgg16, in, w, o.dropout);
    family = ArchFamily::kVgg;
  } else if (arch == "resnet20") {
    const int n = ((o.depth == 0 ? 20 : o.depth) - 2) / 6;
    root = BuildResNet<BasicBlock>({n, n, n},
                                   {ScaledChannels(16, w), ScaledChannels(32, w),
                                    ScaledChannels(64, w)},
                                   in);
    family = ArchFamily::kResNet;
  } else if (arch == "resnet18" || arch == "resnet50") {
    const std::vector<int64_t> planes = {ScaledChannels(64, w), ScaledChannels(128, w),
                                         ScaledChannels(256, w), ScaledChannels(512, w)};
    root = arch == "resnet18" ? BuildResNet<BasicBlock>({2, 2, 2, 2}, planes, in)
                              : BuildResNet<Bottleneck>({3, 4, 6, 3}, planes, in);
    family = ArchFamily::kResNet;
  } else {
    root = BuildDenseNet121(in, w);
    family = ArchFamily::kDenseNet;
  }
  return std::make_unique<Model>(arch, family, Shape{in.channels, in.height, in.width},
                                 in.num_classes, std::move(root));
}

}  // namespace xw
