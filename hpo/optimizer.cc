#include "xwires/hpo/optimizer.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "optimizer_internal.h"
#include "util.h"
#include "xwires/core/rng.h"
#include "xwires/hpo/sobol.h"

namespace xw::hpo {

using internal::Num;

struct GpOptimizer::Impl {
  SearchSpace space;
  OptimizerOptions opt;
  int dim;
  Sobol sobol;
  std::vector<double> xu;  // observations, snapped unit coordinates, row-major
  std::vector<double> ys;
  // Each observation's own noise variance in raw target units (the SE^2 of
  // a replicated divergence), NaN for none; all_shared while none has one.
  std::vector<double> noise;
  bool all_shared = true;
  double fit_var = 1;  // std^2 of the targets gp was fitted to
  std::map<int, GpHyperparameters> fits;  // refit point -> hyperparameters
  std::map<int, GpHyperparameters> early_fits;  // see EarlyHyper
  std::unique_ptr<GaussianProcess> gp;
  int gp_key = 0;   // refit point of gp's hyperparameters (-n: early fit at n)
  int gp_real = 0;  // leading rows of gp that are real observations
  HedgeState hedge;

  Impl(SearchSpace s, OptimizerOptions o)
      : space(std::move(s)),
        opt(std::move(o)),
        dim(space.size()),
        sobol(Sobol::Create(dim).value()) {}

  int n() const { return static_cast<int>(ys.size()); }
  const double* Row(int i) const { return &xu[static_cast<size_t>(i) * dim]; }

  bool IsRefitPoint(int m) const {
    return m >= 2 && (m <= opt.refit_dense_until || m % opt.refit_every == 0);
  }
  // Largest refit point <= m, or 0 if there is none yet.
  int RefitPointFor(int m) const {
    for (; m >= 2; --m) {
      if (IsRefitPoint(m)) return m;
    }
    return 0;
  }

  // The first m observations' own noise variances in the normalised units of
  // a fit to those m targets; empty when none has one (the homoscedastic
  // model, bit for bit as before per-point noise existed).
  std::vector<double> NormalisedNoise(int m) const {
    if (all_shared) return {};
    double mean, std;
    TargetNormalization(std::span(ys.data(), m), &mean, &std);
    std::vector<double> out(noise.begin(), noise.begin() + m);
    for (double& v : out) v /= std * std;  // NaN stays NaN
    return out;
  }

  GpHyperparameters DefaultHyper() const {
    GpHyperparameters hp;
    hp.length_scales.assign(dim, 1.0);
    hp.noise = opt.gp.fit_noise ? 1.0 : opt.gp.fixed_noise;
    return hp;
  }

  // Hyperparameters at refit point m, computing the warm-start chain of
  // earlier refit points that is still missing.
  Result<GpHyperparameters> HyperAt(int m) {
    if (auto it = fits.find(m); it != fits.end()) return it->second;
    auto prev = fits.lower_bound(m);
    int from = 2;
    GpHyperparameters start = DefaultHyper();
    if (prev != fits.begin()) {
      --prev;
      from = prev->first + 1;
      start = prev->second;
    }
    for (int p = from; p <= m; ++p) {
      if (!IsRefitPoint(p)) continue;
      GpFitOptions fit = opt.gp;
      if (p > opt.refit_dense_until && p % opt.restart_every != 0)
        fit.n_restarts = 0;
      XW_ASSIGN_OR_RETURN(
          start, FitGpHyperparameters(
                     std::span(xu.data(), static_cast<size_t>(p) * dim),
                     std::span(ys.data(), p), dim, fit, start, opt.seed,
                     MixStream(StreamId("hpo/gp/restarts"), p),
                     NormalisedNoise(p)));
      fits[p] = start;
    }
    return start;
  }

