// Adam: bitwise parity with PyTorch 1.13 (fixtures from
// tests/fixtures/make_torch_optimizer_fixtures.py), the Keras formula spelled
// out in float32, the eps-hat inflation between the two, determinism.
#include "xwires/trainers/optimizer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "xwires/core/parallel.h"
#include "xwires/trainers/profile.h"

namespace xw {
namespace {

float FromBits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

Tensor TensorFromBits(const Shape& shape, const nlohmann::json& bits) {
  Tensor t(shape);
  EXPECT_EQ(static_cast<int64_t>(bits.size()), t.size());
  for (int64_t i = 0; i < t.size(); ++i) t[i] = FromBits(bits[i].get<uint32_t>());
  return t;
}

// Largest |a-b|/max(|b|, 1e-30) over the tensor; counts bitwise mismatches.
double MaxRel(const Tensor& a, const Tensor& b, int* mismatches) {
  double worst = 0;
  for (int64_t i = 0; i < a.size(); ++i) {
    if (std::memcmp(a.data() + i, b.data() + i, sizeof(float)) != 0) ++*mismatches;
    const double d = std::fabs(double(a[i]) - double(b[i]));
    worst = std::max(worst, d / std::max(std::fabs(double(b[i])), 1e-30));
  }
  return worst;
}

class TorchFixtureTest : public ::testing::TestWithParam<std::string> {};

TEST_P(TorchFixtureTest, MatchesPyTorch113Bitwise) {
  const std::string path =
      std::string(XWIRES_SOURCE_DIR) + "/tests/fixtures/torch/" + GetParam() + ".json";
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  const auto c = nlohmann::json::parse(in);
  Profile profile = *LoadProfile("torch");
  profile.adam.amsgrad = c["amsgrad"].get<bool>();
  profile.adam.weight_decay =
      c["optimizer"] == "AdamW" ? WeightDecayMode::kDecoupled : WeightDecayMode::kL2InGradient;
  AdamOptions o;
  o.lr = c["lr"];
  o.beta1 = c["beta1"];
  o.beta2 = c["beta2"];
  o.eps = c["eps"];
  o.weight_decay = c["weight_decay"];
  ASSERT_TRUE(ValidateAdamOptions(o).ok());
  Adam adam(o, profile);

  std::vector<Shape> shapes;
  std::vector<Tensor> params;
  for (size_t i = 0; i < c["shapes"].size(); ++i) {
    shapes.push_back(c["shapes"][i].get<Shape>());
    params.push_back(TensorFromBits(shapes[i], c["initial"][i]));
  }
  double worst = 0;
  int mismatches = 0;
  for (size_t t = 0; t < c["steps"].size(); ++t) {
    const auto& s = c["steps"][t];
    std::vector<Tensor> grads;
    std::vector<Tensor*> pp;
    std::vector<const Tensor*> gp;
    for (size_t i = 0; i < shapes.size(); ++i)
      grads.push_back(TensorFromBits(shapes[i], s["grads"][i]));
    for (size_t i = 0; i < shapes.size(); ++i) {
      pp.push_back(&params[i]);
      gp.push_back(&grads[i]);
    }
    ASSERT_TRUE(adam.Step(pp, gp).ok());
    for (size_t i = 0; i < shapes.size(); ++i) {
      const AdamSlot& slot = adam.slots()[i];
      worst = std::max(worst,
                       MaxRel(params[i], TensorFromBits(shapes[i], s["params"][i]), &mismatches));
      worst = std::max(worst, MaxRel(slot.m, TensorFromBits(shapes[i], s["m"][i]), &mismatches));
      worst = std::max(worst, MaxRel(slot.v, TensorFromBits(shapes[i], s["v"][i]), &mismatches));
      if (profile.adam.amsgrad) {
        worst = std::max(worst,
                         MaxRel(slot.vmax, TensorFromBits(shapes[i], s["vmax"][i]), &mismatches));
      }
    }
  }
  EXPECT_EQ(adam.step(), static_cast<int64_t>(c["steps"].size()));
  EXPECT_LE(worst, 1e-6) << GetParam();
  // The profile reproduces ATen's CPU kernels (fused add(alpha)/addcmul), so
  // the trajectory is bit-for-bit PyTorch's.
  EXPECT_EQ(mismatches, 0) << GetParam() << ": max relative error " << worst;
}

INSTANTIATE_TEST_SUITE_P(Fixtures, TorchFixtureTest,
                         ::testing::Values("adam_default", "adam_eps05", "adam_weight_decay",
                                           "adam_amsgrad", "adamw_decoupled", "adam_tiny_grads"));

TEST(AdamTest, UnfusedTorchStaysWithinIssueTolerance) {
  // The reference profile rounds every product; it is still PyTorch's Adam.
  const std::string path = std::string(XWIRES_SOURCE_DIR) + "/tests/fixtures/torch/adam_eps05.json";
  std::ifstream in(path);
  const auto c = nlohmann::json::parse(in);
  AdamOptions o{c["lr"], c["beta1"], c["beta2"], c["eps"], c["weight_decay"]};
  Adam adam(o, *LoadProfile("reference"));
  Shape shape = c["shapes"][0].get<Shape>();
  Tensor p = TensorFromBits(shape, c["initial"][0]);
  for (const auto& s : c["steps"]) {
    Tensor g = TensorFromBits(shape, s["grads"][0]);
    ASSERT_TRUE(adam.Step({&p}, {&g}).ok());
  }
  int mismatches = 0;
  EXPECT_LE(MaxRel(p, TensorFromBits(shape, c["steps"].back()["params"][0]), &mismatches), 1e-6);
}

// Keras 3 / tf-keras Adam.update_step (+ _apply_weight_decay) spelled out in
// float32, one operation per line, independently of the implementation.
struct KerasState {
  std::vector<float> p, m, v;
};
KerasState KerasByHand(std::vector<float> p, const std::vector<std::vector<float>>& grads,
                       double lr_d, double eps_d, double wd_d) {
  const float lr = static_cast<float>(lr_d);    // learning_rate variable (float32)
  const float eps = static_cast<float>(eps_d);  // python float -> float32
  const float wd = static_cast<float>(wd_d);
  const float beta_1 = 0.9f, beta_2 = 0.999f;                // cast(self.beta_1, float32)
  const float one_minus_b1 = static_cast<float>(1.0 - 0.9);  // python 1 - self.beta_1
  const float one_minus_b2 = static_cast<float>(1.0 - 0.999);
  std::vector<float> m(p.size(), 0.0f), v(p.size(), 0.0f);
  for (size_t t = 0; t < grads.size(); ++t) {
    const float local_step = static_cast<float>(t + 1);
    const float beta_1_power = std::pow(beta_1, local_step);
    const float beta_2_power = std::pow(beta_2, local_step);
    const float sqrt_bc2 = std::sqrt(1.0f - beta_2_power);
    const float lr_sqrt = lr * sqrt_bc2;
    const float alpha = lr_sqrt / (1.0f - beta_1_power);
    for (size_t i = 0; i < p.size(); ++i) {
      const float decay = (p[i] * wd) * lr;  // variable * wd * lr
      p[i] = p[i] - decay;
      const float g = grads[t][i];
      const float dm = (g - m[i]) * one_minus_b1;
      m[i] = m[i] + dm;
      const float g2 = g * g;
      const float dv = (g2 - v[i]) * one_minus_b2;
      v[i] = v[i] + dv;
      const float num = m[i] * alpha;
      const float den = std::sqrt(v[i]) + eps;
      p[i] = p[i] - num / den;
    }
  }
  return {p, m, v};
}

TEST(AdamTest, TfProfileMatchesKerasFormulaExactly) {
  // 64 elements over 6 steps with magnitudes from 1e-4 to 4, so the ulp-level
  // differences between algebraically equal forms (m*b1 + g*(1-b1) versus
  // m + (g-m)*(1-b1)) show up.
  constexpr int kN = 64, kSteps = 6;
  std::vector<std::vector<float>> grads(kSteps, std::vector<float>(kN));
  std::vector<float> p0(kN);
  for (int i = 0; i < kN; ++i) {
    p0[i] = std::sin(1.3f * i) * std::pow(10.0f, static_cast<float>(i % 5) - 3.0f);
    for (int t = 0; t < kSteps; ++t) {
      grads[t][i] = std::cos(0.7f * i + 2.1f * t) *
                    std::pow(10.0f, static_cast<float>((i + t) % 5) - 4.0f) * 4;
    }
  }
  const Profile tf = *LoadProfile("tf");
  for (double eps : {1e-7, 0.5}) {
    for (double wd : {0.0, 0.01}) {
      AdamOptions o;
      o.lr = 0.05;
      o.eps = eps;
      o.weight_decay = wd;
      Adam adam(o, tf);
      Tensor p({kN});
      for (int i = 0; i < kN; ++i) p[i] = p0[i];
      for (const auto& g : grads) {
        Tensor gt({kN});
        for (int i = 0; i < kN; ++i) gt[i] = g[i];
        ASSERT_TRUE(adam.Step({&p}, {&gt}).ok());
      }
      const KerasState want = KerasByHand(p0, grads, o.lr, eps, wd);
      for (int i = 0; i < kN; ++i) {
        EXPECT_EQ(p[i], want.p[i]) << "eps " << eps << " wd " << wd << " element " << i;
        EXPECT_EQ(adam.slots()[0].m[i], want.m[i]) << "element " << i;
        EXPECT_EQ(adam.slots()[0].v[i], want.v[i]) << "element " << i;
      }
    }
  }
}

TEST(AdamTest, KerasFirstStepMatchesHandComputedValue) {
  // t = 1, g = 0.5, m0 = v0 = 0, lr = 0.1: m = (1-b1)*g, v = (1-b2)*g*g,
  // alpha = lr*sqrt(1-b2)/(1-b1), update = m*alpha/(sqrt(v)+eps), evaluated
  // by hand in double (Python) from the float32 constants Keras uses:
  // b1 = 0.8999999761581421, b2 = 0.9990000128746033 (cast(beta, float32)),
  // 1-b1 = 0.10000000149011612, 1-b2 = 0.0010000000474974513, lr = 0.1f.
  // eps = 0.5: -0.0030653226288629037 (eps-hat: the step is ~3% of lr);
  // eps = 1e-7: -0.09999870058411524. With exact betas the values would be
  // -0.0030653430 and -0.0999993675: the float32 power 0.999f^1 shifts
  // sqrt(1-b2^t) by 6.4e-6 relative, which is what the tf profile models.
  const std::pair<double, double> cases[] = {{0.5, -0.0030653226288629037},
                                             {1e-7, -0.09999870058411524}};
  for (const auto& [eps, want] : cases) {
    AdamOptions o;
    o.lr = 0.1;
    o.eps = eps;
    Adam adam(o, *LoadProfile("tf"));
    Tensor p({1}), g({1}, 0.5f);
    ASSERT_TRUE(adam.Step({&p}, {&g}).ok());
    EXPECT_NEAR(p[0], want, 1e-6 * std::fabs(want)) << "eps " << eps;
  }
}

// The per-step update of a single constant-gradient parameter under a
// profile, for steps 1..steps.
std::vector<double> Updates(const Profile& profile, double eps, int steps) {
  AdamOptions o;
  o.lr = 1.0;
  o.eps = eps;
  Adam adam(o, profile);
  Tensor p({1}), g({1}, 1e-3f);
  std::vector<double> out;
  for (int t = 0; t < steps; ++t) {
    const double before = p[0];
    EXPECT_TRUE(adam.Step({&p}, {&g}).ok());
    out.push_back(before - p[0]);
  }
  return out;
}

TEST(AdamTest, EpsHatInflationEmergesFromVariants) {
  // With eps >> sqrt(v), torch steps lr/bc1 * m/eps and Keras
  // lr*sqrt(bc2)/bc1 * m/eps: Keras acts like torch with eps/sqrt(1-b2^t).
  // Reference notes table: 31.6 at t=1, 10.0 at t=10, 3.24 at t=100.
  Profile torch = *LoadProfile("torch"), tf = *LoadProfile("tf");
  tf.adam.weight_decay = torch.adam.weight_decay;  // no decay either way
  const auto a = Updates(torch, 1e3, 100), b = Updates(tf, 1e3, 100);
  const std::pair<int, double> table[] = {{1, 31.6228}, {10, 10.0225}, {100, 3.2409}};
  for (const auto& [t, factor] : table) {
    EXPECT_NEAR(a[t - 1] / b[t - 1], factor, 1e-3 * factor) << "t = " << t;
  }
  // With the default tiny eps the variants agree to ~1e-3 at t = 1.
  const auto c = Updates(torch, 1e-8, 1), d = Updates(tf, 1e-8, 1);
  EXPECT_NEAR(c[0] / d[0], 1.0, 1e-3);
}

TEST(AdamTest, BiasCorrectionPrecisionKnob) {
  AdamOptions o;
  o.lr = 0.05;
  Profile::AdamNumerics n;
  n.variant = AdamVariant::kKeras;
  n.bias_correction_double = false;
  const AdamScalars f = ComputeAdamScalars(o, n, 7);
  const float b1p = std::pow(0.9f, 7.0f), b2p = std::pow(0.999f, 7.0f);
  EXPECT_EQ(f.alpha, (0.05f * std::sqrt(1.0f - b2p)) / (1.0f - b1p));
  n.bias_correction_double = true;
  const AdamScalars d = ComputeAdamScalars(o, n, 7);
  EXPECT_EQ(d.alpha, static_cast<float>(0.05 * std::sqrt(1 - std::pow(0.999, 7.0)) /
                                        (1 - std::pow(0.9, 7.0))));
  n.variant = AdamVariant::kTorch;
  const AdamScalars t = ComputeAdamScalars(o, n, 7);
  EXPECT_EQ(t.neg_step_size, static_cast<float>(-(0.05 / (1 - std::pow(0.9, 7.0)))));
  EXPECT_EQ(t.bc2_sqrt, static_cast<float>(std::sqrt(1 - std::pow(0.999, 7.0))));
}

// Runs 3 steps on a parameter large enough for many ParallelFor chunks.
Tensor RunThreads(const Profile& profile, int threads) {
  ThreadScope scope(threads);
  AdamOptions o;
  o.lr = 0.01;
  o.eps = 0.5;
  o.weight_decay = 0.01;
  Adam adam(o, profile);
  Tensor p({100003}), g({100003});
  for (int64_t i = 0; i < p.size(); ++i) p[i] = std::sin(0.001f * i);
  for (int t = 0; t < 3; ++t) {
    for (int64_t i = 0; i < g.size(); ++i) g[i] = std::cos(0.37f * i + t) * 1e-2f;
    EXPECT_TRUE(adam.Step({&p}, {&g}).ok());
  }
  return p;
}

TEST(AdamTest, OneAndTwoThreadsAreBitwiseIdentical) {
  for (const char* name : {"torch", "tf", "reference"}) {
    Profile profile = *LoadProfile(name);
    profile.adam.amsgrad = true;
    EXPECT_TRUE(RunThreads(profile, 1).BitwiseEqual(RunThreads(profile, 2))) << name;
  }
}

TEST(AdamTest, MismatchedShapesAreRejectedWithoutChanges) {
  Adam adam(AdamOptions{}, *LoadProfile("torch"));
  Tensor p({3}, 1.0f), g({4}, 1.0f);
  Status s = adam.Step({&p}, {&g});
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.message().find("[3]"), std::string::npos) << s.message();
  EXPECT_EQ(p[0], 1.0f);
  EXPECT_EQ(adam.step(), 0);
  Tensor g3({3}, 1.0f);
  ASSERT_TRUE(adam.Step({&p}, {&g3}).ok());
  Tensor q({5}), g5({5});
  EXPECT_FALSE(adam.Step({&q}, {&g5}).ok());      // state is for [3]
  EXPECT_FALSE(adam.Step({&p, &p}, {&g3}).ok());  // count mismatch
  EXPECT_EQ(adam.step(), 1);
}

TEST(AdamTest, RestoreContinuesBitwise) {
  Profile profile = *LoadProfile("torch");
  profile.adam.amsgrad = true;
  AdamOptions o;
  o.eps = 0.5;
  Adam a(o, profile);
  Tensor p({7}, 0.5f), g({7});
  auto step = [&](Adam& opt, Tensor& param, int t) {
    for (int i = 0; i < 7; ++i) g[i] = std::sin(1.0f + i * 0.7f + t);
    ASSERT_TRUE(opt.Step({&param}, {&g}).ok());
  };
  for (int t = 0; t < 3; ++t) step(a, p, t);
  Adam b(o, profile);
  Tensor q = p;
  ASSERT_TRUE(b.Restore(a.step(), a.slots()).ok());
  for (int t = 3; t < 5; ++t) {
    step(a, p, t);
    step(b, q, t);
  }
  EXPECT_TRUE(p.BitwiseEqual(q));
  EXPECT_EQ(b.step(), 5);
  std::vector<AdamSlot> bad(1);
  bad[0].m = Tensor({7});
  bad[0].v = Tensor({7});  // no vmax although AMSGrad is on
  EXPECT_FALSE(b.Restore(2, bad).ok());
  EXPECT_EQ(b.step(), 5);
}

TEST(AdamTest, ValidateNamesTheField) {
  AdamOptions o;
  o.beta2 = 1.0;
  Status s = ValidateAdamOptions(o);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("beta2"), std::string::npos);
  o = AdamOptions{};
  o.eps = -1;
  EXPECT_NE(ValidateAdamOptions(o).message().find("eps"), std::string::npos);
  o = AdamOptions{};
  o.lr = std::nan("");
  EXPECT_NE(ValidateAdamOptions(o).message().find("lr"), std::string::npos);
  EXPECT_TRUE(ValidateAdamOptions(AdamOptions{}).ok());
}

}  // namespace
}  // namespace xw
