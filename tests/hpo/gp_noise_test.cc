// Heteroscedastic observations in the GP: a point's own noise variance
// replaces the homoscedastic noise on its diagonal entry (gp.h).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "xwires/hpo/gp.h"

namespace xw::hpo {
namespace {

constexpr double kNone = kHomoscedastic;

double Kern(double a, double b, const GpHyperparameters& hp) {
  const double s = std::sqrt(5.0) * std::abs(a - b) / hp.length_scales[0];
  return hp.amplitude * (1 + s + s * s / 3) * std::exp(-s);
}

// Posterior mean (normalised units) of a 1-D GP with diagonal noise `diag`,
// by Cramer's rule on the 3 x 3 system (independent of the code under test).
double HandMean(const std::vector<double>& x, const std::vector<double>& yn,
                const std::vector<double>& diag, const GpHyperparameters& hp,
                double at) {
  double k[3][3];
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      k[i][j] = Kern(x[i], x[j], hp) + (i == j ? diag[i] + 1e-10 : 0.0);
    }
  }
  auto det = [](double m[3][3]) {
    return m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) -
           m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
           m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
  };
  const double d = det(k);
  double mean = 0;
  for (int c = 0; c < 3; ++c) {
    double kc[3][3];
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 3; ++j) kc[i][j] = j == c ? yn[i] : k[i][j];
    }
    mean += Kern(at, x[c], hp) * det(kc) / d;  // k*^T K^-1 y
  }
  return mean;
}

TEST(GaussianProcessNoise, PosteriorEqualsHandComputedThreePoints) {
  const GpHyperparameters hp{1.5, {0.4}, 0.05};
  const std::vector<double> x = {0.1, 0.5, 0.8};
  const std::vector<double> y = {0.20, 0.35, 0.10};
  const std::vector<double> noise = {kNone, 0.8, 0.002};
  GaussianProcess gp(1, hp);
  ASSERT_TRUE(gp.Fit(x, y, noise).ok());
  double ym, ys;
  TargetNormalization(y, &ym, &ys);
  std::vector<double> yn;
  for (double v : y) yn.push_back((v - ym) / ys);
  const std::vector<double> diag = {hp.noise, 0.8, 0.002};
  for (double at : {0.0, 0.3, 0.5, 0.65, 1.0}) {
    double m, v;
    gp.Predict(&at, &m, &v);
    EXPECT_NEAR(m, HandMean(x, yn, diag, hp, at), 1e-12) << at;
  }
  // Appending the same points with their noise gives the same model.
  GaussianProcess inc(1, hp);
  ASSERT_TRUE(inc.Fit(std::span(x.data(), 1), std::span(y.data(), 1),
                      std::span(noise.data(), 1)).ok());
  inc.Append(std::span(&x[1], 1), y[1], noise[1]);
  inc.Append(std::span(&x[2], 1), y[2], noise[2]);
  inc.SetNormalization(ym, ys);
  for (double at : {0.0, 0.3, 0.5, 0.65, 1.0}) {
    double m1, v1, m2, v2;
    gp.Predict(&at, &m1, &v1);
    inc.Predict(&at, &m2, &v2);
    EXPECT_NEAR(m1, m2, 1e-12);
    EXPECT_NEAR(v1, v2, 1e-12);
  }
}

TEST(GaussianProcessNoise, ANoisyPointPullsThePosteriorLess) {
  // The same data, the point at 0.5 (far above the others) observed either
  // precisely or with a large noise variance.
  const GpHyperparameters hp{1.0, {0.3}, 0.01};
  const std::vector<double> x = {0.1, 0.5, 0.9};
  const std::vector<double> y = {0.0, 1.0, 0.0};
  GaussianProcess precise(1, hp), noisy(1, hp), plain(1, hp);
  ASSERT_TRUE(precise.Fit(x, y, std::vector<double>{kNone, 1e-4, kNone}).ok());
  ASSERT_TRUE(noisy.Fit(x, y, std::vector<double>{kNone, 4.0, kNone}).ok());
  ASSERT_TRUE(plain.Fit(x, y).ok());
  const double at = 0.5;
  double mp, vp, mn, vn, m0, v0;
  precise.Predict(&at, &mp, &vp);
  noisy.Predict(&at, &mn, &vn);
  plain.Predict(&at, &m0, &v0);
  const double target = (1.0 - precise.y_mean()) / precise.y_std();
  EXPECT_LT(std::abs(mp - target), 0.01);   // near-interpolation
  EXPECT_GT(std::abs(mn - target), 0.5);    // shrunk towards the prior
  EXPECT_LT(mn, mp);
  EXPECT_GT(vn, vp);                        // and less certain there
  // Without own noise every point keeps hp.noise: between the two.
  EXPECT_LT(m0, mp);
  EXPECT_GT(m0, mn);
}

