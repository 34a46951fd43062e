// GaussianProcess: data, Cholesky factor (full LLT or row appends) and
// predictions. The likelihood and its fit live in gp_fit.cc.
#include "xwires/hpo/gp.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>

#include "xwires/core/parallel.h"

namespace xw::hpo {
namespace {

constexpr double kSqrt5 = 2.2360679774997896964;
// Candidates per ParallelFor chunk in PredictBatch: fixed, so the bits of each
// prediction do not depend on the thread count.
constexpr int64_t kPredictGrain = 256;
// Always on the diagonal, as scikit-learn's GaussianProcessRegressor alpha.
constexpr double kBaseJitter = 1e-10;

}  // namespace

void TargetNormalization(std::span<const double> y, double* mean, double* std) {
  const size_t n = y.size();
  double m = 0;
  for (double v : y) m += v;
  m = n ? m / static_cast<double>(n) : 0.0;
  double ss = 0;
  for (double v : y) ss += (v - m) * (v - m);
  double s = n ? std::sqrt(ss / static_cast<double>(n)) : 0.0;
  *mean = m;
  *std = (s > 0 && std::isfinite(s)) ? s : 1.0;
}

struct GaussianProcess::Impl {
  int dim;
  GpHyperparameters hp;
  Eigen::VectorXd inv_ls2;  // 1 / l_j^2
  double c, noise, jitter = kBaseJitter;
  int n = 0;
  Eigen::MatrixXd x;  // [capacity, dim]
  Eigen::VectorXd y;  // raw targets, capacity
  // Each point's noise variance on the diagonal: its own, or hp.noise.
  Eigen::VectorXd diag_noise;
  Eigen::MatrixXd l;  // lower Cholesky factor L, [capacity, capacity]
  // L^-1 (lower; its upper triangle is kept exactly zero), so that variances
  // are matrix products rather than triangular solves.
  Eigen::MatrixXd li;
  Eigen::VectorXd alpha;
  double y_mean = 0, y_std = 1;

  void Reserve(int cap) {
    if (cap <= x.rows()) return;
    const int c2 = std::max<int>(cap, 2 * static_cast<int>(x.rows()));
    x.conservativeResize(c2, dim);
    y.conservativeResize(c2);
    diag_noise.conservativeResize(c2);
    l.conservativeResize(c2, c2);
    li.conservativeResize(c2, c2);
  }

  // k(p, x_i) for i < n into k; optionally the factor c*5/3*(1+s)*exp(-s)
  // that the x-gradient needs.
  void KernelRow(const double* p, Eigen::VectorXd* k,
                 Eigen::VectorXd* g) const {
    Eigen::ArrayXd r2 = Eigen::ArrayXd::Zero(n);
    for (int j = 0; j < dim; ++j) {
      r2 += (x.col(j).head(n).array() - p[j]).square() * inv_ls2[j];
    }
    const Eigen::ArrayXd s = kSqrt5 * r2.sqrt();
    const Eigen::ArrayXd e = (-s).exp();
    *k = (c * (1.0 + s + s.square() / 3.0) * e).matrix();
    if (g) *g = (c * (5.0 / 3.0) * (1.0 + s) * e).matrix();
  }
};

GaussianProcess::GaussianProcess(int dim, const GpHyperparameters& hp)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.dim = dim;
  m.hp = hp;
  m.inv_ls2.resize(dim);
  for (int j = 0; j < dim; ++j)
    m.inv_ls2[j] = 1.0 / (hp.length_scales[j] * hp.length_scales[j]);
  m.c = hp.amplitude;
  m.noise = hp.noise;
  m.x.resize(0, dim);
}
GaussianProcess::~GaussianProcess() = default;
GaussianProcess::GaussianProcess(GaussianProcess&&) noexcept = default;
GaussianProcess& GaussianProcess::operator=(GaussianProcess&&) noexcept =
    default;

int GaussianProcess::dim() const { return impl_->dim; }
int GaussianProcess::size() const { return impl_->n; }
const GpHyperparameters& GaussianProcess::hyperparameters() const {
  return impl_->hp;
}
double GaussianProcess::y_mean() const { return impl_->y_mean; }
double GaussianProcess::y_std() const { return impl_->y_std; }
double GaussianProcess::jitter() const { return impl_->jitter; }

