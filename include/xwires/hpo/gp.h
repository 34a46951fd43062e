// Gaussian-process regression on the unit cube, as scikit-optimize's default
// surrogate: kernel k(a, b) = c * Matern52(r) + noise * [a == b], with
//   r^2 = sum_j ((a_j - b_j) / l_j)^2      (ARD length scales l_j),
//   Matern52(r) = (1 + sqrt5 r + 5/3 r^2) exp(-sqrt5 r),
// on targets normalised to zero mean and unit variance (y_n = (y - m) / s,
// s = population std, 1 if zero). All hyperparameters are in these normalised
// units. Predictions are of the latent function (noise excluded, as skopt
// does for its acquisitions) and are returned in normalised units:
//   raw mean = m + s * mean,  raw variance = s^2 * var.
//
// Heteroscedastic observations: a point may carry its own noise variance
// sigma_i^2 (e.g. the SE^2 of a divergence averaged over K replicas, divided
// by s^2 into normalised units), which then replaces `noise` on that point's
// diagonal entry: K_ii = c + sigma_i^2. Points without one (NaN, the default:
// a single K = 1 observation) keep the homoscedastic `noise`, which the
// likelihood fit estimates from them alone (scikit-learn's array-valued
// alpha, without its white kernel on those points).
//
// Cholesky factors come from Eigen's LLT of K + 1e-10 I (scikit-learn's
// default alpha); if that is not numerically positive definite a further
// 1e-8, 1e-6, ..., 1e-2 times (c + noise) is added to the diagonal until it
// is (the likelihood uses the 1e-10 only). Points can be appended one at a time
// (a new row of the factor, O(n^2)) so that between hyperparameter refits a
// suggestion costs no O(n^3) work.
//
// Thread-safety: const methods may run concurrently; mutation needs exclusive
// access. PredictBatch parallelises with xw::ParallelFor over fixed chunks, so
// results are bitwise identical for any thread count.
#ifndef XWIRES_HPO_GP_H_
#define XWIRES_HPO_GP_H_

#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <vector>

#include "xwires/core/status.h"

namespace xw::hpo {

struct GpHyperparameters {
  double amplitude = 1.0;             // c
  std::vector<double> length_scales;  // l_j, one per dimension
  double noise = 1.0;                 // white-noise variance

  bool operator==(const GpHyperparameters&) const = default;
};

// Bounds and effort of the maximum-likelihood fit (defaults: skopt's).
struct GpFitOptions {
  double amplitude_low = 0.01, amplitude_high = 1000.0;
  double length_scale_low = 0.01, length_scale_high = 100.0;
  bool fit_noise = true;  // false: noise is fixed at fixed_noise
  double noise_low = 1e-5, noise_high = 1e5;
  double fixed_noise = 1e-10;
  // Random restarts (log-uniform within the bounds) besides the given start.
  int n_restarts = 2;
  // Objective evaluations per L-BFGS run and its relative tolerance on the
  // log-likelihood.
  int max_evals = 150;
  double ftol_rel = 1e-8;
};

// Mean and population standard deviation of y (std 1 if it is 0 or y has
// fewer than 2 entries); the normalisation the GP uses.
void TargetNormalization(std::span<const double> y, double* mean, double* std);

// Per-point noise variances in normalised units: empty (every point uses
// hp.noise) or one entry per point, NaN where the point has none.
inline constexpr double kHomoscedastic = std::numeric_limits<double>::quiet_NaN();

// Log marginal likelihood of targets y_norm (already normalised) at unit
// inputs x (row-major [n, dim]) under hp:
//   -1/2 y^T K^-1 y - 1/2 log|K| - n/2 log(2 pi).
// If grad is non-null it receives the gradient with respect to
// theta = (log c, log l_1, ..., log l_dim[, log noise]) -- the noise entry only
// when with_noise_grad; it counts only the points without their own noise.
// Returns -infinity if K cannot be factorised. point_noise: see above.
double LogMarginalLikelihood(std::span<const double> x,
                             std::span<const double> y_norm, int dim,
                             const GpHyperparameters& hp,
                             std::vector<double>* grad,
                             bool with_noise_grad = true,
                             std::span<const double> point_noise = {});

// Maximises the log marginal likelihood over log hyperparameters inside the
// bounds of `opt` with NLopt's L-BFGS and analytic gradients, from `start`
// (clamped to the bounds) and opt.n_restarts log-uniform starts drawn from
// xw::Philox(seed, stream). Restarts run in parallel; the best run wins (ties:
// the earlier start), so the result is deterministic. y is raw (normalised
// here); point_noise is in normalised units (empty, or one entry per point,
// NaN for none), so a caller with raw variances divides them by the
// TargetNormalization std of y first. Needs n >= 1.
Result<GpHyperparameters> FitGpHyperparameters(
    std::span<const double> x, std::span<const double> y, int dim,
    const GpFitOptions& opt, const GpHyperparameters& start, uint64_t seed,
    uint64_t stream, std::span<const double> point_noise = {});

class GaussianProcess {
 public:
  // hp.length_scales must have `dim` positive entries.
  GaussianProcess(int dim, const GpHyperparameters& hp);
  ~GaussianProcess();
  GaussianProcess(GaussianProcess&&) noexcept;
  GaussianProcess& operator=(GaussianProcess&&) noexcept;

  int dim() const;
  int size() const;  // number of data points
  const GpHyperparameters& hyperparameters() const;

  // Replaces the data: x row-major [n, dim] in unit coordinates, y raw,
  // point_noise empty or n normalised variances (NaN: hp.noise), each >= 0.
  // Factorises K with one LLT (with jitter fallback). Sets the normalisation
  // from y and makes the model ready to predict.
  Status Fit(std::span<const double> x, std::span<const double> y,
             std::span<const double> point_noise = {});
  // Adds one point by extending the Cholesky factor; noise is its own
  // normalised noise variance (NaN: hp.noise). The model is not ready to
  // predict until SetNormalization is called.
  void Append(std::span<const double> x, double y,
              double noise = kHomoscedastic);
  // Keeps the first n points (n <= size()); same readiness rule as Append.
  void Truncate(int n);
  // Normalisation (mean, std > 0) applied to all stored targets; recomputes
  // K^-1 y in O(n^2). Callers pass the statistics of the real observations so
  // that appended pseudo-observations (constant-liar lies) do not shift it.
  void SetNormalization(double mean, double std);
  double y_mean() const;
  double y_std() const;
  // The diagonal jitter of the factorisation (1e-10 unless more was needed).
  double jitter() const;

  // Posterior of the latent function at unit point x (dim entries), in
  // normalised units. dmean/dvar (dim entries each, may be null) receive the
  // gradients with respect to x.
  void Predict(const double* x, double* mean, double* var,
               double* dmean = nullptr, double* dvar = nullptr) const;
  // Mean and variance at m points (row-major [m, dim]); parallel.
  void PredictBatch(const double* x, int64_t m, double* mean,
                    double* var) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace xw::hpo

#endif  // XWIRES_HPO_GP_H_
