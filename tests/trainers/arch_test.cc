// Architectures: parameter counts at width 1 against torchvision, and the
// exact state_dict (names, order, shapes) of every architecture against the
// PyTorch twins (tests/fixtures/torch_models/state_dicts.txt).
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "xwires/trainers/architectures.h"

namespace xw {
namespace {

// Trainable parameter counts at width 1, 3x32x32 inputs, 10 classes, computed
// once with torch 1.13 / torchvision 0.14 (Debian):
//   import torch, torchvision, torch.nn as nn, xw_models as m
//   r = torchvision.models.resnet18(num_classes=10)
//   r.conv1 = nn.Conv2d(3, 64, 3, 1, 1, bias=False); r.maxpool = nn.Identity()
//   sum(p.numel() for p in r.parameters())            # 11173962 (resnet50: 23520842)
//   v = torchvision.models.vgg11(num_classes=10); v.avgpool = nn.Identity()
//   v.classifier[0] = nn.Linear(512, 4096)            # 28144010 (vgg16: 33638218)
//   d = torchvision.models.densenet121(num_classes=10)
//   d.features.conv0 = nn.Conv2d(3, 64, 3, 1, 1, bias=False)   # 6956426 (pool0 has none)
//   mlp, simple_cnn, resnet20 from tests/fixtures/torch_models/xw_models.py:
//   sum(p.numel() for p in m.build(a).parameters())   # 1841162, 545194, 272474
const std::map<std::string, int64_t> kTorchParamCounts = {
    {"mlp", 1841162},       {"simple_cnn", 545194}, {"vgg11", 28144010},
    {"vgg16", 33638218},    {"resnet20", 272474},   {"resnet18", 11173962},
    {"resnet50", 23520842}, {"densenet121", 6956426}};

TEST(ArchitecturesTest, ParameterCountsMatchTorchvisionAtWidthOne) {
  ASSERT_EQ(ArchitectureNames().size(), kTorchParamCounts.size());
  for (const std::string& arch : ArchitectureNames()) {
    auto model = BuildModel(arch, InputSpec{});
    ASSERT_TRUE(model.ok()) << arch << ": " << model.status().ToString();
    EXPECT_EQ((*model)->ParameterCount(), kTorchParamCounts.at(arch)) << arch;
  }
}

// "<arch> <name> <d0,d1,...>" lines written by generate.py.
std::map<std::string, std::vector<std::pair<std::string, Shape>>> ReadStateDicts() {
  std::ifstream in(std::string(XWIRES_SOURCE_DIR) +
                   "/tests/fixtures/torch_models/state_dicts.txt");
  std::map<std::string, std::vector<std::pair<std::string, Shape>>> out;
  std::string arch, name, dims;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    dims.clear();
    ls >> arch >> name >> dims;
    Shape s;
    std::istringstream ds(dims);
    std::string d;
    while (std::getline(ds, d, ',')) s.push_back(std::stoll(d));
    out[arch].emplace_back(name, s);
  }
  return out;
}

TEST(ArchitecturesTest, StateDictMatchesPyTorchNamesOrderAndShapes) {
  const auto torch = ReadStateDicts();
  ASSERT_EQ(torch.size(), ArchitectureNames().size());
  for (const std::string& arch : ArchitectureNames()) {
    auto model = BuildModel(arch, InputSpec{});
    ASSERT_TRUE(model.ok()) << arch;
    const auto& expected = torch.at(arch);
    const auto& state = (*model)->state();
    ASSERT_EQ(state.size(), expected.size()) << arch;
    for (size_t i = 0; i < state.size(); ++i) {
      EXPECT_EQ(state[i].info.name, expected[i].first) << arch << " entry " << i;
      EXPECT_EQ(ShapeToString(state[i].value->shape()), ShapeToString(expected[i].second))
          << arch << " " << expected[i].first;
      EXPECT_EQ(state[i].is_int64, expected[i].first.find("num_batches_tracked") !=
                                       std::string::npos);
    }
  }
}

TEST(ArchitecturesTest, HeadAndFamilyAreStamped) {
  auto model = BuildModel("resnet20", InputSpec{}, ArchOptions{0.25});
  ASSERT_TRUE(model.ok());
  int heads = 0;
  for (const auto& e : (*model)->state()) {
    EXPECT_EQ(e.info.family, ArchFamily::kResNet);
    if (e.info.is_classifier_head) {
      ++heads;
      EXPECT_TRUE(e.info.name == "fc.weight" || e.info.name == "fc.bias") << e.info.name;
    }
  }
  EXPECT_EQ(heads, 2);
}

TEST(ArchitecturesTest, WidthAndDepthScale) {
  // resnet20 at depth 8 (n = 1) and width 0.5: channels 8/16/32.
  auto model = BuildModel("resnet20", InputSpec{}, ArchOptions{0.5, 8});
  ASSERT_TRUE(model.ok());
  EXPECT_EQ((*model)->state().front().value->shape(), (Shape{8, 3, 3, 3}));
  EXPECT_EQ((*model)->state().back().info.name, "fc.bias");
  int blocks = 0;
  for (const auto& e : (*model)->state()) blocks += e.info.name.find(".conv1.weight") != std::string::npos;
  EXPECT_EQ(blocks, 3);
  // mlp with three hidden layers of round(512 * 0.25) = 128 units on MNIST-like input.
  auto mlp = BuildModel("mlp", InputSpec{1, 28, 28, 10}, ArchOptions{0.25, 3});
  ASSERT_TRUE(mlp.ok());
  EXPECT_EQ((*mlp)->ParameterCount(), 784 * 128 + 128 + 2 * (128 * 128 + 128) + 128 * 10 + 10);
}

TEST(ArchitecturesTest, BadRequestsNameTheProblem) {
  auto unknown = BuildModel("resnet21", InputSpec{});
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("resnet21"), std::string::npos);
  EXPECT_NE(unknown.status().message().find("densenet121"), std::string::npos);
  EXPECT_FALSE(BuildModel("mlp", InputSpec{}, ArchOptions{0.0}).ok());
  EXPECT_FALSE(BuildModel("vgg11", InputSpec{}, ArchOptions{1.0, 0, 1.0}).ok());
  auto depth = BuildModel("resnet20", InputSpec{}, ArchOptions{1.0, 21});
  ASSERT_FALSE(depth.ok());
  EXPECT_NE(depth.status().message().find("depth 21"), std::string::npos);
  EXPECT_FALSE(BuildModel("resnet18", InputSpec{}, ArchOptions{1.0, 34}).ok());
  auto small = BuildModel("vgg16", InputSpec{1, 28, 28, 10});
  ASSERT_FALSE(small.ok());
  EXPECT_NE(small.status().message().find("28x28"), std::string::npos);
}

TEST(ArchitecturesTest, ScaledChannelsRoundsHalfToEvenLikePython) {
  EXPECT_EQ(ScaledChannels(64, 0.25), 16);
  EXPECT_EQ(ScaledChannels(5, 0.5), 2);   // round(2.5) == 2 in Python
  EXPECT_EQ(ScaledChannels(7, 0.5), 4);   // round(3.5) == 4
  EXPECT_EQ(ScaledChannels(16, 0.01), 1);
}

}  // namespace
}  // namespace xw
