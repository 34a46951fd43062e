// Names and validation of GpOptimizer options.
#include <cmath>

#include "util.h"
#include "xwires/hpo/optimizer.h"

namespace xw::hpo {
namespace {

using internal::Num;

Status CheckRange(const std::string& field, double v, double lo, double hi) {
  if (!(std::isfinite(v) && v >= lo && v <= hi)) {
    return Status::InvalidArgument(field + " = " + Num(v) + " is outside [" +
                                   Num(lo) + ", " + Num(hi) + "]");
  }
  return Status::OK();
}

Status CheckBounds(const std::string& field, double lo, double hi) {
  if (!(std::isfinite(lo) && std::isfinite(hi) && lo > 0 && lo <= hi)) {
    return Status::InvalidArgument(field + " bounds [" + Num(lo) + ", " +
                                   Num(hi) +
                                   "] must be positive, finite and ordered");
  }
  return Status::OK();
}

}  // namespace

std::string InitialDesignName(InitialDesign d) {
  switch (d) {
    case InitialDesign::kRandom:
      return "random";
    case InitialDesign::kSobol:
      return "sobol";
    case InitialDesign::kLatinHypercube:
      return "lhs";
  }
  return "?";
}

Result<InitialDesign> ParseInitialDesign(const std::string& name) {
  for (InitialDesign d : {InitialDesign::kRandom, InitialDesign::kSobol,
                          InitialDesign::kLatinHypercube}) {
    if (name == InitialDesignName(d)) return d;
  }
  return Status::InvalidArgument("unknown initial design '" + name +
                                 "' (expected random, sobol or lhs)");
}

std::string LiarName(LiarStrategy l) {
  switch (l) {
    case LiarStrategy::kMin:
      return "min";
    case LiarStrategy::kMean:
      return "mean";
    case LiarStrategy::kMax:
      return "max";
  }
  return "?";
}

Result<LiarStrategy> ParseLiar(const std::string& name) {
  for (LiarStrategy l :
       {LiarStrategy::kMin, LiarStrategy::kMean, LiarStrategy::kMax}) {
    if (name == LiarName(l)) return l;
  }
  return Status::InvalidArgument("unknown liar strategy '" + name +
                                 "' (expected min, mean or max)");
}

Status ValidateOptions(const OptimizerOptions& o) {
  XW_RETURN_IF_ERROR(
      CheckRange("n_initial_points", o.n_initial_points, 1, 100000));
  XW_RETURN_IF_ERROR(CheckRange("n_candidates", o.n_candidates, 1, 10000000));
  XW_RETURN_IF_ERROR(CheckRange("n_local_starts", o.n_local_starts, 0, 1000));
  XW_RETURN_IF_ERROR(
      CheckRange("local_max_evals", o.local_max_evals, 1, 100000));
  XW_RETURN_IF_ERROR(CheckRange("xi", o.acq.xi, 0, 1e6));
  XW_RETURN_IF_ERROR(CheckRange("kappa", o.acq.kappa, 0, 1e6));
  XW_RETURN_IF_ERROR(CheckRange("eta", o.acq.eta, 0, 1e6));
  XW_RETURN_IF_ERROR(CheckRange("refit_every", o.refit_every, 1, 1000000));
  XW_RETURN_IF_ERROR(CheckRange("restart_every", o.restart_every, 1, 1000000));
  XW_RETURN_IF_ERROR(
      CheckRange("refit_dense_until", o.refit_dense_until, 0, 1000000));
  XW_RETURN_IF_ERROR(CheckRange("min_distance", o.min_distance, 0, 1));
  XW_RETURN_IF_ERROR(CheckRange("gp.n_restarts", o.gp.n_restarts, 0, 1000));
  XW_RETURN_IF_ERROR(CheckRange("gp.max_evals", o.gp.max_evals, 1, 1000000));
  XW_RETURN_IF_ERROR(
      CheckBounds("gp.amplitude", o.gp.amplitude_low, o.gp.amplitude_high));
  XW_RETURN_IF_ERROR(CheckBounds("gp.length_scale", o.gp.length_scale_low,
                                 o.gp.length_scale_high));
  XW_RETURN_IF_ERROR(CheckBounds("gp.noise", o.gp.noise_low, o.gp.noise_high));
  if (!o.gp.fit_noise)
    XW_RETURN_IF_ERROR(CheckRange("gp.fixed_noise", o.gp.fixed_noise, 0, 1e10));
  return Status::OK();
}

}  // namespace xw::hpo
