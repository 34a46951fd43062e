// Log marginal likelihood of the GP, its analytic gradient, and the
// maximum-likelihood fit of the kernel hyperparameters with NLopt's L-BFGS.
#include <nlopt.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

#include "util.h"
#include "xwires/core/parallel.h"
#include "xwires/core/rng.h"
#include "xwires/hpo/gp.h"

namespace xw::hpo {
namespace {

constexpr double kSqrt5 = 2.2360679774997896964;
constexpr double kLog2Pi = 1.8378770664093454836;

// Training inputs and normalised targets, shared read-only by all restarts.
struct PairData {
  int n, dim;
  Eigen::MatrixXd x;  // [n, dim]
  Eigen::VectorXd y;  // normalised targets
  // Points' own noise variances (0 where none) and 1 where the point takes
  // the homoscedastic noise instead.
  Eigen::VectorXd own_noise, homoscedastic;
  bool all_homoscedastic = true;
};

PairData MakePairData(std::span<const double> x, std::span<const double> y_norm,
                      int dim, std::span<const double> point_noise) {
  PairData p;
  p.n = static_cast<int>(y_norm.size());
  p.dim = dim;
  p.own_noise = Eigen::VectorXd::Zero(p.n);
  p.homoscedastic = Eigen::VectorXd::Ones(p.n);
  for (size_t i = 0; i < point_noise.size() && i < y_norm.size(); ++i) {
    if (!std::isnan(point_noise[i])) {
      p.own_noise[i] = point_noise[i];
      p.homoscedastic[i] = 0;
      p.all_homoscedastic = false;
    }
  }
  p.y = Eigen::Map<const Eigen::VectorXd>(y_norm.data(), p.n);
  p.x = Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic,
                                       Eigen::RowMajor>>(x.data(), p.n, dim);
  return p;
}

// Per-run workspace for the likelihood (one per concurrent restart); its
// matrices keep their allocation across evaluations.
class LmlWorkspace {
 public:
  explicit LmlWorkspace(const PairData& p) : p_(p) {}

  // theta = (log c, log l_1..l_dim[, log noise]); noise = fixed_noise when
  // theta has no noise entry. grad (theta.size() entries) may be null.
  double Evaluate(const double* theta, int n_theta, double fixed_noise,
                  double* grad) {
    const int n = p_.n, dim = p_.dim;
    const double c = std::exp(theta[0]);
    const bool fit_noise = n_theta == dim + 2;
    const double noise = fit_noise ? std::exp(theta[dim + 1]) : fixed_noise;
    inv_l2_.resize(dim);
    for (int j = 0; j < dim; ++j) inv_l2_[j] = std::exp(-2.0 * theta[1 + j]);
    // r^2 = |a|^2 + |b|^2 - 2 a.b on length-scaled inputs (one GEMM instead
    // of dim passes over n x n arrays); the diagonal is exactly 0.
    xs_ = p_.x * inv_l2_.cwiseSqrt().asDiagonal();
    xs_sq_ = xs_.rowwise().squaredNorm();
    k_.noalias() = -2.0 * xs_ * xs_.transpose();
    for (int i = 0; i < n; ++i) k_.col(i).array() += xs_sq_.array() + xs_sq_[i];
    k_.diagonal().setZero();
    s_ = k_.array().max(0.0).sqrt() * kSqrt5;
    e_ = (-s_).exp();
    k_ =
        (c * (1.0 + s_ + s_.square() / 3.0) * e_).matrix();  // signal part of K
    kn_ = k_;
    // The base jitter of gp.cc; each point's own noise or the shared one.
    kn_.diagonal().array() +=
        p_.own_noise.array() + noise * p_.homoscedastic.array() + 1e-10;
    llt_.compute(kn_);
    if (llt_.info() != Eigen::Success)
      return -std::numeric_limits<double>::infinity();
    alpha_ = llt_.solve(p_.y);
    const auto& l = llt_.matrixLLT();
    double logdet = 0;
    for (int i = 0; i < n; ++i) logdet += std::log(l(i, i));
    const double lml = -0.5 * p_.y.dot(alpha_) - logdet - 0.5 * n * kLog2Pi;
    if (!grad) return lml;
    // dLML/dtheta = 1/2 tr(W dK/dtheta), W = alpha alpha^T - K^-1.
    kn_.setIdentity(n, n);
    llt_.matrixL().solveInPlace(kn_);  // L^-1
    w_.setZero(n, n);
    w_.selfadjointView<Eigen::Lower>().rankUpdate(kn_.transpose(), -1.0);
    w_.selfadjointView<Eigen::Lower>().rankUpdate(alpha_, 1.0);
    w_ = w_.selfadjointView<Eigen::Lower>();  // full symmetric W
    grad[0] = 0.5 * (w_.array() * k_.array()).sum();
    // dK_ij/dlog l_k = F0_ij (x_ik - x_jk)^2 / l_k^2 with
    // F0 = c 5/3 (1 + s) exp(-s). With F = W o F0 (symmetric),
    // sum_ij F_ij (x_ik - x_jk)^2 = 2 (sum_i x_ik^2 rowsum(F)_i - x_k^T F x_k).
    f_ = (w_.array() * (c * (5.0 / 3.0) * (1.0 + s_) * e_)).matrix();
    fx_.noalias() = f_ * p_.x;
    const Eigen::VectorXd rows = f_.rowwise().sum();
    for (int j = 0; j < dim; ++j) {
      const double quad = p_.x.col(j).dot(fx_.col(j));
      const double sq = (p_.x.col(j).array().square() * rows.array()).sum();
      grad[1 + j] = (sq - quad) * inv_l2_[j];
    }
    if (fit_noise) {
      // (The plain sum when no point has its own noise: the same bits as
      // before per-point noise existed.)
      grad[dim + 1] = 0.5 * noise * (p_.all_homoscedastic
                                         ? w_.diagonal().sum()
                                         : w_.diagonal().dot(p_.homoscedastic));
    }
    return lml;
  }

