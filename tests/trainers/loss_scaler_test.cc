// Loss-scale state machines on injected overflow patterns (note §6.3).
#include "xwires/trainers/loss_scaler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace xw {
namespace {

// Scales after each step of: inf at steps 1 and 2, then `good` finite steps.
std::vector<float> Sequence(LossScaling kind, int good) {
  LossScaler s(kind);
  std::vector<float> out = {s.scale()};
  EXPECT_TRUE(s.Update(true));
  out.push_back(s.scale());
  EXPECT_TRUE(s.Update(true));
  out.push_back(s.scale());
  for (int i = 1; i <= good; ++i) {
    EXPECT_FALSE(s.Update(false));
    if (i % 2000 == 0) out.push_back(s.scale());
  }
  EXPECT_EQ(s.skipped_steps(), 2);
  return out;
}

TEST(LossScaler, TorchSequence) {
  EXPECT_EQ(Sequence(LossScaling::kTorchDynamic, 4000),
            (std::vector<float>{65536, 32768, 16384, 32768, 65536}));
}

TEST(LossScaler, Keras3Sequence) {
  EXPECT_EQ(Sequence(LossScaling::kKeras3Dynamic, 4000),
            (std::vector<float>{32768, 16384, 8192, 16384, 32768}));
}

TEST(LossScaler, Keras2Sequence) {
  EXPECT_EQ(Sequence(LossScaling::kKeras2Dynamic, 4000),
            (std::vector<float>{32768, 16384, 8192, 16384, 32768}));
}

TEST(LossScaler, GrowthNeedsExactly2000GoodSteps) {
  LossScaler s(LossScaling::kTorchDynamic);
  for (int i = 0; i < 1999; ++i) s.Update(false);
  EXPECT_EQ(s.scale(), 65536.0f);
  s.Update(true);  // an overflow resets the counter
  for (int i = 0; i < 1999; ++i) s.Update(false);
  EXPECT_EQ(s.scale(), 32768.0f);
  s.Update(false);
  EXPECT_EQ(s.scale(), 65536.0f);
}

TEST(LossScaler, FloorsAndGuards) {
  // Keras 2 floors at 1; PyTorch and Keras 3 keep halving.
  LossScaler k2(LossScaling::kKeras2Dynamic), t(LossScaling::kTorchDynamic),
      k3(LossScaling::kKeras3Dynamic);
  for (int i = 0; i < 20; ++i) {
    k2.Update(true);
    t.Update(true);
    k3.Update(true);
  }
  EXPECT_EQ(k2.scale(), 1.0f);
  EXPECT_EQ(t.scale(), std::ldexp(1.0f, -4));
  EXPECT_EQ(k3.scale(), std::ldexp(1.0f, -5));
  // PyTorch does not grow past the largest float; Keras 3 has no guard.
  LossScaler big(LossScaling::kTorchDynamic), k3big(LossScaling::kKeras3Dynamic);
  for (int i = 0; i < 2000 * 120; ++i) {
    big.Update(false);
    k3big.Update(false);
  }
  EXPECT_EQ(big.scale(), std::ldexp(1.0f, 127));
  EXPECT_EQ(k3big.scale(), std::numeric_limits<float>::infinity());
}

TEST(LossScaler, UnscaleDetectsNonFinite) {
  LossScaler s(LossScaling::kTorchDynamic);
  std::vector<float> g = {65536.0f, -131072.0f, 0.5f};
  EXPECT_TRUE(s.UnscaleAndCheck(g.data(), 3));
  EXPECT_EQ(g, (std::vector<float>{1.0f, -2.0f, 0.5f / 65536.0f}));
  g = {1.0f, std::numeric_limits<float>::infinity(), 2.0f};
  EXPECT_FALSE(s.UnscaleAndCheck(g.data(), 3));
  EXPECT_EQ(g[2], 2.0f / 65536.0f);  // every grad is unscaled, even after an inf
  g = {std::nanf("")};
  EXPECT_FALSE(s.UnscaleAndCheck(g.data(), 1));
  LossScaler none;
  EXPECT_FALSE(none.enabled());
  EXPECT_FALSE(none.Update(true));
  EXPECT_EQ(none.ScaleGradient(3.0f), 3.0f);
}

}  // namespace
}  // namespace xw