Status GaussianProcess::Fit(std::span<const double> x,
                            std::span<const double> y,
                            std::span<const double> point_noise) {
  Impl& m = *impl_;
  const int n = static_cast<int>(y.size());
  if (x.size() != static_cast<size_t>(n) * m.dim) {
    return Status::InvalidArgument(
        "GP fit: x has " + std::to_string(x.size()) +
        " values, expected n*dim = " +
        std::to_string(static_cast<size_t>(n) * m.dim));
  }
  if (!point_noise.empty() && point_noise.size() != y.size()) {
    return Status::InvalidArgument(
        "GP fit: " + std::to_string(point_noise.size()) +
        " noise variances for " + std::to_string(n) + " points");
  }
  for (size_t i = 0; i < point_noise.size(); ++i) {
    const double v = point_noise[i];
    if (!std::isnan(v) && !(v >= 0 && std::isfinite(v))) {
      return Status::InvalidArgument("GP fit: noise variance of point " +
                                     std::to_string(i) + " is " +
                                     std::to_string(v) + ", not >= 0");
    }
  }
  m.n = 0;
  m.Reserve(std::max(n, 8));
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < m.dim; ++j)
      m.x(i, j) = x[static_cast<size_t>(i) * m.dim + j];
    m.y[i] = y[i];
  }
  m.n = n;
  // Full kernel matrix, then LLT with escalating jitter.
  Eigen::MatrixXd k(n, n);
  Eigen::VectorXd row;
  for (int i = 0; i < n; ++i) {
    Eigen::VectorXd p = m.x.row(i).transpose();
    m.KernelRow(p.data(), &row, nullptr);
    k.col(i) = row;
  }
  for (int i = 0; i < n; ++i) {
    m.diag_noise[i] = point_noise.empty() || std::isnan(point_noise[i])
                          ? m.noise
                          : point_noise[i];
  }
  const double scale = m.c + m.noise;
  Eigen::LLT<Eigen::MatrixXd> llt;
  m.jitter = kBaseJitter;
  for (double rel : {0.0, 1e-8, 1e-6, 1e-4, 1e-2}) {
    m.jitter = kBaseJitter + rel * scale;
    Eigen::MatrixXd kk = k;
    kk.diagonal().array() += m.diag_noise.head(n).array() + m.jitter;
    llt.compute(kk);
    if (llt.info() == Eigen::Success) break;
    if (rel == 1e-2) {
      return Status::Internal(
          "GP fit: kernel matrix is not positive definite even with jitter");
    }
  }
  m.l.topLeftCorner(n, n) = llt.matrixL();
  auto li = m.li.topLeftCorner(n, n);
  li.setIdentity();
  llt.matrixL().solveInPlace(li);
  double mean, std;
  TargetNormalization(y, &mean, &std);
  SetNormalization(mean, std);
  return Status::OK();
}

void GaussianProcess::Append(std::span<const double> x, double y,
                             double noise) {
  Impl& m = *impl_;
  const int n = m.n;
  m.Reserve(n + 1);
  const double own = std::isnan(noise) ? m.noise : noise;
  Eigen::VectorXd k;
  m.KernelRow(x.data(), &k, nullptr);
  if (n > 0)
    k = m.li.topLeftCorner(n, n).triangularView<Eigen::Lower>() * k;  // L^-1 k
  // Schur complement; a floor keeps the factor valid when the new point
  // (nearly) repeats an old one and the noise is tiny.
  const double floor = std::max(m.jitter, 1e-10 * (m.c + m.noise));
  const double d2 = std::max(m.c + own + m.jitter - k.squaredNorm(), floor);
  const double d = std::sqrt(d2);
  m.l.row(n).head(n) = k.transpose();
  m.l(n, n) = d;
  // [L 0; l^T d]^-1 = [L^-1 0; -l^T L^-1 / d, 1/d].
  m.li.row(n).head(n).noalias() =
      -(k.transpose() *
        m.li.topLeftCorner(n, n).triangularView<Eigen::Lower>()) /
      d;
  m.li.col(n).head(n).setZero();
  m.li(n, n) = 1.0 / d;
  for (int j = 0; j < m.dim; ++j) m.x(n, j) = x[j];
  m.y[n] = y;
  m.diag_noise[n] = own;
  m.n = n + 1;
}

