// Acquisition optimisation: rank a quasi-random candidate set, then polish the
// best few with bounded L-BFGS (NLopt) using the GP's analytic gradients.
#include <nlopt.h>

#include <algorithm>
#include <limits>
#include <memory>
#include <numeric>

#include "optimizer_internal.h"
#include "xwires/core/parallel.h"

namespace xw::hpo::internal {
namespace {

// Ranked candidates kept per arm as fallbacks behind the local optima.
constexpr int kFallbackCandidates = 64;

struct LocalRun {
  const GaussianProcess* gp;
  AcquisitionKind kind;
  double y_best;
  const AcquisitionParams* params;
  std::vector<double> dmean, dvar;
  std::vector<double> best_x;
  double best = std::numeric_limits<double>::infinity();
};

double AcqObjective(unsigned n, const double* x, double* grad, void* data) {
  LocalRun& r = *static_cast<LocalRun*>(data);
  double mu = 0, var = 0, d_mu = 0, d_var = 0;
  r.gp->Predict(x, &mu, &var, grad ? r.dmean.data() : nullptr,
                grad ? r.dvar.data() : nullptr);
  const double v =
      AcquisitionValue(r.kind, mu, var, r.y_best, *r.params, &d_mu, &d_var);
  if (grad) {
    for (unsigned j = 0; j < n; ++j)
      grad[j] = d_mu * r.dmean[j] + d_var * r.dvar[j];
  }
  if (v < r.best) {
    r.best = v;
    r.best_x.assign(x, x + n);
  }
  return v;
}

struct NloptDeleter {
  void operator()(nlopt_opt o) const { nlopt_destroy(o); }
};

// Runs bounded L-BFGS on the unit cube from x0; returns the best point seen
// (x0 itself if nothing better was found).
Proposal Polish(const GaussianProcess& gp, AcquisitionKind kind, double y_best,
                const AcquisitionParams& params, std::vector<double> x0,
                double v0, int max_evals) {
  const unsigned d = static_cast<unsigned>(x0.size());
  LocalRun run{&gp,
               kind,
               y_best,
               &params,
               std::vector<double>(d),
               std::vector<double>(d),
               x0,
               v0};
  std::unique_ptr<std::remove_pointer_t<nlopt_opt>, NloptDeleter> o(
      nlopt_create(NLOPT_LD_LBFGS, d));
  const std::vector<double> lo(d, 0.0), hi(d, 1.0);
  nlopt_set_lower_bounds(o.get(), lo.data());
  nlopt_set_upper_bounds(o.get(), hi.data());
  nlopt_set_min_objective(o.get(), AcqObjective, &run);
  nlopt_set_maxeval(o.get(), max_evals);
  nlopt_set_ftol_rel(o.get(), 1e-9);
  double f = 0;
  nlopt_optimize(o.get(), x0.data(), &f);  // run.best_x is the answer
  for (double& v : run.best_x) v = std::clamp(v, 0.0, 1.0);
  return Proposal{run.best_x, run.best};
}

bool Better(const Proposal& a, const Proposal& b) { return a.value < b.value; }

}  // namespace

std::vector<std::vector<Proposal>> ProposeByArm(
    const GaussianProcess& gp, const std::vector<AcquisitionKind>& arms,
    double y_best, const AcquisitionParams& params,
    const std::vector<double>& candidates, const std::vector<double>& mean,
    const std::vector<double>& var, int n_local, int local_max_evals) {
  const int dim = gp.dim();
  const int64_t m = static_cast<int64_t>(mean.size());
  const int n_arms = static_cast<int>(arms.size());
  const int keep = static_cast<int>(
      std::min<int64_t>(m, std::max(n_local, kFallbackCandidates)));
  n_local = std::min(n_local, keep);
  // Rank the candidates for every arm (ties broken by index: deterministic).
  std::vector<std::vector<int64_t>> ranked(n_arms);
  std::vector<std::vector<double>> values(n_arms, std::vector<double>(m));
  for (int a = 0; a < n_arms; ++a) {
    for (int64_t i = 0; i < m; ++i) {
      values[a][i] = AcquisitionValue(arms[a], mean[i], var[i], y_best, params);
    }
    std::vector<int64_t> idx(m);
    std::iota(idx.begin(), idx.end(), 0);
    std::partial_sort(idx.begin(), idx.begin() + keep, idx.end(),
                      [&](int64_t p, int64_t q) {
                        return values[a][p] < values[a][q] ||
                               (values[a][p] == values[a][q] && p < q);
                      });
    idx.resize(keep);
    ranked[a] = std::move(idx);
  }
  auto candidate = [&](int64_t i) {
    return std::vector<double>(candidates.begin() + i * dim,
                               candidates.begin() + (i + 1) * dim);
  };
  // Local runs, one task per (arm, start); each writes only its own slot.
  std::vector<Proposal> local(static_cast<size_t>(n_arms) * n_local);
  ParallelFor(static_cast<int64_t>(local.size()), 1, [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      const int a = static_cast<int>(t / n_local);
      const int64_t i = ranked[a][t % n_local];
      local[t] = Polish(gp, arms[a], y_best, params, candidate(i), values[a][i],
                        local_max_evals);
    }
  });
  std::vector<std::vector<Proposal>> out(n_arms);
  for (int a = 0; a < n_arms; ++a) {
    std::vector<Proposal>& list = out[a];
    list.assign(local.begin() + a * n_local, local.begin() + (a + 1) * n_local);
    std::stable_sort(list.begin(), list.end(), Better);
    for (int64_t i : ranked[a])
      list.push_back(Proposal{candidate(i), values[a][i]});
  }
  return out;
}

}  // namespace xw::hpo::internal