  // Before the first refit point (a schedule with refit_dense_until < 2 and
  // refit_every > n) the model is fitted to all n observations from the
  // default start with restarts; such fits never seed the warm-start chain,
  // so the chain stays a function of the observations alone.
  Result<GpHyperparameters> EarlyHyper(int m) {
    if (auto it = early_fits.find(m); it != early_fits.end()) return it->second;
    XW_ASSIGN_OR_RETURN(
        GpHyperparameters hp,
        FitGpHyperparameters(std::span(xu.data(), static_cast<size_t>(m) * dim),
                             std::span(ys.data(), m), dim, opt.gp,
                             DefaultHyper(), opt.seed,
                             MixStream(StreamId("hpo/gp/restarts"), m),
                             NormalisedNoise(m)));
    early_fits[m] = hp;
    return hp;
  }

  // Makes gp a model of the real observations only (no lies), normalised.
  Status PrepareModel() {
    int m = RefitPointFor(n());
    const bool early = m == 0;
    if (early) m = n();
    XW_ASSIGN_OR_RETURN(GpHyperparameters hp,
                        early ? EarlyHyper(m) : HyperAt(m));
    const int key = early ? -m : m;
    if (!gp || gp_key != key || gp_real > n()) {
      gp = std::make_unique<GaussianProcess>(dim, hp);
      XW_RETURN_IF_ERROR(
          gp->Fit(std::span(xu.data(), static_cast<size_t>(m) * dim),
                  std::span(ys.data(), m), NormalisedNoise(m)));
      fit_var = gp->y_std() * gp->y_std();
      gp_key = key;
      gp_real = m;
    }
    gp->Truncate(gp_real);
    for (; gp_real < n(); ++gp_real) {
      // Later points share the fit's units: their noise is scaled by the
      // same std as the kernel's amplitude and shared noise.
      gp->Append(std::span(Row(gp_real), dim), ys[gp_real],
                 noise[gp_real] / fit_var);
    }
    Renormalize();
    return Status::OK();
  }

  void Renormalize() {
    double mean, std;
    TargetNormalization(ys, &mean, &std);
    gp->SetNormalization(mean, std);
  }

  double Lie() const {
    switch (opt.liar) {
      case LiarStrategy::kMin:
        return *std::min_element(ys.begin(), ys.end());
      case LiarStrategy::kMax:
        return *std::max_element(ys.begin(), ys.end());
      case LiarStrategy::kMean:
        break;
    }
    double s = 0;
    for (double y : ys) s += y;
    return s / n();
  }

  // Charges each hedge arm the refitted model's mean at its last proposal.
  void ChargeHedge() {
    if (hedge.proposals.size() != 3 || n() <= hedge.proposal_n) return;
    for (int a = 0; a < 3; ++a) {
      double mu, var;
      gp->Predict(hedge.proposals[a].data(), &mu, &var);
      hedge.gains[a] -= mu;
    }
    hedge.proposals.clear();
  }

  bool FarFrom(const std::vector<double>& u,
               const std::vector<std::vector<double>>& taken) const {
    const double min2 = opt.min_distance * opt.min_distance;
    for (int i = 0; i < n(); ++i) {
      double d2 = 0;
      for (int j = 0; j < dim; ++j)
        d2 += (u[j] - Row(i)[j]) * (u[j] - Row(i)[j]);
      if (d2 < min2) return false;
    }
    for (const auto& t : taken) {
      double d2 = 0;
      for (int j = 0; j < dim; ++j) d2 += (u[j] - t[j]) * (u[j] - t[j]);
      if (d2 < min2) return false;
    }
    return true;
  }

  // Design point k, or (attempt >= 1) random replacements until one is far
  // enough from every taken point.
  Result<std::vector<double>> DesignPoint(
      uint64_t k, const std::vector<std::vector<double>>& taken,
      uint64_t first_attempt = 0) const {
    for (uint64_t attempt = first_attempt; attempt < 4096; ++attempt) {
      std::vector<double> u = space.Snap(internal::InitialDesignPoint(
          opt.initial_design, dim, opt.n_initial_points, opt.seed, k, attempt));
      if (FarFrom(u, taken)) return u;
    }
    return Status::FailedPrecondition(
        "no point of the search space is at least min_distance = " +
        Num(opt.min_distance) + " from the " +
        std::to_string(n() + taken.size()) +
        " observed and pending points (is the space exhausted?)");
  }

