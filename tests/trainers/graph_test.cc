// Backward passes of whole models against central finite differences: the
// analytic gradient of L = sum(logits * r) with respect to sampled elements of
// sampled parameters, in training mode (batch statistics, dropout with a fixed
// step). Covers every module kind: conv, linear, batch norm, ReLU, max/avg and
// global pooling, dropout, flatten, residual blocks with and without
// downsample, bottlenecks and dense blocks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <ostream>
#include <string>
#include <vector>

#include "grad_check.h"
#include "xwires/core/activation.h"
#include "xwires/trainers/architectures.h"
#include "xwires/trainers/layers.h"
#include "xwires/trainers/profile.h"

namespace xw {
namespace {

struct GradCase {
  std::string arch;
  double width;
  int depth;
  int64_t side;  // image height = width
};

void PrintTo(const GradCase& c, std::ostream* os) { *os << c.arch; }

class GraphGradientTest : public ::testing::TestWithParam<GradCase> {};

TEST_P(GraphGradientTest, BackwardMatchesFiniteDifferences) {
  const GradCase& c = GetParam();
  auto profile = LoadProfile("reference");
  ASSERT_TRUE(profile.ok()) << profile.status().ToString();
  auto built = BuildModel(c.arch, InputSpec{3, c.side, c.side, 10},
                          ArchOptions{c.width, c.depth, 0.25});
  ASSERT_TRUE(built.ok()) << built.status().ToString();
  Model& model = **built;
  ASSERT_TRUE(model.Initialize(*profile, 11).ok());

  const Tensor x = gradcheck::RandomTensor({8, 3, c.side, c.side}, 1, 0.0f, 1.0f);
  const Tensor r = gradcheck::RandomTensor({8, 10}, 2);
  RunContext ctx = RunContext::ForProfile(*profile);
  ctx.training = true;
  ctx.step = 3;
  auto loss = [&] {
    auto logits = model.Forward(x, ctx);
    EXPECT_TRUE(logits.ok());
    return gradcheck::WeightedSum(**logits, r);
  };
  ASSERT_TRUE(model.Forward(x, ctx).ok());
  Tensor dlogits = r;
  ASSERT_TRUE(model.Backward(dlogits, ctx).ok());
  // Snapshot the analytic gradients: every loss() call reruns Forward only,
  // but keep them independent of later calls anyway.
  std::vector<Tensor> grads;
  for (const Tensor* g : model.gradients()) grads.push_back(*g);

  // Tensors of the last stage and the head. Tiny networks with batch norm
  // over few values are chaotic far from the output (gradients of the first
  // layers reach hundreds and float32 central differences stop converging),
  // so the first layers' gradients are covered by the PyTorch parity tests
  // instead; these picks still cross every block type's backward wiring
  // (residual add and downsample, bottleneck, dense concat/split, dropout).
  const auto& params = model.parameters();
  const size_t n = params.size();
  const std::vector<size_t> picks = {n / 2, n / 2 + 1, 3 * n / 4, 3 * n / 4 + 1, n - 3, n - 1};
  // A perturbation that moves a ReLU input across zero (or a max-pool
  // winner) mixes two slopes, so a few isolated mismatches are expected; a
  // wiring error (a lost shortcut or concat gradient, a wrong slice) breaks
  // whole tensors. Allow at most one mismatch in eight checks.
  constexpr double kEps = 2e-4, kRtol = 5e-2, kAtol = 1e-2;
  int checks = 0, failures = 0;
  std::string report;
  for (size_t i : picks) {
    std::string name;
    for (const auto& e : model.state()) {
      if (e.value == params[i]) name = e.info.name;
    }
    for (int64_t k : gradcheck::CheckedIndices(params[i]->size(), 6)) {
      const double num = gradcheck::NumericalDerivative(params[i], k, loss, kEps);
      const double ana = grads[i][k];
      ++checks;
      if (!(std::fabs(num - ana) <= kAtol + kRtol * std::max(std::fabs(num), std::fabs(ana)))) {
        ++failures;
        report += "\n  " + name + "[" + std::to_string(k) + "]: analytic " +
                  std::to_string(ana) + " numeric " + std::to_string(num);
      }
    }
  }
  EXPECT_LE(failures * 8, checks) << c.arch << ": " << failures << " of " << checks
                                  << " gradient checks failed" << report;
}

INSTANTIATE_TEST_SUITE_P(
    Architectures, GraphGradientTest,
    ::testing::Values(GradCase{"mlp", 1.0 / 32, 2, 8}, GradCase{"simple_cnn", 0.125, 0, 8},
                      GradCase{"vgg11", 1.0 / 64, 0, 32}, GradCase{"resnet20", 0.25, 8, 8},
                      GradCase{"resnet50", 1.0 / 32, 0, 16},
                      GradCase{"densenet121", 1.0 / 32, 0, 8}),
    [](const auto& info) { return info.param.arch; });


// Records the need_dx each Backward call receives.
class Probe : public Module {
 public:
  explicit Probe(std::vector<bool>* log) : log_(log) {}
  Result<const Tensor*> Forward(const Tensor& x, const RunContext&) override { return &x; }
  Result<Tensor*> Backward(Tensor& dy, const RunContext&, bool need_dx) override {
    log_->push_back(need_dx);
    return &dy;
  }
  bool HasParameters() const override { return false; }

