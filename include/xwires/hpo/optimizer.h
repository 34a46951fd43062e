// GpOptimizer: sequential and batch Bayesian optimisation of one search space
// (one HyperSpace subspace, or the whole space) with a GP surrogate.
//
// It MINIMISES: tell it the value to minimise. The divergence search
// maximises divergence, so the driver tells y = -divergence
// (LossFromDivergence below).
//
// Ask/Tell protocol for a driver running trials concurrently:
//   auto xs = opt.Ask(1, pending);   // pending = points being evaluated now
//   ... evaluate ...; opt.Tell(x, y);
// Ask(n, pending) returns n points that are pairwise distinct and distinct
// (unit-cube Euclidean distance >= min_distance after integer rounding) from
// every pending and observed point. Pending points are handled by the constant
// liar: each is added to the GP with a fake target (by default the best
// observation, CL-min), so the acquisition is low around it.
//
// Phases: while observations + pending + earlier points of this Ask number
// fewer than n_initial_points (or fewer than 2 observations exist), points
// come from the initial design, design point k being a fixed function of
// (seed, k). After that the GP is used.
//
// Kernel hyperparameters are refitted by maximum likelihood at "refit points"
// n (number of observations): every n <= refit_dense_until, then every n that
// is a multiple of refit_every. Each fit warm-starts from the previous refit
// point's hyperparameters; refit points n <= refit_dense_until or divisible by
// restart_every add gp.n_restarts random starts drawn from (seed, n) (skopt
// restarts at every tell; the warm-start chain keeps the best basin found, so
// occasional restarts suffice and cost a fraction). Between refit points new
// observations extend the Cholesky factor by one row each (O(n^2)), so most
// suggestions cost no O(n^3) work. (With refit_dense_until < 2, a model
// needed before the first multiple of refit_every is fitted to all current
// observations from the default start, outside the chain.)
//
// Determinism and resume: the hyperparameters at n, the candidate sets and the
// initial design are pure functions of (seed, ordered observations), and every
// parallel step uses fixed chunks, so an optimizer rebuilt after a crash by
// Tell-ing the stored observations in their original order suggests exactly
// what the original one would, for any thread count. The one piece of history
// is the gp_hedge portfolio (gains and last proposals, see HedgeState); store
// and restore it for a bitwise-identical resume, otherwise the portfolio
// restarts from equal gains (what scikit-optimize does after a restart).
//
// Not thread-safe: one thread at a time per optimizer (it uses xw::ParallelFor
// internally).
#ifndef XWIRES_HPO_OPTIMIZER_H_
#define XWIRES_HPO_OPTIMIZER_H_

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "xwires/core/status.h"
#include "xwires/hpo/acquisition.h"
#include "xwires/hpo/gp.h"
#include "xwires/hpo/space.h"

namespace xw::hpo {

enum class InitialDesign { kRandom, kSobol, kLatinHypercube };
// Lie told for pending points: min, mean or max of the observed targets.
enum class LiarStrategy { kMin, kMean, kMax };

// "random" | "sobol" | "lhs";  "min" | "mean" | "max".
std::string InitialDesignName(InitialDesign d);
Result<InitialDesign> ParseInitialDesign(const std::string& name);
std::string LiarName(LiarStrategy l);
Result<LiarStrategy> ParseLiar(const std::string& name);

inline double LossFromDivergence(double divergence) { return -divergence; }

struct OptimizerOptions {
  uint64_t seed = 0;
  AcquisitionKind acquisition = AcquisitionKind::kGpHedge;
  AcquisitionParams acq;
  InitialDesign initial_design = InitialDesign::kRandom;
  int n_initial_points = 10;
  LiarStrategy liar = LiarStrategy::kMin;
  // Acquisition optimisation: n_candidates Sobol points (a fresh digital
  // shift per suggestion), then bounded L-BFGS from the best n_local_starts
  // of them, local_max_evals evaluations each.
  int n_candidates = 10000;
  int n_local_starts = 5;
  int local_max_evals = 30;
  GpFitOptions gp;
  int refit_dense_until = 40;
  int refit_every = 4;
  int restart_every = 40;
  double min_distance = 1e-3;
};

// Checks ranges (n_initial_points >= 1, n_candidates >= 1, xi/kappa/eta
// finite and >= 0, refit_every >= 1, GP bounds positive and ordered, ...);
// InvalidArgument naming the field.
Status ValidateOptions(const OptimizerOptions& o);

// gp_hedge portfolio state. proposals are unit-cube points (one per arm, in
// kHedgeArms order) made when proposal_n observations existed; empty when
// there is nothing to charge.
struct HedgeState {
  std::array<double, 3> gains = {0, 0, 0};
  std::vector<std::vector<double>> proposals;
  int proposal_n = 0;
};

class GpOptimizer {
 public:
  static Result<GpOptimizer> Create(SearchSpace space,
                                    OptimizerOptions options);
  ~GpOptimizer();
  GpOptimizer(GpOptimizer&&) noexcept;
  GpOptimizer& operator=(GpOptimizer&&) noexcept;

  const SearchSpace& space() const;
  const OptimizerOptions& options() const;

  // Records y (finite, to be minimised) at native point x (inside the space,
  // integers integral). InvalidArgument names the problem; nothing is
  // recorded then. Failed trials have no y: do not tell them.
  // noise_variance: y's own noise variance in y's units (>= 0), e.g. the SE^2
  // of a divergence averaged over replicas (stats::PairStatistics::se2); the
  // GP puts it on that point's diagonal in place of the fitted homoscedastic
  // noise (gp.h). NaN (the default): a single observation that shares the
  // fitted noise. Part of the observation for the determinism rule above.
  Status Tell(std::span<const double> x, double y,
              double noise_variance = kHomoscedastic);

  // n >= 1 new native points; see the class comment. pending: native points
  // under evaluation (each inside the space). FailedPrecondition if the space
  // has no room for n more distinct points.
  Result<std::vector<std::vector<double>>> Ask(
      int n, const std::vector<std::vector<double>>& pending = {});

  int num_observations() const;
  // Observation i in native units and its target.
  std::vector<double> observation(int i) const;
  double target(int i) const;
  // Its noise variance as told (NaN: the shared noise).
  double noise_variance(int i) const;
  // Index of the best (lowest) observation, or -1 if there is none.
  int best_index() const;
  // Hyperparameters the last model-based Ask used, if any.
  std::optional<GpHyperparameters> hyperparameters() const;

  const HedgeState& hedge_state() const;
  // InvalidArgument if proposals are not 0 or 3 points of size() coordinates.
  Status set_hedge_state(const HedgeState& s);

 private:
  struct Impl;
  explicit GpOptimizer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace xw::hpo

#endif  // XWIRES_HPO_OPTIMIZER_H_