  Result<std::vector<double>> ModelPoint(
      uint64_t key, bool first, const std::vector<std::vector<double>>& taken);
};

Result<std::vector<double>> GpOptimizer::Impl::ModelPoint(
    uint64_t key, bool first, const std::vector<std::vector<double>>& taken) {
  const std::vector<double> cand =
      internal::SobolCandidates(sobol, opt.n_candidates, opt.seed,
                                MixStream(StreamId("hpo/candidates"), key));
  std::vector<double> mean(opt.n_candidates), var(opt.n_candidates);
  gp->PredictBatch(cand.data(), opt.n_candidates, mean.data(), var.data());
  const double y_best =
      (*std::min_element(ys.begin(), ys.end()) - gp->y_mean()) / gp->y_std();

  const bool hedge_on = opt.acquisition == AcquisitionKind::kGpHedge;
  const double draw =
      internal::UniformDouble(Philox(opt.seed, StreamId("hpo/hedge")), key);
  int arm = 0;
  std::vector<AcquisitionKind> arms = {opt.acquisition};
  if (hedge_on) {
    const std::array<double, 3> p =
        HedgeProbabilities(hedge.gains, opt.acq.eta);
    arm = draw < p[0] ? 0 : (draw < p[0] + p[1] ? 1 : 2);
    // The first suggestion of an Ask evaluates every arm (the portfolio needs
    // all three proposals); later ones only the drawn arm.
    arms = first ? std::vector<AcquisitionKind>(kHedgeArms.begin(),
                                                kHedgeArms.end())
                 : std::vector<AcquisitionKind>{kHedgeArms[arm]};
  }
  const auto proposals =
      internal::ProposeByArm(*gp, arms, y_best, opt.acq, cand, mean, var,
                             opt.n_local_starts, opt.local_max_evals);
  if (hedge_on && first) {
    hedge.proposals.clear();
    for (const auto& list : proposals)
      hedge.proposals.push_back(list.front().x);
    hedge.proposal_n = n();
  }
  const auto& list = proposals[hedge_on && first ? arm : 0];
  for (const internal::Proposal& p : list) {
    std::vector<double> u = space.Snap(p.x);
    if (FarFrom(u, taken)) return u;
  }
  // Every ranked proposal collides: fall back to the design's random stream.
  return DesignPoint(key, taken, /*first_attempt=*/1);
}

GpOptimizer::GpOptimizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
GpOptimizer::~GpOptimizer() = default;
GpOptimizer::GpOptimizer(GpOptimizer&&) noexcept = default;
GpOptimizer& GpOptimizer::operator=(GpOptimizer&&) noexcept = default;

Result<GpOptimizer> GpOptimizer::Create(SearchSpace space,
                                        OptimizerOptions options) {
  XW_RETURN_IF_ERROR(ValidateOptions(options));
  if (space.size() > Sobol::kMaxDim) {
    return Status::InvalidArgument(
        "the GP optimizer handles at most " + std::to_string(Sobol::kMaxDim) +
        " dimensions, the space has " + std::to_string(space.size()));
  }
  return GpOptimizer(
      std::make_unique<Impl>(std::move(space), std::move(options)));
}

const SearchSpace& GpOptimizer::space() const { return impl_->space; }
const OptimizerOptions& GpOptimizer::options() const { return impl_->opt; }
int GpOptimizer::num_observations() const { return impl_->n(); }
double GpOptimizer::target(int i) const { return impl_->ys[i]; }
std::vector<double> GpOptimizer::observation(int i) const {
  return impl_->space.FromUnit(std::span(impl_->Row(i), impl_->dim));
}
int GpOptimizer::best_index() const {
  const auto& ys = impl_->ys;
  return ys.empty() ? -1
                    : static_cast<int>(std::min_element(ys.begin(), ys.end()) -
                                       ys.begin());
}
std::optional<GpHyperparameters> GpOptimizer::hyperparameters() const {
  if (!impl_->gp) return std::nullopt;
  return impl_->gp->hyperparameters();
}
const HedgeState& GpOptimizer::hedge_state() const { return impl_->hedge; }

Status GpOptimizer::set_hedge_state(const HedgeState& s) {
  if (!s.proposals.empty() && s.proposals.size() != 3) {
    return Status::InvalidArgument(
        "hedge state: expected 0 or 3 proposals, got " +
        std::to_string(s.proposals.size()));
  }
  for (double g : s.gains) {
    if (!std::isfinite(g))
      return Status::InvalidArgument("hedge state: gain " + Num(g) +
                                     " is not finite");
  }
  for (const auto& p : s.proposals) {
    if (static_cast<int>(p.size()) != impl_->dim) {
      return Status::InvalidArgument(
          "hedge state: a proposal has " + std::to_string(p.size()) +
          " coordinates, the space has " + std::to_string(impl_->dim));
    }
  }
  impl_->hedge = s;
  return Status::OK();
}

Status GpOptimizer::Tell(std::span<const double> x, double y,
                         double noise_variance) {
  XW_RETURN_IF_ERROR(impl_->space.CheckPoint(x).WithContext("tell"));
  if (!std::isfinite(y)) {
    return Status::InvalidArgument(
        "tell: objective value " + Num(y) +
        " is not finite (failed trials are not told)");
  }
  const bool shared = std::isnan(noise_variance);
  if (!shared && !(noise_variance >= 0 && std::isfinite(noise_variance))) {
    return Status::InvalidArgument("tell: noise variance " +
                                   Num(noise_variance) + " is not >= 0");
  }
  const std::vector<double> u = impl_->space.ToUnit(x);
  impl_->xu.insert(impl_->xu.end(), u.begin(), u.end());
  impl_->ys.push_back(y);
  impl_->noise.push_back(noise_variance);
  impl_->all_shared = impl_->all_shared && shared;
  return Status::OK();
}

double GpOptimizer::noise_variance(int i) const { return impl_->noise[i]; }

Result<std::vector<std::vector<double>>> GpOptimizer::Ask(
    int count, const std::vector<std::vector<double>>& pending) {
  Impl& m = *impl_;
  if (count < 1)
    return Status::InvalidArgument("ask: n must be >= 1, got " +
                                   std::to_string(count));
  std::vector<std::vector<double>> taken;
  for (size_t i = 0; i < pending.size(); ++i) {
    XW_RETURN_IF_ERROR(
        m.space.CheckPoint(pending[i])
            .WithContext("ask: pending point " + std::to_string(i)));
    taken.push_back(m.space.ToUnit(pending[i]));
  }
  const int n_obs = m.n();
  bool model_ready = false;
  std::vector<std::vector<double>> out;
  for (int j = 0; j < count; ++j) {
    const uint64_t k =
        static_cast<uint64_t>(n_obs) + taken.size();  // design / key index
    std::vector<double> u;
    if (k < static_cast<uint64_t>(m.opt.n_initial_points) || n_obs < 2) {
      XW_ASSIGN_OR_RETURN(u, m.DesignPoint(k, taken));
    } else {
      const bool first = !model_ready;
      if (first) {
        XW_RETURN_IF_ERROR(m.PrepareModel());
        m.ChargeHedge();
        for (const auto& t : taken) m.gp->Append(t, m.Lie());
        m.Renormalize();
        model_ready = true;
      }
      XW_ASSIGN_OR_RETURN(
          u, m.ModelPoint(MixStream(static_cast<uint64_t>(n_obs), k), first,
                          taken));
      m.gp->Append(u, m.Lie());
      m.Renormalize();
    }
    out.push_back(m.space.FromUnit(u));
    taken.push_back(std::move(u));
  }
  return out;
}

}  // namespace xw::hpo
