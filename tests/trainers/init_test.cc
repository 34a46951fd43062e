// Initialisers: rules per scheme and architecture family, sample statistics,
// per-parameter streams, determinism.
#include "xwires/trainers/init.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "xwires/core/parallel.h"
#include "xwires/core/rng.h"
#include "xwires/trainers/profile.h"

namespace xw {
namespace {

ParamInfo Conv(const std::string& name, ArchFamily family, int64_t out, int64_t in, int64_t k,
               ParamKind kind = ParamKind::kConvWeight) {
  const Fans f = ConvFans(out, in, k, k);
  return {name, kind, f.fan_in, f.fan_out, family, false};
}

ParamInfo Linear(const std::string& name, ArchFamily family, int64_t out, int64_t in,
                 ParamKind kind = ParamKind::kLinearWeight) {
  const Fans f = LinearFans(out, in);
  return {name, kind, f.fan_in, f.fan_out, family, true};
}

InitRule Rule(const ParamInfo& info, const char* profile) {
  auto r = RuleFor(info, *LoadProfile(profile));
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : InitRule{};
}

void ExpectUniform(const InitRule& r, double bound) {
  EXPECT_EQ(r.dist, InitRule::Dist::kUniform);
  EXPECT_DOUBLE_EQ(r.a, -bound);
  EXPECT_DOUBLE_EQ(r.b, bound);
}
void ExpectNormal(const InitRule& r, double stddev) {
  EXPECT_EQ(r.dist, InitRule::Dist::kNormal);
  EXPECT_DOUBLE_EQ(r.a, 0.0);
  EXPECT_DOUBLE_EQ(r.b, stddev);
}
void ExpectConstant(const InitRule& r, double c) {
  EXPECT_EQ(r.dist, InitRule::Dist::kConstant);
  EXPECT_DOUBLE_EQ(r.a, c);
}

TEST(InitTest, Fans) {
  const Fans c = ConvFans(64, 3, 3, 3);
  EXPECT_EQ(c.fan_in, 27);
  EXPECT_EQ(c.fan_out, 576);
  const Fans l = LinearFans(10, 512);
  EXPECT_EQ(l.fan_in, 512);
  EXPECT_EQ(l.fan_out, 10);
}

TEST(InitTest, TorchDefaultRules) {
  // U(+-1/sqrt(fan_in)) for weights and biases of plain conv/linear layers.
  ExpectUniform(Rule(Conv("c.weight", ArchFamily::kPlain, 16, 3, 3), "torch"), 1 / std::sqrt(27.0));
  ExpectUniform(Rule(Conv("c.bias", ArchFamily::kPlain, 16, 3, 3, ParamKind::kConvBias), "torch"),
                1 / std::sqrt(27.0));
  ExpectUniform(Rule(Linear("fc.weight", ArchFamily::kPlain, 10, 64), "torch"), 0.125);
  ExpectUniform(
      Rule(Linear("fc.bias", ArchFamily::kPlain, 10, 64, ParamKind::kLinearBias), "torch"), 0.125);
}

TEST(InitTest, TorchvisionOverrides) {
  // ResNet: kaiming_normal(fan_out, relu) convs; fc keeps the default.
  ExpectNormal(Rule(Conv("conv1.weight", ArchFamily::kResNet, 64, 3, 3), "torch"),
               std::sqrt(2.0 / 576));
  ExpectUniform(Rule(Linear("fc.weight", ArchFamily::kResNet, 10, 512), "torch"),
                1 / std::sqrt(512.0));
  ExpectUniform(
      Rule(Linear("fc.bias", ArchFamily::kResNet, 10, 512, ParamKind::kLinearBias), "torch"),
      1 / std::sqrt(512.0));
  // VGG: kaiming_normal(fan_out) convs with zero bias; Linear N(0, 0.01), bias 0.
  ExpectNormal(Rule(Conv("features.0.weight", ArchFamily::kVgg, 64, 3, 3), "torch"),
               std::sqrt(2.0 / 576));
  ExpectConstant(
      Rule(Conv("features.0.bias", ArchFamily::kVgg, 64, 3, 3, ParamKind::kConvBias), "torch"),
      0.0);
  ExpectNormal(Rule(Linear("classifier.0.weight", ArchFamily::kVgg, 4096, 512), "torch"), 0.01);
  ExpectConstant(
      Rule(Linear("classifier.0.bias", ArchFamily::kVgg, 4096, 512, ParamKind::kLinearBias),
           "torch"),
      0.0);
  // DenseNet: kaiming_normal(fan_in) convs; Linear default weight, bias 0.
  ExpectNormal(Rule(Conv("features.conv0.weight", ArchFamily::kDenseNet, 64, 3, 3), "torch"),
               std::sqrt(2.0 / 27));
  ExpectUniform(Rule(Linear("classifier.weight", ArchFamily::kDenseNet, 10, 1024), "torch"),
                1 / 32.0);
  ExpectConstant(
      Rule(Linear("classifier.bias", ArchFamily::kDenseNet, 10, 1024, ParamKind::kLinearBias),
           "torch"),
      0.0);
}

TEST(InitTest, GlorotRulesIgnoreFamily) {
  for (const char* profile : {"tf", "reference"}) {
    for (ArchFamily fam : {ArchFamily::kPlain, ArchFamily::kVgg, ArchFamily::kResNet}) {
      ExpectUniform(Rule(Conv("w", fam, 64, 3, 3), profile), std::sqrt(6.0 / (27 + 576)));
      ExpectConstant(Rule(Conv("b", fam, 64, 3, 3, ParamKind::kConvBias), profile), 0.0);
      ExpectUniform(Rule(Linear("w", fam, 10, 512), profile), std::sqrt(6.0 / 522));
      ExpectConstant(Rule(Linear("b", fam, 10, 512, ParamKind::kLinearBias), profile), 0.0);
    }
  }
}

TEST(InitTest, BatchNormAndBuffersEverywhere) {
  for (const char* profile : {"torch", "tf", "reference"}) {
    ExpectConstant(Rule({"bn.weight", ParamKind::kBnWeight}, profile), 1.0);
    ExpectConstant(Rule({"bn.bias", ParamKind::kBnBias}, profile), 0.0);
    ExpectConstant(Rule({"bn.running_mean", ParamKind::kBnRunningMean}, profile), 0.0);
    ExpectConstant(Rule({"bn.running_var", ParamKind::kBnRunningVar}, profile), 1.0);
    ExpectConstant(Rule({"bn.num_batches_tracked", ParamKind::kBuffer}, profile), 0.0);
  }
  Tensor t({5}, 7.0f);
  ASSERT_TRUE(
      InitParameter({"bn.weight", ParamKind::kBnWeight}, *LoadProfile("torch"), 1, &t).ok());
  EXPECT_EQ(t[4], 1.0f);
}

// Mean, standard deviation and max |x| of a tensor, in double.
struct Stats {
  double mean, stddev, max_abs;
};
Stats Measure(const Tensor& t) {
  double s = 0, s2 = 0, mx = 0;
  for (int64_t i = 0; i < t.size(); ++i) {
    s += t[i];
    s2 += double(t[i]) * t[i];
    mx = std::max(mx, std::fabs(double(t[i])));
  }
  const double mean = s / t.size();
  return {mean, std::sqrt(s2 / t.size() - mean * mean), mx};
}

TEST(InitTest, SampleStatisticsMatchRules) {
  // 128x32x3x3 = 36864 draws: relative standard error of the std ~0.4%.
  const Profile torch = *LoadProfile("torch"), tf = *LoadProfile("tf");
  Tensor w({128, 32, 3, 3});
  const auto plain = Conv("conv.weight", ArchFamily::kPlain, 128, 32, 3);
  ASSERT_TRUE(InitParameter(plain, torch, 7, &w).ok());
  Stats s = Measure(w);
  const double b = 1 / std::sqrt(288.0);
  EXPECT_LE(s.max_abs, b);
  EXPECT_GT(s.max_abs, 0.999 * b);
  EXPECT_NEAR(s.stddev, b / std::sqrt(3.0), 0.02 * b / std::sqrt(3.0));
  EXPECT_NEAR(s.mean, 0.0, 0.02 * b);

  ASSERT_TRUE(
      InitParameter(Conv("conv.weight", ArchFamily::kResNet, 128, 32, 3), torch, 7, &w).ok());
  s = Measure(w);
  const double sd = std::sqrt(2.0 / 1152);
  EXPECT_NEAR(s.stddev, sd, 0.02 * sd);
  EXPECT_NEAR(s.mean, 0.0, 0.02 * sd);
  EXPECT_GT(s.max_abs, 3.5 * sd);  // a normal, not a bounded uniform

  ASSERT_TRUE(InitParameter(plain, tf, 7, &w).ok());
  s = Measure(w);
  const double g = std::sqrt(6.0 / (288 + 1152));
  EXPECT_LE(s.max_abs, g);
  EXPECT_GT(s.max_abs, 0.999 * g);
  EXPECT_NEAR(s.stddev, g / std::sqrt(3.0), 0.02 * g / std::sqrt(3.0));
}

TEST(InitTest, StreamsArePerParameterAndPerProfile) {
  const Profile tf = *LoadProfile("tf"), ref = *LoadProfile("reference");
  const auto info = Linear("fc.weight", ArchFamily::kPlain, 64, 64);
  Tensor a({64, 64}), b({64, 64}), c({64, 64}), d({64, 64}), e({64, 64});
  ASSERT_TRUE(InitParameter(info, tf, 1, &a).ok());
  ASSERT_TRUE(InitParameter(info, tf, 1, &b).ok());
  EXPECT_TRUE(a.BitwiseEqual(b));  // deterministic
  ASSERT_TRUE(InitParameter(info, ref, 1, &c).ok());
  EXPECT_FALSE(a.BitwiseEqual(c));  // same scheme, own stream per profile
  auto other = info;
  other.name = "fc2.weight";
  ASSERT_TRUE(InitParameter(other, tf, 1, &d).ok());
  EXPECT_FALSE(a.BitwiseEqual(d));  // own stream per parameter
  ASSERT_TRUE(InitParameter(info, tf, 2, &e).ok());
  EXPECT_FALSE(a.BitwiseEqual(e));  // seed matters
  // Creation order does not matter: re-drawing after other parameters gives
  // the same bits, and the stream is the documented one.
  ASSERT_TRUE(InitParameter(info, tf, 1, &b).ok());
  EXPECT_TRUE(a.BitwiseEqual(b));
  EXPECT_EQ(InitStream(tf, "fc.weight"), StreamId("tf/init/fc.weight"));
  const float lim = std::sqrt(6.0f / 128);
  EXPECT_EQ(a[5], -lim + 2 * lim * Philox(1, StreamId("tf/init/fc.weight")).Uniform(5));
}

TEST(InitTest, OneAndTwoThreadsAreBitwiseIdentical) {
  const auto info = Conv("conv.weight", ArchFamily::kResNet, 64, 64, 3);
  Tensor a({64, 64, 3, 3}), b({64, 64, 3, 3});
  {
    ThreadScope one(1);
    ASSERT_TRUE(InitParameter(info, *LoadProfile("torch"), 3, &a).ok());
  }
  {
    ThreadScope two(2);
    ASSERT_TRUE(InitParameter(info, *LoadProfile("torch"), 3, &b).ok());
  }
  EXPECT_TRUE(a.BitwiseEqual(b));
}

TEST(InitTest, BadFansAreRejectedWithoutChanges) {
  Tensor t({4}, 3.0f);
  ParamInfo info{"head.weight", ParamKind::kLinearWeight, 0, 4, ArchFamily::kPlain, false};
  Status s = InitParameter(info, *LoadProfile("torch"), 1, &t);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.message().find("head.weight"), std::string::npos);
  EXPECT_EQ(t[0], 3.0f);
  EXPECT_FALSE(InitParameter(info, *LoadProfile("torch"), 1, nullptr).ok());
}

TEST(InitTest, RuleToString) {
  EXPECT_EQ(InitRuleToString({InitRule::Dist::kUniform, -0.125, 0.125}), "U(-0.125, 0.125)");
  EXPECT_EQ(InitRuleToString({InitRule::Dist::kNormal, 0, 0.01}), "N(0, 0.01)");
  EXPECT_EQ(InitRuleToString({InitRule::Dist::kConstant, 1, 0}), "const 1");
}

}  // namespace
}  // namespace xw
