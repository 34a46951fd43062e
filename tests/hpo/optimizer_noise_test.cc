// GpOptimizer with per-observation noise variances (Tell's noise_variance):
// recorded as told, validated, and reaching the model.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "xwires/hpo/optimizer.h"

namespace xw::hpo {
namespace {

SearchSpace LineSpace() {
  return SearchSpace::Create({{"x", DimType::kReal, 0, 1, false}}).value();
}

// Eight observations of a smooth bowl, plus a much lower value at x = 0.62
// that is either precise, or the mean of replicas with a large SE^2.
std::vector<double> AskAfter(double outlier_noise, bool pass_noise) {
  OptimizerOptions o;
  o.seed = 5;
  o.n_initial_points = 4;
  o.acquisition = AcquisitionKind::kEI;
  GpOptimizer opt = GpOptimizer::Create(LineSpace(), o).value();
  for (double x : {0.05, 0.2, 0.35, 0.5, 0.7, 0.8, 0.9, 0.98}) {
    const double y = (x - 0.3) * (x - 0.3);
    EXPECT_TRUE(pass_noise ? opt.Tell({{x}}, y, kHomoscedastic).ok()
                           : opt.Tell({{x}}, y).ok());
  }
  EXPECT_TRUE(opt.Tell({{0.62}}, -0.3, outlier_noise).ok());
  auto next = opt.Ask(1);
  EXPECT_TRUE(next.ok()) << next.status().ToString();
  return next.ok() ? (*next)[0] : std::vector<double>{};
}

TEST(GpOptimizerNoise, OwnNoiseReachesTheModel) {
  // No own noise: the same suggestion whether or not the argument is given.
  EXPECT_EQ(AskAfter(kHomoscedastic, true), AskAfter(kHomoscedastic, false));
  // A noisy outlier changes what the model believes, so the suggestion.
  const std::vector<double> trusted = AskAfter(1e-8, true);
  const std::vector<double> doubted = AskAfter(0.5, true);
  ASSERT_EQ(trusted.size(), 1u);
  ASSERT_EQ(doubted.size(), 1u);
  EXPECT_NE(trusted, doubted);
  // The precise outlier is believed: the next point is sought next to it.
  EXPECT_LT(std::abs(trusted[0] - 0.62), 0.1);
}

TEST(GpOptimizerNoise, NoiseIsRecordedAndValidated) {
  GpOptimizer opt = GpOptimizer::Create(LineSpace(), OptimizerOptions{}).value();
  ASSERT_TRUE(opt.Tell({{0.1}}, 1.0).ok());
  ASSERT_TRUE(opt.Tell({{0.2}}, 2.0, 0.04).ok());
  EXPECT_TRUE(std::isnan(opt.noise_variance(0)));
  EXPECT_EQ(opt.noise_variance(1), 0.04);
  EXPECT_FALSE(opt.Tell({{0.3}}, 1.0, -1.0).ok());
  EXPECT_FALSE(opt.Tell({{0.3}}, 1.0, INFINITY).ok());
  EXPECT_EQ(opt.num_observations(), 2);
}

}  // namespace
}  // namespace xw::hpo