void GaussianProcess::Truncate(int n) { impl_->n = std::clamp(n, 0, impl_->n); }

void GaussianProcess::SetNormalization(double mean, double std) {
  Impl& m = *impl_;
  m.y_mean = mean;
  m.y_std = std;
  m.alpha = (m.y.head(m.n).array() - mean) / std;
  const auto l = m.l.topLeftCorner(m.n, m.n);
  l.triangularView<Eigen::Lower>().solveInPlace(m.alpha);
  l.transpose().triangularView<Eigen::Upper>().solveInPlace(m.alpha);
}

void GaussianProcess::Predict(const double* x, double* mean, double* var,
                              double* dmean, double* dvar) const {
  const Impl& m = *impl_;
  const int n = m.n;
  if (n == 0) {
    *mean = 0;
    *var = m.c;
    if (dmean) std::fill(dmean, dmean + m.dim, 0.0);
    if (dvar) std::fill(dvar, dvar + m.dim, 0.0);
    return;
  }
  Eigen::VectorXd k, g;
  const bool grad = dmean || dvar;
  m.KernelRow(x, &k, grad ? &g : nullptr);
  *mean = k.dot(m.alpha);
  const auto li = m.li.topLeftCorner(n, n);
  const Eigen::VectorXd v = li.triangularView<Eigen::Lower>() * k;  // L^-1 k
  *var = std::max(m.c - v.squaredNorm(), 0.0);
  if (!grad) return;
  // dk_i/dx_j = -g_i (x_j - x_ij) / l_j^2.
  Eigen::VectorXd w;  // K^-1 k
  if (dvar) w = li.transpose().triangularView<Eigen::Upper>() * v;
  for (int j = 0; j < m.dim; ++j) {
    const Eigen::ArrayXd dk =
        -g.array() * (x[j] - m.x.col(j).head(n).array()) * m.inv_ls2[j];
    if (dmean) dmean[j] = (dk * m.alpha.array()).sum();
    if (dvar) dvar[j] = -2.0 * (dk * w.array()).sum();
  }
}

void GaussianProcess::PredictBatch(const double* x, int64_t count, double* mean,
                                   double* var) const {
  const Impl& m = *impl_;
  const int n = m.n;
  if (n == 0) {
    std::fill(mean, mean + count, 0.0);
    std::fill(var, var + count, m.c);
    return;
  }
  // Scaled training inputs and their squared norms, for
  // r^2 = |a|^2 + |b|^2 - 2 a.b (the cancellation error, ~1e-16 |a|^2, moves
  // the Matern value by O(error), far below anything the acquisition sees).
  const Eigen::VectorXd inv_l = m.inv_ls2.cwiseSqrt();
  const Eigen::MatrixXd xs = m.x.topRows(n) * inv_l.asDiagonal();
  const Eigen::VectorXd xs_sq = xs.rowwise().squaredNorm();
  const Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic,
                                       Eigen::RowMajor>>
      all(x, count, m.dim);
  ParallelFor(count, kPredictGrain, [&](int64_t b, int64_t e) {
    const int64_t rows = e - b;
    // Per-thread scratch: re-allocating these blocks for every chunk costs
    // more in page faults than the arithmetic.
    thread_local Eigen::MatrixXd cs, ks, v;
    thread_local Eigen::ArrayXXd s;
    cs = all.middleRows(b, rows) * inv_l.asDiagonal();
    ks.noalias() = -2.0 * xs * cs.transpose();  // [n, rows]
    for (int64_t t = 0; t < rows; ++t) {
      ks.col(t).array() += xs_sq.array() + cs.row(t).squaredNorm();
    }
    s = ks.array().max(0.0).sqrt() * kSqrt5;
    ks = (m.c * (1.0 + s + s.square() / 3.0) * (-s).exp()).matrix();
    Eigen::Map<Eigen::VectorXd>(mean + b, rows).noalias() =
        ks.transpose() * m.alpha;
    v.noalias() = m.li.topLeftCorner(n, n).triangularView<Eigen::Lower>() *
                  ks;  // L^-1 K*
    for (int64_t t = 0; t < rows; ++t)
      var[b + t] = std::max(m.c - v.col(t).squaredNorm(), 0.0);
  });
}

}  // namespace xw::hpo
