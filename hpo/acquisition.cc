#include "xwires/hpo/acquisition.h"

#include <algorithm>
#include <cmath>

namespace xw::hpo {
namespace {

constexpr double kInvSqrt2 = 0.70710678118654752440;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;

double NormCdf(double z) { return 0.5 * std::erfc(-z * kInvSqrt2); }
double NormPdf(double z) { return kInvSqrt2Pi * std::exp(-0.5 * z * z); }

// Below this variance the posterior is treated as certain (EI = PI = 0).
constexpr double kMinVar = 1e-24;

}  // namespace

std::string AcquisitionName(AcquisitionKind k) {
  switch (k) {
    case AcquisitionKind::kEI:
      return "EI";
    case AcquisitionKind::kPI:
      return "PI";
    case AcquisitionKind::kLCB:
      return "LCB";
    case AcquisitionKind::kGpHedge:
      return "gp_hedge";
  }
  return "?";
}

Result<AcquisitionKind> ParseAcquisition(const std::string& name) {
  for (AcquisitionKind k : {AcquisitionKind::kEI, AcquisitionKind::kPI,
                            AcquisitionKind::kLCB, AcquisitionKind::kGpHedge}) {
    if (name == AcquisitionName(k)) return k;
  }
  return Status::InvalidArgument("unknown acquisition '" + name +
                                 "' (expected EI, PI, LCB or gp_hedge)");
}

double AcquisitionValue(AcquisitionKind k, double mu, double var, double y_best,
                        const AcquisitionParams& p, double* d_mu,
                        double* d_var) {
  double dmu = 0, dsigma = 0, value = 0;
  const double sigma = var > kMinVar ? std::sqrt(var) : 0.0;
  if (k == AcquisitionKind::kLCB) {
    value = mu - p.kappa * sigma;
    dmu = 1.0;
    dsigma = -p.kappa;
  } else if (sigma > 0) {
    const double imp = y_best - p.xi - mu;
    const double z = imp / sigma;
    const double cdf = NormCdf(z), pdf = NormPdf(z);
    if (k == AcquisitionKind::kEI) {
      value = -(imp * cdf + sigma * pdf);
      dmu = cdf;      // d(-EI)/dmu
      dsigma = -pdf;  // d(-EI)/dsigma
    } else {          // kPI
      value = -cdf;
      dmu = pdf / sigma;
      dsigma = pdf * z / sigma;
    }
  }
  if (d_mu) *d_mu = dmu;
  if (d_var) *d_var = sigma > 0 ? dsigma / (2.0 * sigma) : 0.0;
  return value;
}

std::array<double, 3> HedgeProbabilities(const std::array<double, 3>& gains,
                                         double eta) {
  const double mx = std::max({gains[0], gains[1], gains[2]});
  std::array<double, 3> p;
  double sum = 0;
  for (int i = 0; i < 3; ++i) sum += p[i] = std::exp(eta * (gains[i] - mx));
  for (double& v : p) v /= sum;
  return p;
}

}  // namespace xw::hpo
