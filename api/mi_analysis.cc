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

double TrialVariable(const TrialRow& t, const std::string& name, bool log) {
  double v = kUnknown;
  if (name == "lr") v = t.lr;
  if (name == "adam_eps") v = t.adam_eps;
  if (name == "beta1") v = t.beta1;
  if (name == "beta2") v = t.beta2;
  if (name == "weight_decay") v = t.weight_decay;
  if (name == "batch_size") v = OptValue(t.batch_size);
  if (name == "epochs") v = OptValue(t.epochs);
  if (log) v = v > 0 ? std::log10(v) : kUnknown;
  return v;
}

namespace {

// Per search id: dimension name -> sampled log-uniformly.
using SearchScales = std::map<int64_t, std::map<std::string, bool>>;

Result<SearchScales> LoadSearchScales(const Dataset& ds) {
  XW_ASSIGN_OR_RETURN(std::vector<SearchRow> searches, ds.Searches());
  SearchScales out;
  for (const SearchRow& s : searches) {
    const auto j = nlohmann::json::parse(s.record.config_json, nullptr, false);
    auto& dims = out[s.id];
    if (!j.is_object() || !j.contains("dimensions") || !j["dimensions"].is_array()) continue;
    for (const auto& d : j["dimensions"]) {
      if (!d.is_object() || !d.contains("name") || !d["name"].is_string()) continue;
      const auto log = d.find("log");
      dims[d["name"].get<std::string>()] = log != d.end() && log->is_boolean() && log->get<bool>();
    }
  }
  return out;
}

// The variables of a group taken on a log scale (MiScale, the header).
std::set<std::string> LogVariables(const std::vector<const TrialRow*>& trials,
                                   const MiAnalysisOptions& opt, const SearchScales& searches) {
  std::set<std::string> out;
  if (opt.scale == MiScale::kRaw) return out;
  if (opt.scale == MiScale::kLog) return {"lr", "adam_eps", "weight_decay"};
  for (const std::string& name : MiVariableNames()) {
    bool log_votes = false, linear_votes = false;
    for (const TrialRow* t : trials) {
      if (!t->search_id) continue;
      const auto s = searches.find(*t->search_id);
      if (s == searches.end()) continue;
      const auto d = s->second.find(name);
      if (d == s->second.end()) continue;  // fixed in that search
      (d->second ? log_votes : linear_votes) = true;
    }
    if (log_votes && !linear_votes) out.insert(name);
  }
  return out;
}

// Variables with at least two distinct known values among `trials`.
std::vector<std::string> VaryingVariables(
    const std::vector<const TrialRow*>& trials, const std::set<std::string>& logs) {
  std::vector<std::string> out;
  for (const std::string& name : MiVariableNames()) {
    std::set<double> seen;
    for (const TrialRow* t : trials) {
      const double v = TrialVariable(*t, name, logs.count(name) > 0);
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
                       const MiAnalysisOptions& opt, const std::set<std::string>& logs) {
  std::vector<std::vector<double>> xs(vars.size());
  std::vector<double> y;
  for (const TrialRow* t : trials) {
    if (!std::isfinite(t->divergence)) continue;
    std::vector<double> row;
    for (const std::string& v : vars)
      row.push_back(TrialVariable(*t, v, logs.count(v) > 0));
    bool ok = true;
    for (double d : row) ok = ok && std::isfinite(d);
    if (!ok) continue;
    for (size_t i = 0; i < vars.size(); ++i) xs[i].push_back(row[i]);
    y.push_back(t->divergence);
  }
  MiRow r;
  r.group = group;
  for (const std::string& v : vars) {
    r.variable += (r.variable.empty() ? "" : "+") + v;
    r.scale += std::string(r.scale.empty() ? "" : "+") + (logs.count(v) ? "log" : "raw");
  }
  // The jitter stream depends on the variable set only, so a group's result
  // does not change when other groups or variables are added.
  XW_ASSIGN_OR_RETURN(r.estimate,
                      EstimateMi(xs, y, opt.mi, StreamId(r.variable)));
  return r;
}

Status AddGroup(const std::string& group,
                const std::vector<const TrialRow*>& trials,
                const MiAnalysisOptions& opt, const SearchScales& searches,
                std::vector<MiRow>* out) {
  const std::set<std::string> logs = LogVariables(trials, opt, searches);
  const std::vector<std::string> vars = VaryingVariables(trials, logs);
  for (const std::string& v : vars) {
    XW_ASSIGN_OR_RETURN(MiRow r, Estimate(group, {v}, trials, opt, logs));
    out->push_back(std::move(r));
  }
  if (!opt.pairs) return Status::OK();
  for (size_t i = 0; i < vars.size(); ++i) {
    for (size_t j = i + 1; j < vars.size(); ++j) {
      XW_ASSIGN_OR_RETURN(MiRow r,
                          Estimate(group, {vars[i], vars[j]}, trials, opt, logs));
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
  if (opt.mi.shuffles < 0)
    return Status::InvalidArgument("--shuffles must be >= 0");
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
  SearchScales searches;
  if (opt.scale == MiScale::kAuto) {
    XW_ASSIGN_OR_RETURN(searches, LoadSearchScales(ds));
  }
  std::vector<MiRow> out;
  for (const auto& [arch, trials] : by_arch)
    XW_RETURN_IF_ERROR(AddGroup(arch, trials, opt, searches, &out));
  if (by_arch.size() > 1)
    XW_RETURN_IF_ERROR(AddGroup("all", all, opt, searches, &out));
  return out;
}

namespace {

const char* ScaleName(MiScale s) {
  switch (s) {
    case MiScale::kRaw:
      return "raw";
    case MiScale::kLog:
      return "log";
    case MiScale::kAuto:
      break;
  }
  return "auto";
}

// NaN as JSON null, so the stored result stays valid JSON.
nlohmann::json Num(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

std::string Fixed(double v, const char* format = "%.3f") {
  char buf[32];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

}  // namespace

std::string MiResultJson(const std::vector<MiRow>& rows,
                         const MiAnalysisOptions& opt) {
  nlohmann::json j = {
      {"unit", "nats"},
      {"estimator", opt.mi.estimator == MiEstimator::kKsg ? "ksg" : "binned"},
      {"repeats", opt.mi.repeats},
      {"jitter", opt.mi.jitter},
      {"k", opt.mi.ksg_k},
      {"seed", opt.mi.seed},
      {"shuffles", opt.mi.shuffles},
      {"scale", ScaleName(opt.scale)},
      {"pairs", opt.pairs},
      {"archs", opt.archs},
      {"where", opt.where},
      {"warnings", MiWarnings(rows)},
      {"rows", nlohmann::json::array()}};
  for (const MiRow& r : rows) {
    j["rows"].push_back({{"group", r.group},
                         {"variable", r.variable},
                         {"scale", r.scale},
                         {"mi_mean", r.estimate.mean},
                         {"mi_std", r.estimate.std},
                         {"mi_null", Num(r.estimate.null_mean)},
                         {"mi_corrected", Num(r.estimate.corrected)},
                         {"p", Num(r.estimate.p_value)},
                         {"n", r.estimate.n},
                         {"few_samples", r.estimate.few_samples}});
  }
  return j.dump();
}

std::string MiSummary(const std::vector<MiRow>& rows,
                      const MiAnalysisOptions& opt) {
  // Per group, the single variable with the largest bias-corrected estimate
  // (the raw mean when there is no null).
  auto key = [](const MiRow& r) {
    return std::isfinite(r.estimate.corrected) ? r.estimate.corrected : r.estimate.mean;
  };
  std::map<std::string, const MiRow*> best;
  std::vector<std::string> order;
  for (const MiRow& r : rows) {
    if (r.variable.find('+') != std::string::npos) continue;
    auto [it, added] = best.emplace(r.group, &r);
    if (added) order.push_back(r.group);
    if (key(r) > key(*it->second)) it->second = &r;
  }
  std::string s = std::string(opt.mi.estimator == MiEstimator::kKsg
                                  ? "ksg"
                                  : "binned") +
                  " MI in nats, " + std::to_string(opt.mi.repeats) + " repeats, " +
                  std::to_string(opt.mi.shuffles) + " shuffles";
  for (const std::string& g : order) {
    const MiEstimate& e = best[g]->estimate;
    s += "; " + g + ": " + best[g]->variable + " " + Fixed(e.mean);
    if (std::isfinite(e.corrected)) {
      s += " (corrected " + Fixed(e.corrected) + ", p " + Fixed(e.p_value, "%.3g") + ")";
    }
  }
  return s;
}

Table MiTable(const std::vector<MiRow>& rows) {
  Table t;
  t.columns = {"group",   "variable",     "scale", "mi_mean", "mi_std",
               "mi_null", "mi_corrected", "p",     "n"};
  for (const MiRow& r : rows) {
    const MiEstimate& e = r.estimate;
    auto cell = [](double v) { return std::isfinite(v) ? Cell(v) : Cell(std::monostate{}); };
    t.rows.push_back({r.group, r.variable, r.scale, e.mean, e.std, cell(e.null_mean),
                      cell(e.corrected), cell(e.p_value), e.n});
  }
  return t;
}

std::string MiCaption(const MiAnalysisOptions& opt) {
  const MiOptions& m = opt.mi;
  std::string s = "MI in nats (";
  s += m.estimator == MiEstimator::kKsg
           ? "KSG, k = " + std::to_string(m.ksg_k)
           : "binned: " + std::to_string(kMiBins) + " bins per variable";
  s += "; mean and std of " + std::to_string(m.repeats) + " jitter repeats). ";
  if (m.shuffles > 0) {
    s += "mi_null: mean MI of " + std::to_string(m.shuffles) +
         " random permutations of the divergences (the estimator's bias at this n); "
         "mi_corrected = mi_mean - mi_null (<= 0: no detectable information); "
         "p: permutation p-value. ";
  }
  s += std::string("scale: log = log10 before binning (") +
       (opt.scale == MiScale::kAuto  ? "--scale auto: the dimensions the searches sample "
                                       "log-uniformly"
        : opt.scale == MiScale::kLog ? "--log-scale: lr, adam_eps, weight_decay"
                                     : "--raw-scale: none") +
       ").";
  return s;
}

std::vector<std::string> MiWarnings(const std::vector<MiRow>& rows) {
  std::vector<std::string> out;
  std::set<std::pair<std::string, int>> seen;  // group, variables
  for (const MiRow& r : rows) {
    if (!r.estimate.few_samples) continue;
    const int vars = 1 + static_cast<int>(std::count(r.variable.begin(), r.variable.end(), '+'));
    if (!seen.insert({r.group, vars}).second) continue;
    const double bx = std::pow(kMiBins, vars), by = kMiBins;
    const double n = static_cast<double>(r.estimate.n);
    out.push_back(r.group + ": n = " + std::to_string(r.estimate.n) + " trials for " +
                  Fixed(bx * by, "%.0f") + " joint bins of " +
                  (vars == 1 ? "one variable" : "a pair") +
                  " and the divergence (fewer than " + std::to_string(kMiSamplesPerCell) +
                  " per bin): the plug-in bias is up to about " +
                  // The first-order bias, capped by ln n (no estimate exceeds it).
                  Fixed(std::min((bx - 1) * (by - 1) / (2 * n), std::log(n)), "%.2f") +
                  " nats; read mi_corrected and p, not mi_mean");
  }
  return out;
}

}  // namespace xw