TEST(GaussianProcessNoise, LikelihoodAndNoiseGradientCountOnlySharedNoise) {
  const std::vector<double> x = {0.05, 0.3, 0.45, 0.7, 0.95};
  const std::vector<double> yn = {-1.0, 0.4, 1.2, 0.1, -0.7};
  const GpHyperparameters hp{1.2, {0.35}, 0.03};
  const std::vector<double> own = {kNone, 0.2, kNone, 0.01, kNone};
  std::vector<double> grad;
  const double lml = LogMarginalLikelihood(x, yn, 1, hp, &grad, true, own);
  ASSERT_EQ(grad.size(), 3u);
  for (size_t p = 0; p < grad.size(); ++p) {
    auto shifted = [&](double h) {
      GpHyperparameters q = hp;
      double* t = p == 0 ? &q.amplitude : (p == 1 ? &q.length_scales[0] : &q.noise);
      *t *= std::exp(h);
      return LogMarginalLikelihood(x, yn, 1, q, nullptr, true, own);
    };
    const double fd = (shifted(1e-5) - shifted(-1e-5)) / 2e-5;
    EXPECT_NEAR(grad[p], fd, 1e-6 * std::max(1.0, std::abs(fd))) << p;
  }
  // Every point with its own noise: the shared noise has no effect at all.
  const std::vector<double> all = {0.1, 0.2, 0.1, 0.01, 0.3};
  LogMarginalLikelihood(x, yn, 1, hp, &grad, true, all);
  EXPECT_EQ(grad[2], 0.0);
  GpHyperparameters other = hp;
  other.noise = 5.0;
  EXPECT_EQ(LogMarginalLikelihood(x, yn, 1, hp, nullptr, true, all),
            LogMarginalLikelihood(x, yn, 1, other, nullptr, true, all));
  // Own noise equal to the shared one everywhere: the homoscedastic value.
  const std::vector<double> same(5, hp.noise);
  EXPECT_NEAR(LogMarginalLikelihood(x, yn, 1, hp, nullptr, true, same),
              LogMarginalLikelihood(x, yn, 1, hp, nullptr, true), 1e-12);
  EXPECT_NE(lml, LogMarginalLikelihood(x, yn, 1, hp, nullptr, true));
}

TEST(GaussianProcessNoise, FitAcceptsPointNoiseAndRefusesBadOnes) {
  const std::vector<double> x = {0.1, 0.3, 0.5, 0.7, 0.9, 0.2};
  const std::vector<double> y = {0.1, 0.3, 0.2, 0.25, 0.05, 0.15};
  const std::vector<double> own = {kNone, 0.5, kNone, kNone, 0.02, kNone};
  const GpHyperparameters start{1.0, {1.0}, 1.0};
  const auto hp = FitGpHyperparameters(x, y, 1, GpFitOptions{}, start, 1, 2, own);
  ASSERT_TRUE(hp.ok()) << hp.status().ToString();
  GaussianProcess gp(1, *hp);
  EXPECT_TRUE(gp.Fit(x, y, own).ok());
  const std::vector<double> short_noise = {0.1, 0.2};
  EXPECT_FALSE(gp.Fit(x, y, short_noise).ok());
  const std::vector<double> negative = {kNone, -0.5, kNone, kNone, kNone, kNone};
  EXPECT_FALSE(gp.Fit(x, y, negative).ok());
  EXPECT_FALSE(FitGpHyperparameters(x, y, 1, GpFitOptions{}, start, 1, 2, negative).ok());
  EXPECT_FALSE(FitGpHyperparameters(x, y, 1, GpFitOptions{}, start, 1, 2, short_noise).ok());
}

}  // namespace
}  // namespace xw::hpo
