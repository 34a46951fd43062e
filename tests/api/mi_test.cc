// Mutual information estimators: hand-computed tables, known MI of synthetic
// relations (deterministic, independent, Gaussian), numpy's digitize edges.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <vector>

#include "analysis_test_util.h"
#include "xwires/api/mi_analysis.h"
#include "xwires/api/mutual_info.h"
#include "xwires/core/rng.h"
#include "xwires/dataset/store/analysis.h"

namespace xw {
namespace {

TEST(MutualInfoTest, DigitizeMatchesNumpyEdges) {
  // numpy.digitize(v, numpy.arange(0, 1, 0.1)) - 1 for these values.
  EXPECT_EQ(DigitizeUnit(0.0), 0);
  EXPECT_EQ(DigitizeUnit(0.0999), 0);
  EXPECT_EQ(DigitizeUnit(0.1), 1);
  EXPECT_EQ(DigitizeUnit(0.2), 2);
  EXPECT_EQ(DigitizeUnit(0.3), 2);  // 3 * 0.1 = 0.30000000000000004 > 0.3
  EXPECT_EQ(DigitizeUnit(0.6), 5);  // 6 * 0.1 = 0.6000000000000001
  EXPECT_EQ(DigitizeUnit(0.95), 9);
  EXPECT_EQ(DigitizeUnit(1.0), 9);
  EXPECT_EQ(DigitizeUnit(-0.01), 0);  // jitter below 0 stays in the first bin
  EXPECT_EQ(DigitizeUnit(1.01), 9);
}

TEST(MutualInfoTest, NormalizeUnit) {
  const std::vector<double> v = {2, 4, 3, 6};
  EXPECT_EQ(NormalizeUnit(v), (std::vector<double>{0, 0.5, 0.25, 1}));
  const std::vector<double> c = {5, 5, 5};
  EXPECT_EQ(NormalizeUnit(c), (std::vector<double>{0, 0, 0}));
}

TEST(MutualInfoTest, HandComputedTables) {
  // Identical binary labels: I = H = ln 2.
  EXPECT_NEAR(
      DiscreteMi(std::vector<int>{0, 0, 1, 1}, std::vector<int>{0, 0, 1, 1}),
      std::log(2.0), 1e-15);
  // Independent by construction: every cell of the 2x2 table holds 1.
  EXPECT_NEAR(
      DiscreteMi(std::vector<int>{0, 0, 1, 1}, std::vector<int>{0, 1, 0, 1}),
      0.0, 1e-15);
  // Table of counts x\y: [[2, 1], [0, 1]] (n = 4):
  // p(0,0)=1/2, p(0,1)=1/4, p(1,1)=1/4; p(x)=(3/4, 1/4), p(y)=(1/2, 1/2).
  // I = 1/2 ln(4/3) + 1/4 ln(2/3) + 1/4 ln 2 = 0.2157615543388357.
  const double expected = 0.5 * std::log(4.0 / 3.0) +
                          0.25 * std::log(2.0 / 3.0) + 0.25 * std::log(2.0);
  EXPECT_NEAR(expected, 0.2157615543388357, 1e-15);
  EXPECT_NEAR(
      DiscreteMi(std::vector<int>{0, 0, 0, 1}, std::vector<int>{0, 0, 1, 1}),
      expected, 1e-15);
  // Symmetric in its arguments.
  EXPECT_NEAR(
      DiscreteMi(std::vector<int>{0, 0, 1, 1}, std::vector<int>{0, 0, 0, 1}),
      expected, 1e-15);
}

std::vector<double> Uniforms(uint64_t stream, int n) {
  const Philox rng(7, stream);
  std::vector<double> v(n);
  for (int i = 0; i < n; ++i) v[i] = rng.Uniform(i);
  return v;
}

TEST(MutualInfoTest, BinnedDeterministicRelationIsLogOfBins) {
  // y = x with x = 0..9 repeated (normalised to k/9, one value per bin):
  // every bin holds the same share and y's bin is x's, so I = H(X) = ln 10.
  std::vector<double> x(1000);
  for (int i = 0; i < 1000; ++i) x[i] = i % 10;
  MiOptions opt;
  opt.repeats = 1;
  opt.jitter = 0;
  auto e = EstimateMi({x}, x, opt);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_NEAR(e->mean, std::log(10.0), 1e-12);
  EXPECT_EQ(e->std, 0.0);
  EXPECT_EQ(e->n, 1000);
  // The normalisation is min-max, so y = 3x + 1 has the same bins.
  std::vector<double> y(1000);
  for (int i = 0; i < 1000; ++i) y[i] = 3 * x[i] + 1;
  EXPECT_NEAR(EstimateMi({x}, y, opt)->mean, std::log(10.0), 1e-12);
}

TEST(MutualInfoTest, BinnedIndependentIsNearZero) {
  const auto x = Uniforms(1, 20000), y = Uniforms(2, 20000);
  MiOptions opt;
  opt.repeats = 5;
  auto e = EstimateMi({x}, y, opt);
  ASSERT_TRUE(e.ok());
  // Plug-in bias is about (10-1)^2 / (2n) = 0.002 nats.
  EXPECT_LT(e->mean, 0.006);
  EXPECT_GE(e->mean, 0.0);
  EXPECT_GT(e->std, 0.0);  // the jitter changes the bins of some points
}

TEST(MutualInfoTest, BinnedPairCarriesJointInformation) {
  // y = (a + b) / 2 is determined by the pair far better than by either.
  const auto a = Uniforms(3, 5000), b = Uniforms(4, 5000);
  std::vector<double> y(5000);
  for (int i = 0; i < 5000; ++i) y[i] = a[i] + b[i];
  MiOptions opt;
  opt.repeats = 3;
  const double single = EstimateMi({a}, y, opt)->mean;
  const double pair = EstimateMi({a, b}, y, opt)->mean;
  EXPECT_GT(pair, single + 0.5);
}

TEST(MutualInfoTest, KsgGaussianMatchesClosedForm) {
  // Bivariate normal with correlation rho: I = -ln(1 - rho^2) / 2.
  const Philox rng(11, 5);
  const int n = 1500;
  const double rho = 0.9;
  std::vector<double> x(n), y(n);
  for (int i = 0; i < n; ++i) {
    const double z1 = rng.Normal(2 * i), z2 = rng.Normal(2 * i + 1);
    x[i] = z1;
    y[i] = rho * z1 + std::sqrt(1 - rho * rho) * z2;
  }
  const double truth = -0.5 * std::log(1 - rho * rho);  // 0.830
  EXPECT_NEAR(KsgMi({x}, y, 3), truth, 0.05);
  // Independent normals: near zero.
  std::vector<double> w(n);
  for (int i = 0; i < n; ++i) w[i] = rng.Normal(10 * n + i);
  EXPECT_LT(KsgMi({x}, w, 3), 0.03);
}

TEST(MutualInfoTest, KsgThroughEstimateMiWithJitter) {
  const auto x = Uniforms(6, 800);
  std::vector<double> y(800);
  for (int i = 0; i < 800; ++i) y[i] = x[i] * x[i];
  MiOptions opt;
  opt.estimator = MiEstimator::kKsg;
  opt.repeats = 3;
  opt.jitter = 1e-4;
  auto dep = EstimateMi({x}, y, opt);
  ASSERT_TRUE(dep.ok());
  EXPECT_GT(dep->mean, 2.0);  // nearly deterministic: large MI
  auto ind = EstimateMi({x}, Uniforms(7, 800), opt);
  EXPECT_LT(ind->mean, 0.05);
}

TEST(MutualInfoTest, SameSeedSameResultDifferentSeedDifferentJitter) {
  const auto x = Uniforms(8, 500), y = Uniforms(9, 500);
  MiOptions opt;
  opt.repeats = 4;
  opt.jitter = 0.05;
  const auto a = EstimateMi({x}, y, opt), b = EstimateMi({x}, y, opt);
  EXPECT_EQ(a->mean, b->mean);
  opt.seed = 1;
  EXPECT_NE(EstimateMi({x}, y, opt)->mean, a->mean);
}

TEST(MutualInfoTest, BadInputNamesTheProblem) {
  const std::vector<double> x = {1, 2, 3}, y = {1, 2};
  auto r = EstimateMi({x}, y, MiOptions{});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("length"), std::string::npos);
  MiOptions opt;
  opt.repeats = 0;
  EXPECT_FALSE(EstimateMi({x}, x, opt).ok());
  const std::vector<double> nan = {1, NAN, 3};
  r = EstimateMi({nan}, x, MiOptions{});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("non-finite"), std::string::npos);
  EXPECT_FALSE(EstimateMi({}, x, MiOptions{}).ok());
}

