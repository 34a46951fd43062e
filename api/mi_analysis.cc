#include "xwires/api/mi_analysis.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "xwires/core/rng.h"
#include "xwires/dataset/query/query.h"

namespace xw {

const std::vector<std::string>& MiVariableNames() {
  static const std::vector<std::string> names = {
      "lr",           "adam_eps",   "beta1", "beta2",
      "weight_decay", "batch_size", "epochs"};
  return names;
}

namespace {

double OptValue(const std::optional<int64_t>& v) {
  return v ? static_cast<double>(*v) : kUnknown;
}

}  // namespace

double TrialVariable(const TrialRow& t, const std::string& name,
                     bool log_scale) {
  double v = kUnknown;
  if (name == "lr") v = t.lr;
  if (name == "adam_eps") v = t.adam_eps;
  if (name == "beta1") v = t.beta1;
  if (name == "beta2") v = t.beta2;
  if (name == "weight_decay") v = t.weight_decay;
  if (name == "batch_size") v = OptValue(t.batch_size);
  if (name == "epochs") v = OptValue(t.epochs);
  if (log_scale &&
      (name == "lr" || name == "adam_eps" || name == "weight_decay")) {
    v = v > 0 ? std::log10(v) : kUnknown;
  }
  return v;
}

namespace {

// Variables with at least two distinct known values among `trials`.
std::vector<std::string> VaryingVariables(
    const std::vector<const TrialRow*>& trials, bool log_scale) {
  std::vector<std::string> out;
  for (const std::string& name : MiVariableNames()) {
    std::set<double> seen;
    for (const TrialRow* t : trials) {
      const double v = TrialVariable(*t, name, log_scale);
      if (std::isfinite(v)) seen.insert(v);
      if (seen.size() > 1) break;
    }
    if (seen.size() > 1) out.push_back(name);
  }
  return out;
}

Result<MiRow> Estimate(const std::string& group,
                       const std::vector<std::string>& vars,
                       const std::vector<const TrialRow*>& trials,
                       const MiAnalysisOptions& opt) {
  std::vector<std::vector<double>> xs(vars.size());
  std::vector<double> y;
  for (const TrialRow* t : trials) {
    if (!std::isfinite(t->divergence)) continue;
    std::vector<double> row;
    for (const std::string& v : vars)
      row.push_back(TrialVariable(*t, v, opt.log_scale));
    bool ok = true;
    for (double d : row) ok = ok && std::isfinite(d);
    if (!ok) continue;
    for (size_t i = 0; i < vars.size(); ++i) xs[i].push_back(row[i]);
    y.push_back(t->divergence);
  }
  MiRow r;
  r.group = group;
  for (const std::string& v : vars)
    r.variable += (r.variable.empty() ? "" : "+") + v;
  // The jitter stream depends on the variable set only, so a group's result
  // does not change when other groups or variables are added.
  XW_ASSIGN_OR_RETURN(r.estimate,
                      EstimateMi(xs, y, opt.mi, StreamId(r.variable)));
  return r;
}

Status AddGroup(const std::string& group,
                const std::vector<const TrialRow*>& trials,
                const MiAnalysisOptions& opt, std::vector<MiRow>* out) {
  const std::vector<std::string> vars = VaryingVariables(trials, opt.log_scale);
  for (const std::string& v : vars) {
    XW_ASSIGN_OR_RETURN(MiRow r, Estimate(group, {v}, trials, opt));
    out->push_back(std::move(r));
  }
  if (!opt.pairs) return Status::OK();
  for (size_t i = 0; i < vars.size(); ++i) {
    for (size_t j = i + 1; j < vars.size(); ++j) {
      XW_ASSIGN_OR_RETURN(MiRow r,
                          Estimate(group, {vars[i], vars[j]}, trials, opt));
      out->push_back(std::move(r));
    }
  }
  return Status::OK();
}

}  // namespace

Result<std::vector<MiRow>> ComputeDatasetMi(const Dataset& ds,
                                            const MiAnalysisOptions& opt,
                                            std::vector<int64_t>* trial_ids) {
  if (opt.mi.repeats < 1)
    return Status::InvalidArgument("--repeats must be >= 1");
  if (!(opt.mi.jitter >= 0))
    return Status::InvalidArgument("--jitter must be >= 0");
  if (opt.mi.ksg_k < 1) return Status::InvalidArgument("--k must be >= 1");
  TrialQuery q;
  q.where = opt.where;
  q.archs = opt.archs;
  XW_ASSIGN_OR_RETURN(std::vector<TrialRow> rows, ds.Query(q));
  std::map<std::string, std::vector<const TrialRow*>> by_arch;
  std::vector<const TrialRow*> all;
  for (const TrialRow& t : rows) {
    if (!std::isfinite(t.divergence)) continue;
    by_arch[t.arch].push_back(&t);
    all.push_back(&t);
  }
  if (all.empty()) {
    return Status::NotFound(ds.dir() +
                            ": no trial with a known divergence matches");
  }
  if (trial_ids != nullptr) {
    trial_ids->clear();
    for (const TrialRow* t : all) trial_ids->push_back(t->id);
    std::sort(trial_ids->begin(), trial_ids->end());
  }
  std::vector<MiRow> out;
  for (const auto& [arch, trials] : by_arch)
    XW_RETURN_IF_ERROR(AddGroup(arch, trials, opt, &out));
  if (by_arch.size() > 1) XW_RETURN_IF_ERROR(AddGroup("all", all, opt, &out));
  return out;
}

std::string MiResultJson(const std::vector<MiRow>& rows,
                         const MiAnalysisOptions& opt) {
  nlohmann::json j = {
      {"estimator", opt.mi.estimator == MiEstimator::kKsg ? "ksg" : "binned"},
      {"repeats", opt.mi.repeats},
      {"jitter", opt.mi.jitter},
      {"k", opt.mi.ksg_k},
      {"seed", opt.mi.seed},
      {"log_scale", opt.log_scale},
      {"pairs", opt.pairs},
      {"archs", opt.archs},
      {"where", opt.where},
      {"rows", nlohmann::json::array()}};
  for (const MiRow& r : rows) {
    j["rows"].push_back({{"group", r.group},
                         {"variable", r.variable},
                         {"mi_mean", r.estimate.mean},
                         {"mi_std", r.estimate.std},
                         {"n", r.estimate.n}});
  }
  return j.dump();
}

std::string MiSummary(const std::vector<MiRow>& rows,
                      const MiAnalysisOptions& opt) {
  std::map<std::string, const MiRow*> best;  // per group, single variables
  std::vector<std::string> order;
  for (const MiRow& r : rows) {
    if (r.variable.find('+') != std::string::npos) continue;
    auto [it, added] = best.emplace(r.group, &r);
    if (added) order.push_back(r.group);
    if (r.estimate.mean > it->second->estimate.mean) it->second = &r;
  }
  std::string s = std::string(opt.mi.estimator == MiEstimator::kKsg
                                  ? "ksg"
                                  : "binned") +
                  " MI, " + std::to_string(opt.mi.repeats) + " repeats";
  for (const std::string& g : order) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f", best[g]->estimate.mean);
    s += "; " + g + ": " + best[g]->variable + " " + buf;
  }
  return s;
}

Table MiTable(const std::vector<MiRow>& rows) {
  Table t;
  t.columns = {"group", "variable", "mi_mean", "mi_std", "n"};
  for (const MiRow& r : rows) {
    t.rows.push_back(
        {r.group, r.variable, r.estimate.mean, r.estimate.std, r.estimate.n});
  }
  return t;
}

}  // namespace xw
