// Acquisition functions (scikit-optimize's definitions), all to be MINIMISED,
// evaluated on the GP's normalised scale (targets standardised to zero mean,
// unit variance) so that xi, kappa and the gp_hedge eta mean the same thing
// for any objective scale:
//   LCB = mu - kappa * sigma
//   -EI = -[(y* - xi - mu) Phi(z) + sigma phi(z)],  z = (y* - xi - mu) / sigma
//   -PI = -Phi(z)
// y* is the best (smallest) normalised observation. Where sigma is 0, EI and
// PI are 0 (as skopt). In skopt xi is in raw objective units; here xi = 0.01
// means "0.01 standard deviations of the observed objective".
//
// gp_hedge (Hoffman, Brochu & de Freitas 2011, as skopt) keeps one gain per
// base acquisition; each round every arm proposes a point, an arm is drawn
// with probability softmax(eta * (gain - max gain)), and once new
// observations arrive each arm's gain is decreased by the refitted model's
// normalised posterior mean at its last proposal.
//
// Pure functions; thread-safe.
#ifndef XWIRES_HPO_ACQUISITION_H_
#define XWIRES_HPO_ACQUISITION_H_

#include <array>
#include <string>

#include "xwires/core/status.h"

namespace xw::hpo {

enum class AcquisitionKind { kEI, kPI, kLCB, kGpHedge };

// "EI", "PI", "LCB", "gp_hedge" (parsing is case-sensitive).
std::string AcquisitionName(AcquisitionKind k);
Result<AcquisitionKind> ParseAcquisition(const std::string& name);

struct AcquisitionParams {
  double xi = 0.01;     // EI/PI improvement margin, in normalised units
  double kappa = 1.96;  // LCB exploration weight
  double eta = 1.0;     // gp_hedge softmax temperature (normalised units)
};

// Value of acquisition `k` (kEI, kPI or kLCB) at posterior mean mu and
// variance var (normalised units), incumbent y_best. If d_mu / d_var are
// non-null they receive the partial derivatives with respect to mu and var.
double AcquisitionValue(AcquisitionKind k, double mu, double var, double y_best,
                        const AcquisitionParams& p, double* d_mu = nullptr,
                        double* d_var = nullptr);

// The three base acquisitions of gp_hedge, in arm order.
inline constexpr std::array<AcquisitionKind, 3> kHedgeArms = {
    AcquisitionKind::kEI, AcquisitionKind::kLCB, AcquisitionKind::kPI};

// Arm probabilities softmax(eta * (gains - max(gains))).
std::array<double, 3> HedgeProbabilities(const std::array<double, 3>& gains,
                                         double eta);

}  // namespace xw::hpo

#endif  // XWIRES_HPO_ACQUISITION_H_