// `mi --store` keeps the printed result with the trials it was computed over.
TEST(MiStoreTest, StoredResultIsThePrintedOneOverItsTrials) {
  testing::TempDir dir;
  const std::string ds = dir.path() + "/ds";
  const std::string csv = std::string(XWIRES_SOURCE_DIR) +
                          "/tests/fixtures/crossedwires/vgg16_cifar10_results.csv";
  ASSERT_EQ(testing::Run(testing::Cli() + " import-crossedwires " + ds + " " +
                         csv + " --arch vgg16 2>&1"),
            0);
  std::string out;
  ASSERT_EQ(testing::Run(testing::Cli() + " mi " + ds +
                             " --repeats 2 --no-pairs --format json --store",
                         &out),
            0)
      << out;
  auto stored = Dataset::Open(ds, OpenMode::kReadOnly);
  ASSERT_TRUE(stored.ok());
  const auto results = *LoadAnalyses(**stored, -1, "mi");
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].trial_ids.size(), 400u);
  const auto printed = nlohmann::json::parse(out);
  const auto rows = nlohmann::json::parse(results[0].result_json)["rows"];
  ASSERT_EQ(rows.size(), printed.size());
  ASSERT_EQ(rows.size(), 4u);  // lr, adam_eps, batch_size, epochs
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i]["variable"], printed[i]["variable"]);
    EXPECT_DOUBLE_EQ(rows[i]["mi_mean"].get<double>(),
                     printed[i]["mi_mean"].get<double>());
  }
  EXPECT_NE(results[0].summary.find("vgg16: "), std::string::npos)
      << results[0].summary;
}

}  // namespace
}  // namespace xw
