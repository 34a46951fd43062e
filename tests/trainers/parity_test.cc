// The torch profile against PyTorch 1.13 on reference dumps written by
// tests/fixtures/torch_models/generate.py (same weights, same images):
//  - logits in eval and train mode within 1e-4 relative, every architecture;
//  - weights (and BN running statistics) after several Adam steps of the real
//    training loop, with eps = 0.5 and eps = 1e-8, within 1e-3 relative;
//    num_batches_tracked exactly; per-epoch last-batch loss within 1e-4.
// "Relative" is per tensor: max |ours - torch| / max |torch|.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <ostream>
#include <string>

#include "xwires/dataset/store/tensor_file.h"
#include "xwires/trainers/architectures.h"
#include "xwires/trainers/profile.h"
#include "xwires/trainers/trainer.h"

namespace xw {
namespace {

struct Case {
  std::string arch;
  double width;
  int64_t epochs = 0, batch = 0;  // training cases only
  double lr = 0;
  std::vector<std::string> eps = {};  // as Python's "%g" spells them
};

// Test names show the architecture, not the parameter's bytes.
void PrintTo(const Case& c, std::ostream* os) { *os << c.arch; }

// Keep in sync with CASES in generate.py.
const std::vector<Case> kCases = {
    {"simple_cnn", 0.25, 3, 4, 0.05, {"0.5", "1e-08"}},
    {"resnet20", 0.25, 2, 4, 0.05, {"0.5"}},
    {"mlp", 1.0 / 16, 3, 4, 0.05, {"0.5", "1e-08"}},
    {"vgg11", 1.0 / 64},
    {"vgg16", 1.0 / 64},
    {"resnet18", 1.0 / 32},
    {"resnet50", 1.0 / 32},
    {"densenet121", 1.0 / 16},
};

struct Dump {
  Tensor x;
  std::vector<int32_t> labels;
  std::map<std::string, NamedTensors> states;  // "init", "after_eps0.5", ...
  std::map<std::string, Tensor> plain;         // logits_eval, losses_eps0.5, ...
};

Dump LoadDump(const std::string& arch) {
  const std::string path =
      std::string(XWIRES_SOURCE_DIR) + "/tests/fixtures/torch_models/" + arch + ".h5";
  auto file = ReadTensorFile(path);
  EXPECT_TRUE(file.ok()) << file.status().ToString();
  Dump d;
  if (!file.ok()) return d;
  for (NamedTensor& t : *file) {
    const size_t colon = t.name.find(':');
    if (colon != std::string::npos) {
      d.states[t.name.substr(0, colon)].push_back(
          {t.name.substr(colon + 1), std::move(t.value), t.is_int64});
    } else if (t.name == "x") {
      d.x = std::move(t.value);
    } else if (t.name == "labels") {
      for (int64_t i = 0; i < t.value.size(); ++i) d.labels.push_back(static_cast<int32_t>(t.value[i]));
    } else {
      d.plain[t.name] = std::move(t.value);
    }
  }
  return d;
}

double RelErr(const Tensor& ours, const Tensor& ref) {
  double num = 0, den = 0;
  for (int64_t i = 0; i < ref.size(); ++i) {
    num = std::max(num, static_cast<double>(std::fabs(ours[i] - ref[i])));
    den = std::max(den, static_cast<double>(std::fabs(ref[i])));
  }
  if (std::isnan(num)) return INFINITY;
  return den > 0 ? num / den : num;
}

class ParityTest : public ::testing::TestWithParam<Case> {};
class TrainingParityTest : public ::testing::TestWithParam<Case> {};

std::vector<Case> TrainingCases() {
  std::vector<Case> out;
  for (const Case& c : kCases) {
    if (!c.eps.empty()) out.push_back(c);
  }
  return out;
}

TEST_P(ParityTest, LogitsMatchPyTorch) {
  const Case& c = GetParam();
  Dump d = LoadDump(c.arch);
  ASSERT_EQ(d.x.rank(), 4);
  auto profile = LoadProfile("torch");
  ASSERT_TRUE(profile.ok()) << profile.status().ToString();
  InputSpec in{d.x.dim(1), d.x.dim(2), d.x.dim(3), 10};
  // The dumps use dropout p = 0 (torch's dropout masks come from its own RNG).
  auto model = BuildModel(c.arch, in, ArchOptions{c.width, 0, 0.0});
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  ASSERT_TRUE((*model)->LoadState(d.states["init"], "init").ok());

  auto eval = Predict(**model, *profile, d.x);
  ASSERT_TRUE(eval.ok()) << eval.status().ToString();
  ASSERT_EQ(eval->shape(), d.plain["logits_eval"].shape());
  EXPECT_LE(RelErr(*eval, d.plain["logits_eval"]), 1e-4) << c.arch << " eval logits";

  RunContext ctx = RunContext::ForProfile(*profile);
  ctx.training = true;
  auto train = (*model)->Forward(d.x, ctx);
  ASSERT_TRUE(train.ok()) << train.status().ToString();
  EXPECT_LE(RelErr(**train, d.plain["logits_train"]), 1e-4) << c.arch << " train logits";
}

TEST_P(TrainingParityTest, AdamTrainingMatchesPyTorch) {
  const Case& c = GetParam();
  Dump d = LoadDump(c.arch);
  auto profile = LoadProfile("torch");
  ASSERT_TRUE(profile.ok());
  DataSplits data;
  data.name = "fixture";
  data.train.images = d.x;
  data.train.labels = d.labels;
  data.train.num_classes = 10;
  data.test = data.train;
  for (const std::string& eps : c.eps) {
    SCOPED_TRACE(c.arch + " eps " + eps);
    TrainOptions o;
    o.arch = c.arch;
    o.arch_options.width = c.width;
    o.epochs = c.epochs;
    o.batch_size = c.batch;
    o.adam.lr = c.lr;
    o.adam.eps = std::stod(eps);
    o.init_weights = &d.states["init"];
    o.init_weights_source = "init";
    auto r = TrainProfile(*profile, data, o);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->record.status, "ok");
    const NamedTensors& after = d.states["after_eps" + eps];
    ASSERT_EQ(after.size(), r->record.weights.size());
    std::map<std::string, const Tensor*> ours;
    for (const auto& t : r->record.weights) ours[t.name] = &t.value;
    for (const NamedTensor& ref : after) {
      ASSERT_TRUE(ours.count(ref.name)) << ref.name;
      if (ref.is_int64) {
        EXPECT_TRUE(ours[ref.name]->BitwiseEqual(ref.value)) << ref.name;
      } else {
        EXPECT_LE(RelErr(*ours[ref.name], ref.value), 1e-3) << ref.name;
      }
    }
    const Tensor& losses = d.plain["losses_eps" + eps];
    const int64_t steps_per_epoch = (d.x.dim(0) + c.batch - 1) / c.batch;
    ASSERT_EQ(static_cast<int64_t>(r->record.curves.size()), c.epochs);
    for (int64_t e = 0; e < c.epochs; ++e) {
      const double ref = losses[(e + 1) * steps_per_epoch - 1];
      EXPECT_NEAR(r->record.curves[e].train_loss_last, ref, 1e-4 * std::fabs(ref))
          << "epoch " << e + 1;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Architectures, ParityTest, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return info.param.arch; });
INSTANTIATE_TEST_SUITE_P(Architectures, TrainingParityTest, ::testing::ValuesIn(TrainingCases()),
                         [](const auto& info) { return info.param.arch; });

}  // namespace
}  // namespace xw