 private:
  std::vector<bool>* log_;
};

// The input gradient of a module is computed only when something before it
// has parameters (or the caller wants it): [Flatten, probe, Linear, probe,
// ReLU, probe] asks the first probe for none, the later ones for theirs.
TEST(SequentialTest, InputGradientsOnlyWhereAParameterPrecedes) {
  std::vector<bool> log;
  Sequential net;
  net.Add(std::make_unique<Flatten>());
  net.Add(std::make_unique<Probe>(&log));
  net.Add(std::make_unique<Linear>(4, 3));
  net.Add(std::make_unique<Probe>(&log));
  net.Add(std::make_unique<ReLU>());
  net.Add(std::make_unique<Probe>(&log));
  EXPECT_TRUE(net.HasParameters());
  RunContext ctx;
  ctx.training = true;
  Tensor x({2, 4}, 0.5f);
  ASSERT_TRUE(net.Forward(x, ctx).ok());
  Tensor dy({2, 3}, 1.0f);
  auto r = net.Backward(dy, ctx, /*need_dx=*/false);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, nullptr);
  // Probes are visited last to first; the one before the Linear is never
  // reached, since nothing before it has parameters.
  EXPECT_EQ(log, (std::vector<bool>{true, true}));
  log.clear();
  ASSERT_TRUE(net.Backward(dy, ctx, /*need_dx=*/true).ok());
  EXPECT_EQ(log, (std::vector<bool>{true, true, true}));
  Sequential free;
  free.Add(std::make_unique<Flatten>());
  free.Add(std::make_unique<ReLU>());
  EXPECT_FALSE(free.HasParameters());
}

// max(a + b, 0), written out (tensor_ops.h's Flatten hides the module here).
Tensor AddRelu(const Tensor& a, const Tensor& b) {
  Tensor y(a.shape());
  for (int64_t i = 0; i < a.size(); ++i) {
    const float v = a[i] + b[i];
    y[i] = v < 0.0f ? 0.0f : v;
  }
  return y;
}

// Sequential fuses BN -> ReLU and a residual tail BN -> add -> ReLU in
// training; outputs, running statistics and gradients must equal those of
// the same modules run one by one (twins built alike). Outside training
// nothing fuses, and ForwardFused refuses.
TEST(SequentialTest, FusedBatchNormTailsEqualSeparateModules) {
  RunContext ctx;
  ctx.training = true;
  const Tensor x = gradcheck::RandomTensor({3, 5, 4, 4}, 41, -2.0f, 3.0f);
  const Tensor res = gradcheck::RandomTensor(x.shape(), 42, -1.0f, 1.0f);
  const Tensor dy = gradcheck::RandomTensor(x.shape(), 43);
  auto make = [] {
    auto net = std::make_unique<Sequential>();
    net->Add("bn1", std::make_unique<BatchNorm2d>(5));
    net->Add("", std::make_unique<ReLU>());
    net->Add("bn2", std::make_unique<BatchNorm2d>(5));
    return net;
  };
  auto fused = make(), twin = make();
  std::vector<StateEntry> fs, ts;
  fused->Register("", &fs);
  twin->Register("", &ts);
  for (size_t i = 0; i < fs.size(); ++i) {  // distinct affine parameters
    if (fs[i].grad == nullptr) continue;
    *fs[i].value =
        gradcheck::RandomTensor(fs[i].value->shape(), 50 + i, 0.5f, 1.5f);
    *ts[i].value = *fs[i].value;
  }
  Tensor out;
  auto r = fused->ForwardAddRelu(x, ctx, res, &out);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, &out);
  // The twin, module by module, then the separate add and ReLU.
  const Tensor* h = &x;
  for (size_t i = 0; i < twin->size(); ++i)
    h = *twin->child(i).second->Forward(*h, ctx);
  Tensor want = AddRelu(*h, res);
  EXPECT_TRUE(out.BitwiseEqual(want));
  for (size_t i = 0; i < fs.size(); ++i) {
    EXPECT_TRUE(fs[i].value->BitwiseEqual(*ts[i].value)) << fs[i].info.name;
  }
  // Backward from the same masked gradient: every gradient equal.
  Tensor g1 = dy, g2 = dy;
  ASSERT_TRUE(ReluBackward(out, g1, &g1).ok());
  ASSERT_TRUE(ReluBackward(want, g2, &g2).ok());
  auto d1 = fused->Backward(g1, ctx, true);
  auto d2 = twin->Backward(g2, ctx, true);
  ASSERT_TRUE(d1.ok() && d2.ok());
  EXPECT_TRUE((*d1)->BitwiseEqual(**d2));
  for (size_t i = 0; i < fs.size(); ++i) {
    if (fs[i].grad) {
      EXPECT_TRUE(fs[i].grad->BitwiseEqual(*ts[i].grad)) << fs[i].info.name;
    }
  }
  // Eval mode takes the unfused path; a bad residual is named (last: bn1
  // has run by then, as any module before a failing one has).
  RunContext eval;
  auto* bn = dynamic_cast<BatchNorm2d*>(fused->child(0).second.get());
  ASSERT_NE(bn, nullptr);
  EXPECT_FALSE(bn->ForwardFused(x, eval, {nullptr, true}, &out).ok());
  auto e1 = fused->ForwardAddRelu(x, eval, res, &out);
  ASSERT_TRUE(e1.ok());
  h = &x;
  for (size_t i = 0; i < twin->size(); ++i)
    h = *twin->child(i).second->Forward(*h, eval);
  EXPECT_TRUE(out.BitwiseEqual(AddRelu(*h, res)));
  const Tensor wrong({3, 5, 4, 3});
  auto bad = fused->ForwardAddRelu(x, ctx, wrong, &out);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().ToString().find("bn2"), std::string::npos)
      << bad.status().ToString();
  EXPECT_NE(bad.status().ToString().find("residual"), std::string::npos);
}

}  // namespace
}  // namespace xw