 private:
  const PairData& p_;
  Eigen::VectorXd inv_l2_, xs_sq_, alpha_;
  Eigen::MatrixXd xs_, k_, kn_, w_, f_, fx_;
  Eigen::ArrayXXd s_, e_;
  Eigen::LLT<Eigen::MatrixXd> llt_;
};

// One bounded L-BFGS run; remembers the best point it evaluated, so a run
// that NLopt ends with a round-off or other error still reports its best.
struct Run {
  LmlWorkspace* ws;
  double fixed_noise;
  int n_theta;
  double best = -std::numeric_limits<double>::infinity();
  std::vector<double> best_theta;
};

double NegLml(unsigned n, const double* theta, double* grad, void* data) {
  Run& r = *static_cast<Run*>(data);
  const double lml =
      r.ws->Evaluate(theta, static_cast<int>(n), r.fixed_noise, grad);
  if (!std::isfinite(lml)) {
    if (grad) std::fill(grad, grad + n, 0.0);
    return 1e300;
  }
  if (lml > r.best) {
    r.best = lml;
    r.best_theta.assign(theta, theta + n);
  }
  if (grad) {
    for (unsigned i = 0; i < n; ++i) grad[i] = -grad[i];
  }
  return -lml;
}

struct NloptDeleter {
  void operator()(nlopt_opt o) const { nlopt_destroy(o); }
};
using NloptPtr =
    std::unique_ptr<std::remove_pointer_t<nlopt_opt>, NloptDeleter>;

void RunLbfgs(Run* run, std::vector<double> theta,
              const std::vector<double>& lo, const std::vector<double>& hi,
              const GpFitOptions& opt) {
  const unsigned n = static_cast<unsigned>(theta.size());
  NloptPtr o(nlopt_create(NLOPT_LD_LBFGS, n));
  nlopt_set_lower_bounds(o.get(), lo.data());
  nlopt_set_upper_bounds(o.get(), hi.data());
  nlopt_set_min_objective(o.get(), NegLml, run);
  nlopt_set_maxeval(o.get(), opt.max_evals);
  nlopt_set_ftol_rel(o.get(), opt.ftol_rel);
  for (unsigned i = 0; i < n; ++i)
    theta[i] = std::clamp(theta[i], lo[i], hi[i]);
  double f = 0;
  nlopt_optimize(o.get(), theta.data(), &f);  // the result code is not needed:
                                              // Run tracks the best point seen
}

}  // namespace

double LogMarginalLikelihood(std::span<const double> x,
                             std::span<const double> y_norm, int dim,
                             const GpHyperparameters& hp,
                             std::vector<double>* grad, bool with_noise_grad,
                             std::span<const double> point_noise) {
  const PairData p = MakePairData(x, y_norm, dim, point_noise);
  LmlWorkspace ws(p);
  std::vector<double> theta = {std::log(hp.amplitude)};
  for (double l : hp.length_scales) theta.push_back(std::log(l));
  if (with_noise_grad) theta.push_back(std::log(hp.noise));
  if (grad) grad->assign(theta.size(), 0.0);
  return ws.Evaluate(theta.data(), static_cast<int>(theta.size()), hp.noise,
                     grad ? grad->data() : nullptr);
}

Result<GpHyperparameters> FitGpHyperparameters(
    std::span<const double> x, std::span<const double> y, int dim,
    const GpFitOptions& opt, const GpHyperparameters& start, uint64_t seed,
    uint64_t stream, std::span<const double> point_noise) {
  const size_t n = y.size();
  if (n == 0 || x.size() != n * dim ||
      static_cast<int>(start.length_scales.size()) != dim) {
    return Status::InvalidArgument(
        "GP hyperparameter fit: need n >= 1 points of " + std::to_string(dim) +
        " coordinates and " + std::to_string(dim) + " start length scales");
  }
  if (!point_noise.empty() && point_noise.size() != n) {
    return Status::InvalidArgument(
        "GP hyperparameter fit: " + std::to_string(point_noise.size()) +
        " noise variances for " + std::to_string(n) + " points");
  }
  for (double v : point_noise) {
    if (!std::isnan(v) && !(v >= 0 && std::isfinite(v))) {
      return Status::InvalidArgument(
          "GP hyperparameter fit: a noise variance is " + std::to_string(v) +
          ", not >= 0");
    }
  }
  double mean, std;
  TargetNormalization(y, &mean, &std);
  std::vector<double> yn(n);
  for (size_t i = 0; i < n; ++i) yn[i] = (y[i] - mean) / std;
  const PairData pairs = MakePairData(x, yn, dim, point_noise);

  std::vector<double> lo = {std::log(opt.amplitude_low)},
                      hi = {std::log(opt.amplitude_high)};
  for (int j = 0; j < dim; ++j) {
    lo.push_back(std::log(opt.length_scale_low));
    hi.push_back(std::log(opt.length_scale_high));
  }
  if (opt.fit_noise) {
    lo.push_back(std::log(opt.noise_low));
    hi.push_back(std::log(opt.noise_high));
  }
  const int n_theta = static_cast<int>(lo.size());
  std::vector<std::vector<double>> starts;
  std::vector<double> t0 = {std::log(start.amplitude)};
  for (double l : start.length_scales) t0.push_back(std::log(l));
  if (opt.fit_noise) t0.push_back(std::log(start.noise));
  starts.push_back(t0);
  const Philox rng(seed, stream);
  for (int r = 0; r < opt.n_restarts; ++r) {
    std::vector<double> t(n_theta);
    for (int i = 0; i < n_theta; ++i) {
      t[i] = lo[i] +
             (hi[i] - lo[i]) * internal::UniformDouble(rng, r * n_theta + i);
    }
    starts.push_back(std::move(t));
  }
  std::vector<Run> runs(starts.size());
  ParallelFor(static_cast<int64_t>(starts.size()), 1,
              [&](int64_t b, int64_t e) {
                for (int64_t s = b; s < e; ++s) {
                  LmlWorkspace ws(pairs);
                  runs[s] = Run{&ws,
                                opt.fixed_noise,
                                n_theta,
                                -std::numeric_limits<double>::infinity(),
                                {}};
                  RunLbfgs(&runs[s], starts[s], lo, hi, opt);
                  runs[s].ws = nullptr;
                }
              });
  int best = -1;
  for (int s = 0; s < static_cast<int>(runs.size()); ++s) {
    if (!runs[s].best_theta.empty() &&
        (best < 0 || runs[s].best > runs[best].best))
      best = s;
  }
  if (best < 0) {
    return Status::Internal(
        "GP hyperparameter fit: the kernel matrix could not be factorised "
        "at any start point");
  }
  const std::vector<double>& t = runs[best].best_theta;
  GpHyperparameters hp;
  // exp(log(bound)) may round just outside the bound: clamp.
  hp.amplitude =
      std::clamp(std::exp(t[0]), opt.amplitude_low, opt.amplitude_high);
  for (int j = 0; j < dim; ++j) {
    hp.length_scales.push_back(std::clamp(
        std::exp(t[1 + j]), opt.length_scale_low, opt.length_scale_high));
  }
  hp.noise = opt.fit_noise ? std::clamp(std::exp(t[dim + 1]), opt.noise_low,
                                        opt.noise_high)
                           : opt.fixed_noise;
  return hp;
}

}  // namespace xw::hpo
