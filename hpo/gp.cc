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
  Eigen::MatrixXd l;  // lower Cholesky factor, [capacity, capacity]
  Eigen::VectorXd alpha;
  double y_mean = 0, y_std = 1;

  void Reserve(int cap) {
    if (cap <= x.rows()) return;
    const int c2 = std::max<int>(cap, 2 * static_cast<int>(x.rows()));
    x.conservativeResize(c2, dim);
    y.conservativeResize(c2);
    l.conservativeResize(c2, c2);
  }

  // k(p, x_i) for i < n into k; optionally the factor c*5/3*(1+s)*exp(-s)
  // that the x-gradient needs.
  void KernelRow(const double* p, Eigen::VectorXd* k, Eigen::VectorXd* g) const {
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
  for (int j = 0; j < dim; ++j) m.inv_ls2[j] = 1.0 / (hp.length_scales[j] * hp.length_scales[j]);
  m.c = hp.amplitude;
  m.noise = hp.noise;
  m.x.resize(0, dim);
}
GaussianProcess::~GaussianProcess() = default;
GaussianProcess::GaussianProcess(GaussianProcess&&) noexcept = default;
GaussianProcess& GaussianProcess::operator=(GaussianProcess&&) noexcept = default;

int GaussianProcess::dim() const { return impl_->dim; }
int GaussianProcess::size() const { return impl_->n; }
const GpHyperparameters& GaussianProcess::hyperparameters() const { return impl_->hp; }
double GaussianProcess::y_mean() const { return impl_->y_mean; }
double GaussianProcess::y_std() const { return impl_->y_std; }
double GaussianProcess::jitter() const { return impl_->jitter; }

Status GaussianProcess::Fit(std::span<const double> x, std::span<const double> y) {
  Impl& m = *impl_;
  const int n = static_cast<int>(y.size());
  if (x.size() != static_cast<size_t>(n) * m.dim) {
    return Status::InvalidArgument("GP fit: x has " + std::to_string(x.size()) +
                                   " values, expected n*dim = " +
                                   std::to_string(static_cast<size_t>(n) * m.dim));
  }
  m.n = 0;
  m.Reserve(std::max(n, 8));
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < m.dim; ++j) m.x(i, j) = x[static_cast<size_t>(i) * m.dim + j];
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
  const double scale = m.c + m.noise;
  Eigen::LLT<Eigen::MatrixXd> llt;
  m.jitter = kBaseJitter;
  for (double rel : {0.0, 1e-8, 1e-6, 1e-4, 1e-2}) {
    m.jitter = kBaseJitter + rel * scale;
    Eigen::MatrixXd kk = k;
    kk.diagonal().array() += m.noise + m.jitter;
    llt.compute(kk);
    if (llt.info() == Eigen::Success) break;
    if (rel == 1e-2) {
      return Status::Internal("GP fit: kernel matrix is not positive definite even with jitter");
    }
  }
  m.l.topLeftCorner(n, n) = llt.matrixL();
  double mean, std;
  TargetNormalization(y, &mean, &std);
  SetNormalization(mean, std);
  return Status::OK();
}

void GaussianProcess::Append(std::span<const double> x, double y) {
  Impl& m = *impl_;
  const int n = m.n;
  m.Reserve(n + 1);
  Eigen::VectorXd k;
  m.KernelRow(x.data(), &k, nullptr);
  if (n > 0) m.l.topLeftCorner(n, n).triangularView<Eigen::Lower>().solveInPlace(k);
  // Schur complement; a floor keeps the factor valid when the new point
  // (nearly) repeats an old one and the noise is tiny.
  const double floor = std::max(m.jitter, 1e-10 * (m.c + m.noise));
  const double d2 = std::max(m.c + m.noise + m.jitter - k.squaredNorm(), floor);
  m.l.row(n).head(n) = k.transpose();
  m.l(n, n) = std::sqrt(d2);
  for (int j = 0; j < m.dim; ++j) m.x(n, j) = x[j];
  m.y[n] = y;
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

void GaussianProcess::Predict(const double* x, double* mean, double* var, double* dmean,
                              double* dvar) const {
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
  const auto l = m.l.topLeftCorner(n, n);
  Eigen::VectorXd v = l.triangularView<Eigen::Lower>().solve(k);
  *var = std::max(m.c - v.squaredNorm(), 0.0);
  if (!grad) return;
  // dk_i/dx_j = -g_i (x_j - x_ij) / l_j^2.
  Eigen::VectorXd w;  // K^-1 k
  if (dvar) w = l.transpose().triangularView<Eigen::Upper>().solve(v);
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
  ParallelFor(count, kPredictGrain, [&](int64_t b, int64_t e) {
    const int64_t rows = e - b;
    if (n == 0) {
      for (int64_t i = b; i < e; ++i) mean[i] = 0, var[i] = m.c;
      return;
    }
    // r2[i, t]: squared scaled distance of training point i to candidate t.
    Eigen::ArrayXXd r2 = Eigen::ArrayXXd::Zero(n, rows);
    for (int64_t t = 0; t < rows; ++t) {
      const double* p = x + (b + t) * m.dim;
      for (int j = 0; j < m.dim; ++j) {
        r2.col(t) += (m.x.col(j).head(n).array() - p[j]).square() * m.inv_ls2[j];
      }
    }
    const Eigen::ArrayXXd s = kSqrt5 * r2.sqrt();
    Eigen::MatrixXd ks = (m.c * (1.0 + s + s.square() / 3.0) * (-s).exp()).matrix();
    Eigen::Map<Eigen::VectorXd>(mean + b, rows).noalias() = ks.transpose() * m.alpha;
    m.l.topLeftCorner(n, n).triangularView<Eigen::Lower>().solveInPlace(ks);
    const Eigen::VectorXd sq = ks.colwise().squaredNorm().transpose();
    for (int64_t t = 0; t < rows; ++t) var[b + t] = std::max(m.c - sq[t], 0.0);
  });
}

}  // namespace xw::hpo
