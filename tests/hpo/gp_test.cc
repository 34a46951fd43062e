#include "xwires/hpo/gp.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "xwires/core/parallel.h"

namespace xw::hpo {
namespace {

const std::vector<double> kX = {0.1, 0.2,  0.4,  0.9,  0.7,
                                0.3, 0.95, 0.65, 0.25, 0.55};
const std::vector<double> kY = {1.3, -0.4, 2.2, 0.7, -1.1};
const GpHyperparameters kHp{1.7, {0.3, 0.8}, 0.01};

double Matern52(double r) {
  const double s = std::sqrt(5.0) * r;
  return (1 + s + s * s / 3) * std::exp(-s);
}
double Kern(const double* a, const double* b, const GpHyperparameters& hp) {
  double r2 = 0;
  for (size_t j = 0; j < hp.length_scales.size(); ++j) {
    r2 += std::pow((a[j] - b[j]) / hp.length_scales[j], 2);
  }
  return hp.amplitude * Matern52(std::sqrt(r2));
}

// Solves A z = b for symmetric positive definite A by plain Gaussian
// elimination (independent of the Cholesky code under test).
std::vector<double> Solve(std::vector<std::vector<double>> a,
                          std::vector<double> b) {
  const size_t n = b.size();
  for (size_t k = 0; k < n; ++k) {
    for (size_t i = k + 1; i < n; ++i) {
      const double f = a[i][k] / a[k][k];
      for (size_t j = k; j < n; ++j) a[i][j] -= f * a[k][j];
      b[i] -= f * b[k];
    }
  }
  std::vector<double> z(n);
  for (size_t i = n; i-- > 0;) {
    double s = b[i];
    for (size_t j = i + 1; j < n; ++j) s -= a[i][j] * z[j];
    z[i] = s / a[i][i];
  }
  return z;
}

TEST(GaussianProcess, PosteriorEqualsClosedForm) {
  GaussianProcess gp(2, kHp);
  ASSERT_TRUE(gp.Fit(kX, kY).ok());
  const int n = 5;
  double ym = 0, ys = 0;
  for (double v : kY) ym += v / n;
  for (double v : kY) ys += (v - ym) * (v - ym) / n;
  ys = std::sqrt(ys);
  EXPECT_NEAR(gp.y_mean(), ym, 1e-15);
  EXPECT_NEAR(gp.y_std(), ys, 1e-15);
  std::vector<std::vector<double>> k(n, std::vector<double>(n));
  std::vector<double> yn(n);
  for (int i = 0; i < n; ++i) {
    yn[i] = (kY[i] - ym) / ys;
    for (int j = 0; j < n; ++j) {
      k[i][j] = Kern(&kX[2 * i], &kX[2 * j], kHp) +
                (i == j ? kHp.noise + 1e-10 : 0.0);
    }
  }
  const std::vector<double> alpha = Solve(k, yn);
  // Expected raw means / latent variances from scikit-learn 1.2.1
  // (GaussianProcessRegressor, same fixed kernel, normalize_y, alpha 1e-10;
  // its predictive variance minus the white-noise term).
  const double test_x[3][2] = {{0.5, 0.5}, {0.1, 0.25}, {0.9, 0.1}};
  const double sk_mean[3] = {0.6838475397692372, 1.1136135243504677,
                             1.4987276199181454};
  const double sk_var[3] = {0.48403012362837283, 0.02361352465848728,
                            0.8481249461076785};
  for (int t = 0; t < 3; ++t) {
    std::vector<double> ks(n);
    for (int i = 0; i < n; ++i) ks[i] = Kern(test_x[t], &kX[2 * i], kHp);
    const std::vector<double> w = Solve(k, ks);
    double mean = 0, quad = 0;
    for (int i = 0; i < n; ++i) mean += ks[i] * alpha[i], quad += ks[i] * w[i];
    const double var = kHp.amplitude - quad;
    double m, v;
    gp.Predict(test_x[t], &m, &v);
    EXPECT_NEAR(m, mean, 1e-12);
    EXPECT_NEAR(v, var, 1e-12);
    EXPECT_NEAR(ym + ys * m, sk_mean[t], 1e-9);
    EXPECT_NEAR(ys * ys * v, sk_var[t], 1e-9);
  }
}

TEST(GaussianProcess, LogMarginalLikelihoodMatchesScikitLearn) {
  double ym, ys;
  TargetNormalization(kY, &ym, &ys);
  std::vector<double> yn;
  for (double v : kY) yn.push_back((v - ym) / ys);
  std::vector<double> grad;
  const double lml = LogMarginalLikelihood(kX, yn, 2, kHp, &grad);
  // sklearn log_marginal_likelihood(theta, eval_gradient=True), theta =
  // log(1.7, 0.3, 0.8, 0.01).
  EXPECT_NEAR(lml, -8.78940689974662, 1e-9);
  const double sk_grad[4] = {1.372533909736097, -3.841846273588921,
                             -1.7550460347324612, 0.06827752914714486};
  ASSERT_EQ(grad.size(), 4u);
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(grad[i], sk_grad[i], 1e-8) << i;
}

std::vector<double> RandomPoints(int n, int dim, uint32_t seed) {
  std::vector<double> x(static_cast<size_t>(n) * dim);
  uint64_t s = seed;
  for (double& v : x) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    v = static_cast<double>(s >> 11) * 0x1.0p-53;
  }
  return x;
}

TEST(GaussianProcess, LikelihoodGradientMatchesFiniteDifferences) {
  const int n = 30, dim = 3;
  const std::vector<double> x = RandomPoints(n, dim, 7);
  std::vector<double> y(n);
  for (int i = 0; i < n; ++i)
    y[i] = std::sin(6 * x[3 * i]) + x[3 * i + 1] * x[3 * i + 2];
  double ym, ys;
  TargetNormalization(y, &ym, &ys);
  for (double& v : y) v = (v - ym) / ys;
  for (const GpHyperparameters& hp :
       {GpHyperparameters{1.0, {0.2, 0.5, 2.0}, 1e-3},
        GpHyperparameters{3.5, {1.1, 0.05, 0.3}, 0.2}}) {
    for (bool with_noise : {true, false}) {
      std::vector<double> grad;
      LogMarginalLikelihood(x, y, dim, hp, &grad, with_noise);
      ASSERT_EQ(grad.size(), with_noise ? 5u : 4u);
      for (size_t p = 0; p < grad.size(); ++p) {
        // Central differences in log-parameter space.
        auto shifted = [&](double h) {
          GpHyperparameters q = hp;
          double* t =
              p == 0 ? &q.amplitude
                     : (p <= static_cast<size_t>(dim) ? &q.length_scales[p - 1]
                                                      : &q.noise);
          *t *= std::exp(h);
          return LogMarginalLikelihood(x, y, dim, q, nullptr, with_noise);
        };
        const double h = 1e-5;
        const double fd = (shifted(h) - shifted(-h)) / (2 * h);
        EXPECT_NEAR(grad[p], fd, 1e-5 * std::max(1.0, std::abs(fd)))
            << "param " << p;
      }
    }
  }
}

TEST(GaussianProcess, PredictionGradientsMatchFiniteDifferences) {
  const int n = 25, dim = 3;
  const std::vector<double> x = RandomPoints(n, dim, 11);
  std::vector<double> y(n);
  for (int i = 0; i < n; ++i)
    y[i] = x[3 * i] - 2 * x[3 * i + 1] * x[3 * i + 1] + x[3 * i + 2];
  GaussianProcess gp(dim, GpHyperparameters{2.0, {0.4, 0.3, 0.7}, 1e-4});
  ASSERT_TRUE(gp.Fit(x, y).ok());
  const double p[3] = {0.33, 0.61, 0.17};
  double m, v, dm[3], dv[3];
  gp.Predict(p, &m, &v, dm, dv);
  for (int j = 0; j < dim; ++j) {
    double a[3] = {p[0], p[1], p[2]}, b[3] = {p[0], p[1], p[2]};
    const double h = 1e-6;
    a[j] += h;
    b[j] -= h;
    double ma, va, mb, vb;
    gp.Predict(a, &ma, &va);
    gp.Predict(b, &mb, &vb);
    EXPECT_NEAR(dm[j], (ma - mb) / (2 * h), 1e-6) << j;
    EXPECT_NEAR(dv[j], (va - vb) / (2 * h), 1e-6) << j;
  }
}

TEST(GaussianProcess, AppendedRowsEqualAFullFactorisation) {
  const int n = 40, dim = 2;
  const std::vector<double> x = RandomPoints(n, dim, 3);
  std::vector<double> y(n);
  for (int i = 0; i < n; ++i) y[i] = std::cos(5 * x[2 * i]) * x[2 * i + 1];
  const GpHyperparameters hp{1.3, {0.25, 0.4}, 1e-3};
  GaussianProcess full(dim, hp), inc(dim, hp);
  ASSERT_TRUE(full.Fit(x, y).ok());
  ASSERT_TRUE(inc.Fit(std::span(x.data(), 20), std::span(y.data(), 10)).ok());
  for (int i = 10; i < n; ++i) inc.Append(std::span(&x[2 * i], 2), y[i]);
  inc.SetNormalization(full.y_mean(), full.y_std());
  // A pseudo-point appended then truncated leaves no trace.
  const double extra[2] = {0.5, 0.5};
  inc.Append(extra, 100.0);
  inc.Truncate(n);
  inc.SetNormalization(full.y_mean(), full.y_std());
  const std::vector<double> q = RandomPoints(50, dim, 5);
  for (int t = 0; t < 50; ++t) {
    double m1, v1, m2, v2;
    full.Predict(&q[2 * t], &m1, &v1);
    inc.Predict(&q[2 * t], &m2, &v2);
    EXPECT_NEAR(m1, m2, 1e-9);
    EXPECT_NEAR(v1, v2, 1e-9);
  }
}

TEST(GaussianProcess, BatchPredictionMatchesSingleAndIgnoresThreadCount) {
  const int n = 60, dim = 4, m = 1000;
  const std::vector<double> x = RandomPoints(n, dim, 9);
  std::vector<double> y(n);
  for (int i = 0; i < n; ++i)
    y[i] = x[4 * i] * x[4 * i + 1] - x[4 * i + 2] + x[4 * i + 3];
  GaussianProcess gp(dim, GpHyperparameters{0.8, {0.3, 0.5, 0.2, 1.0}, 1e-2});
  ASSERT_TRUE(gp.Fit(x, y).ok());
  const std::vector<double> q = RandomPoints(m, dim, 13);
  std::vector<double> mean1(m), var1(m), mean2(m), var2(m);
  {
    ThreadScope one(1);
    gp.PredictBatch(q.data(), m, mean1.data(), var1.data());
  }
  {
    ThreadScope two(2);
    gp.PredictBatch(q.data(), m, mean2.data(), var2.data());
  }
  EXPECT_EQ(mean1, mean2);
  EXPECT_EQ(var1, var2);
  for (int t = 0; t < m; t += 37) {
    double mm, vv;
    gp.Predict(&q[dim * t], &mm, &vv);
    EXPECT_NEAR(mean1[t], mm, 1e-12);
    EXPECT_NEAR(var1[t], vv, 1e-12);
  }
}

TEST(GaussianProcess, FitMaximisesTheLikelihoodWithinBounds) {
  const int n = 30, dim = 2;
  const std::vector<double> x = RandomPoints(n, dim, 21);
  std::vector<double> y(n);
  for (int i = 0; i < n; ++i)
    y[i] = std::sin(8 * x[2 * i]) + 0.1 * x[2 * i + 1];
  GpFitOptions opt;
  GpHyperparameters start{1.0, {1.0, 1.0}, 1.0};
  Result<GpHyperparameters> a = Status::Internal("unset"),
                            b = Status::Internal("unset");
  {
    ThreadScope one(1);
    a = FitGpHyperparameters(x, y, dim, opt, start, 42, 7);
  }
  {
    ThreadScope two(2);
    b = FitGpHyperparameters(x, y, dim, opt, start, 42, 7);
  }
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(*a, *b);  // bitwise, any thread count
  double ym, ys;
  TargetNormalization(y, &ym, &ys);
  std::vector<double> yn;
  for (double v : y) yn.push_back((v - ym) / ys);
  std::vector<double> grad;
  const double best = LogMarginalLikelihood(x, yn, dim, *a, &grad);
  EXPECT_GT(best, LogMarginalLikelihood(x, yn, dim, start, nullptr));
  // x1 matters far more than x2: a shorter length scale for it.
  EXPECT_LT(a->length_scales[0], a->length_scales[1]);
  EXPECT_GE(a->amplitude, opt.amplitude_low);
  EXPECT_LE(a->amplitude, opt.amplitude_high);
  EXPECT_GE(a->noise, opt.noise_low);
  // Stationary in every parameter that is not at a bound.
  EXPECT_NEAR(grad[0], 0.0, 1e-2);
  EXPECT_NEAR(grad[1], 0.0, 1e-2);
  // No start on a grid of alternatives does better.
  for (double c : {0.1, 1.0, 10.0}) {
    for (double l : {0.05, 0.2, 1.0}) {
      for (double nz : {1e-5, 1e-3, 0.1}) {
        EXPECT_LE(
            LogMarginalLikelihood(
                x, yn, dim, GpHyperparameters{c, {l, 10 * l}, nz}, nullptr),
            best + 1e-9);
      }
    }
  }
}

TEST(GaussianProcess, DuplicatePointsNeedJitterButStillFactorise) {
  const std::vector<double> x = {0.5, 0.5, 0.5, 0.5, 0.2, 0.8};
  const std::vector<double> y = {1.0, 1.0, -1.0};
  GaussianProcess gp(2, GpHyperparameters{1.0, {0.5, 0.5}, 0.0});
  ASSERT_TRUE(gp.Fit(x, y).ok());
  EXPECT_GE(gp.jitter(), 1e-10);
  double m, v;
  gp.Predict(&x[0], &m, &v);
  EXPECT_NEAR(gp.y_mean() + gp.y_std() * m, 1.0, 1e-3);
}

}  // namespace
}  // namespace xw::hpo
