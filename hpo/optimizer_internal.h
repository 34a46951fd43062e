// Building blocks of GpOptimizer (not part of the public API): the initial
// designs and the acquisition optimiser.
#ifndef XWIRES_HPO_OPTIMIZER_INTERNAL_H_
#define XWIRES_HPO_OPTIMIZER_INTERNAL_H_

#include <cstdint>
#include <vector>

#include "xwires/hpo/acquisition.h"
#include "xwires/hpo/gp.h"
#include "xwires/hpo/optimizer.h"
#include "xwires/hpo/sobol.h"

namespace xw::hpo::internal {

// Unit-cube point `k` of the initial design (dim coordinates). attempt > 0
// gives replacement points (uniform random from a separate stream) for when
// point k collides with an existing point after integer rounding. Latin
// hypercube designs have n_initial rows; k >= n_initial falls back to random.
std::vector<double> InitialDesignPoint(InitialDesign kind, int dim,
                                       int n_initial, uint64_t seed, uint64_t k,
                                       uint64_t attempt);

// A digitally shifted Sobol candidate set of `count` points, row-major.
std::vector<double> SobolCandidates(const Sobol& sobol, int count,
                                    uint64_t seed, uint64_t stream);

struct Proposal {
  std::vector<double> x;  // unit coordinates
  double value;           // acquisition value (lower is better)
};

// For each arm: proposals ordered best first: the results of bounded L-BFGS
// runs from the n_local best candidates, then the best candidates themselves
// (up to 64), as fallbacks when the best collide with existing points.
// mean/var: the GP's normalised posterior at the candidates.
std::vector<std::vector<Proposal>> ProposeByArm(
    const GaussianProcess& gp, const std::vector<AcquisitionKind>& arms,
    double y_best, const AcquisitionParams& params,
    const std::vector<double>& candidates, const std::vector<double>& mean,
    const std::vector<double>& var, int n_local, int local_max_evals);

}  // namespace xw::hpo::internal

#endif  // XWIRES_HPO_OPTIMIZER_INTERNAL_H_
