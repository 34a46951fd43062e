#include "xwires/hpo/acquisition.h"

#include <gtest/gtest.h>

#include <cmath>

namespace xw::hpo {
namespace {

TEST(Acquisition, KnownValues) {
  const AcquisitionParams p;  // xi 0.01, kappa 1.96
  // scipy.stats.norm: mu 0.3, var 0.25, y* -0.2.
  EXPECT_NEAR(AcquisitionValue(AcquisitionKind::kEI, 0.3, 0.25, -0.2, p),
              -0.040095218519595036, 1e-15);
  EXPECT_NEAR(AcquisitionValue(AcquisitionKind::kPI, 0.3, 0.25, -0.2, p),
              -0.15386423037273478, 1e-15);
  EXPECT_NEAR(AcquisitionValue(AcquisitionKind::kLCB, 0.3, 0.25, -0.2, p),
              -0.68, 1e-15);
  AcquisitionParams zero;
  zero.xi = 0;
  EXPECT_NEAR(AcquisitionValue(AcquisitionKind::kEI, 0, 1, 0, zero),
              -0.3989422804014327, 1e-15);
  EXPECT_NEAR(AcquisitionValue(AcquisitionKind::kPI, 0, 1, 0, zero), -0.5,
              1e-15);
}

TEST(Acquisition, ZeroVarianceGivesNoImprovement) {
  const AcquisitionParams p;
  double dm, dv;
  EXPECT_EQ(AcquisitionValue(AcquisitionKind::kEI, -5, 0, 0, p, &dm, &dv), 0.0);
  EXPECT_EQ(dm, 0.0);
  EXPECT_EQ(AcquisitionValue(AcquisitionKind::kPI, -5, 0, 0, p), 0.0);
  EXPECT_EQ(AcquisitionValue(AcquisitionKind::kLCB, -5, 0, 0, p), -5.0);
}

TEST(Acquisition, DerivativesMatchFiniteDifferences) {
  const AcquisitionParams p;
  for (AcquisitionKind k :
       {AcquisitionKind::kEI, AcquisitionKind::kPI, AcquisitionKind::kLCB}) {
    for (double mu : {-1.0, 0.1, 0.8}) {
      for (double var : {0.01, 0.3, 2.0}) {
        double dm, dv;
        AcquisitionValue(k, mu, var, -0.3, p, &dm, &dv);
        const double h = 1e-6;
        const double fm = (AcquisitionValue(k, mu + h, var, -0.3, p) -
                           AcquisitionValue(k, mu - h, var, -0.3, p)) /
                          (2 * h);
        const double fv = (AcquisitionValue(k, mu, var + h, -0.3, p) -
                           AcquisitionValue(k, mu, var - h, -0.3, p)) /
                          (2 * h);
        EXPECT_NEAR(dm, fm, 1e-7)
            << AcquisitionName(k) << " mu " << mu << " var " << var;
        EXPECT_NEAR(dv, fv, 1e-6)
            << AcquisitionName(k) << " mu " << mu << " var " << var;
      }
    }
  }
}

TEST(Acquisition, NamesRoundTrip) {
  for (AcquisitionKind k : {AcquisitionKind::kEI, AcquisitionKind::kPI,
                            AcquisitionKind::kLCB, AcquisitionKind::kGpHedge}) {
    EXPECT_EQ(*ParseAcquisition(AcquisitionName(k)), k);
  }
  EXPECT_NE(ParseAcquisition("ucb").status().message().find(
                "unknown acquisition 'ucb'"),
            std::string::npos);
}

TEST(Acquisition, HedgeProbabilitiesAreASoftmax) {
  const auto p = HedgeProbabilities({0.0, -1.0, -2.0}, 1.0);
  const double z = 1 + std::exp(-1.0) + std::exp(-2.0);
  EXPECT_NEAR(p[0], 1 / z, 1e-15);
  EXPECT_NEAR(p[1], std::exp(-1.0) / z, 1e-15);
  EXPECT_NEAR(p[2], std::exp(-2.0) / z, 1e-15);
  // Shift invariant, so huge gains do not overflow.
  const auto q = HedgeProbabilities({1000.0, 999.0, 998.0}, 1.0);
  EXPECT_NEAR(q[0], p[0], 1e-12);
  const auto u = HedgeProbabilities({3.0, -7.0, 1.0}, 0.0);
  EXPECT_NEAR(u[1], 1.0 / 3, 1e-15);
}

}  // namespace
}  // namespace xw::hpo
