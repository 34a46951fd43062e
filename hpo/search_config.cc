#include "xwires/hpo/search_config.h"

#include <cmath>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "config_fields.h"
#include "xwires/core/rng.h"

namespace xw::hpo {
namespace {

using json = nlohmann::json;
using internal::BadField;
using internal::CheckKeys;
using internal::GetBool;
using internal::GetInt;
using internal::GetNumber;
using internal::GetString;
using internal::ShownValue;

// Re-labels a Status from a name parser with the key path.
template <typename T>
Result<T> Named(Result<T> r, const std::string& path) {
  if (!r.ok()) return BadField(path, r.status().message());
  return r;
}

Result<SearchSpace> ParseDimensions(const json& v) {
  if (!v.is_array() || v.empty())
    return BadField("dimensions", "expected a non-empty array of objects");
  std::vector<Dimension> dims;
  for (size_t i = 0; i < v.size(); ++i) {
    const std::string p = "dimensions[" + std::to_string(i) + "]";
    const json& d = v[i];
    XW_RETURN_IF_ERROR(CheckKeys(d, p, {"name", "type", "low", "high", "log"}));
    for (const char* req : {"name", "low", "high"}) {
      if (!d.contains(req)) return BadField(p + "." + req, "missing");
    }
    Dimension dim;
    XW_ASSIGN_OR_RETURN(dim.name, GetString(d["name"], p + ".name"));
    if (d.contains("type")) {
      XW_ASSIGN_OR_RETURN(std::string t, GetString(d["type"], p + ".type"));
      if (t == "real")
        dim.type = DimType::kReal;
      else if (t == "integer")
        dim.type = DimType::kInteger;
      else
        return BadField(p + ".type",
                        "expected \"real\" or \"integer\", got \"" + t + "\"");
    }
    const double inf = std::numeric_limits<double>::max();
    XW_ASSIGN_OR_RETURN(dim.low, GetNumber(d["low"], p + ".low", -inf, inf));
    XW_ASSIGN_OR_RETURN(dim.high, GetNumber(d["high"], p + ".high", -inf, inf));
    if (d.contains("log")) {
      XW_ASSIGN_OR_RETURN(dim.log, GetBool(d["log"], p + ".log"));
    }
    if (Status s = ValidateDimension(dim); !s.ok())
      return BadField(p, s.message());
    dims.push_back(std::move(dim));
  }
  auto space = SearchSpace::Create(std::move(dims));
  if (!space.ok()) return BadField("dimensions", space.status().message());
  return space;
}

Status ParseData(const json& v, SearchConfig* c) {
  if (v.is_string()) {
    c->data = v.get<std::string>();
    return Status::OK();
  }
  XW_RETURN_IF_ERROR(
      CheckKeys(v, "data", {"spec", "train_limit", "test_limit"}));
  if (v.contains("spec")) {
    XW_ASSIGN_OR_RETURN(c->data, GetString(v["spec"], "data.spec"));
  }
  constexpr int64_t kMax = int64_t{1} << 40;
  if (v.contains("train_limit")) {
    XW_ASSIGN_OR_RETURN(c->train_limit,
                        GetInt(v["train_limit"], "data.train_limit", -1, kMax));
  }
  if (v.contains("test_limit")) {
    XW_ASSIGN_OR_RETURN(c->test_limit,
                        GetInt(v["test_limit"], "data.test_limit", -1, kMax));
  }
  return Status::OK();
}

Status ParseOptimizerKeys(const json& doc, OptimizerOptions* o) {
  auto has = [&](const char* k) { return doc.contains(k); };
  if (has("acquisition")) {
    XW_ASSIGN_OR_RETURN(std::string s,
                        GetString(doc["acquisition"], "acquisition"));
    XW_ASSIGN_OR_RETURN(o->acquisition,
                        Named(ParseAcquisition(s), "acquisition"));
  }
  if (has("xi")) {
    XW_ASSIGN_OR_RETURN(o->acq.xi, GetNumber(doc["xi"], "xi", 0, 1e6));
  }
  if (has("kappa")) {
    XW_ASSIGN_OR_RETURN(o->acq.kappa, GetNumber(doc["kappa"], "kappa", 0, 1e6));
  }
  if (has("eta")) {
    XW_ASSIGN_OR_RETURN(o->acq.eta, GetNumber(doc["eta"], "eta", 0, 1e6));
  }
  if (has("initial_design")) {
    XW_ASSIGN_OR_RETURN(std::string s,
                        GetString(doc["initial_design"], "initial_design"));
    XW_ASSIGN_OR_RETURN(o->initial_design,
                        Named(ParseInitialDesign(s), "initial_design"));
  }
  if (has("n_initial_points")) {
    XW_ASSIGN_OR_RETURN(
        o->n_initial_points,
        GetInt(doc["n_initial_points"], "n_initial_points", 1, 100000));
  }
  if (has("liar")) {
    XW_ASSIGN_OR_RETURN(std::string s, GetString(doc["liar"], "liar"));
    XW_ASSIGN_OR_RETURN(o->liar, Named(ParseLiar(s), "liar"));
  }
  if (has("noise")) {
    const json& v = doc["noise"];
    if (v.is_string() && v.get<std::string>() == "gaussian") {
      o->gp.fit_noise = true;
    } else if (v.is_number()) {
      o->gp.fit_noise = false;
      XW_ASSIGN_OR_RETURN(o->gp.fixed_noise, GetNumber(v, "noise", 0, 1e10));
    } else {
      return BadField("noise",
                      "expected \"gaussian\" or a non-negative variance, got " +
                          ShownValue(v));
    }
  }
  if (has("n_candidates")) {
    XW_ASSIGN_OR_RETURN(o->n_candidates, GetInt(doc["n_candidates"],
                                                "n_candidates", 1, 10000000));
  }
  if (has("n_local_starts")) {
    XW_ASSIGN_OR_RETURN(o->n_local_starts, GetInt(doc["n_local_starts"],
                                                  "n_local_starts", 0, 1000));
  }
  if (has("restart_every")) {
    XW_ASSIGN_OR_RETURN(o->restart_every, GetInt(doc["restart_every"],
                                                 "restart_every", 1, 1000000));
  }
  if (has("refit_every")) {
    XW_ASSIGN_OR_RETURN(o->refit_every,
                        GetInt(doc["refit_every"], "refit_every", 1, 1000000));
  }
  if (has("refit_dense_until")) {
    XW_ASSIGN_OR_RETURN(
        o->refit_dense_until,
        GetInt(doc["refit_dense_until"], "refit_dense_until", 0, 1000000));
  }
  return Status::OK();
}

}  // namespace

std::string ObjectiveName(Objective o) {
  switch (o) {
    case Objective::kAbsAccDiff:
      return "abs_acc_diff";
    case Objective::kDisagreement:
      return "disagreement";
    case Objective::kMaxClassGap:
      return "max_class_gap";
    case Objective::kSignificantDiff:
      return "significant_diff";
  }
  return "?";
}

Result<Objective> ParseObjective(const std::string& name) {
  for (Objective o : {Objective::kAbsAccDiff, Objective::kDisagreement,
                      Objective::kMaxClassGap, Objective::kSignificantDiff}) {
    if (name == ObjectiveName(o)) return o;
  }
  return Status::InvalidArgument(
      "unknown objective '" + name +
      "' (expected abs_acc_diff, disagreement, max_class_gap or "
      "significant_diff)");
}

Result<SearchConfig> ParseSearchConfigJson(const std::string& text) {
  XW_ASSIGN_OR_RETURN(json doc, internal::ParseConfigText(text));
  XW_RETURN_IF_ERROR(CheckKeys(doc, "",
                               {"dimensions",
                                "arch",
                                "profiles",
                                "data",
                                "objective",
                                "budget",
                                "trials_per_subspace",
                                "no_subspaces",
                                "overlap",
                                "log_split",
                                "seed",
                                "acquisition",
                                "xi",
                                "kappa",
                                "eta",
                                "initial_design",
                                "n_initial_points",
                                "liar",
                                "noise",
                                "n_candidates",
                                "n_local_starts",
                                "refit_every",
                                "refit_dense_until",
                                "restart_every"}));
  SearchConfig c;
  if (doc.contains("dimensions")) {
    XW_ASSIGN_OR_RETURN(c.space, ParseDimensions(doc["dimensions"]));
  }
  if (doc.contains("arch")) {
    XW_ASSIGN_OR_RETURN(c.arch, GetString(doc["arch"], "arch"));
  }
  if (c.arch.empty()) return BadField("arch", "must not be empty");
  if (doc.contains("profiles")) {
    const json& v = doc["profiles"];
    if (!v.is_array() || v.size() != 2)
      return BadField(
          "profiles",
          "expected an array of two profile names, got " + ShownValue(v));
    for (int i = 0; i < 2; ++i) {
      const std::string p = "profiles[" + std::to_string(i) + "]";
      XW_ASSIGN_OR_RETURN(c.profiles[i], GetString(v[i], p));
      if (c.profiles[i].empty()) return BadField(p, "must not be empty");
    }
  }
  if (doc.contains("data")) XW_RETURN_IF_ERROR(ParseData(doc["data"], &c));
  if (doc.contains("objective")) {
    XW_ASSIGN_OR_RETURN(std::string s,
                        GetString(doc["objective"], "objective"));
    XW_ASSIGN_OR_RETURN(c.objective, Named(ParseObjective(s), "objective"));
  }
  if (doc.contains("budget")) {
    const json& b = doc["budget"];
    XW_RETURN_IF_ERROR(CheckKeys(b, "budget", {"max_trials", "max_seconds"}));
    if (b.contains("max_trials")) {
      XW_ASSIGN_OR_RETURN(
          c.budget.max_trials,
          GetInt(b["max_trials"], "budget.max_trials", 0, int64_t{1} << 40));
    }
    if (b.contains("max_seconds")) {
      XW_ASSIGN_OR_RETURN(
          c.budget.max_seconds,
          GetNumber(b["max_seconds"], "budget.max_seconds", 0, 1e9));
    }
  }
  if (doc.contains("trials_per_subspace")) {
    XW_ASSIGN_OR_RETURN(
        c.trials_per_subspace,
        GetInt(doc["trials_per_subspace"], "trials_per_subspace", 1, 1000000));
  }
  if (doc.contains("no_subspaces")) {
    XW_ASSIGN_OR_RETURN(c.no_subspaces,
                        GetBool(doc["no_subspaces"], "no_subspaces"));
  }
  if (doc.contains("overlap")) {
    XW_ASSIGN_OR_RETURN(c.overlap, GetNumber(doc["overlap"], "overlap", 0, 1));
  }
  if (doc.contains("log_split")) {
    XW_ASSIGN_OR_RETURN(std::string s,
                        GetString(doc["log_split"], "log_split"));
    if (s == "log")
      c.log_split = LogSplit::kLogSpace;
    else if (s == "linear")
      c.log_split = LogSplit::kLinear;
    else
      return BadField("log_split",
                      "expected \"log\" or \"linear\", got \"" + s + "\"");
  }
  if (doc.contains("seed")) {
    XW_ASSIGN_OR_RETURN(
        int64_t seed,
        GetInt(doc["seed"], "seed", 0, std::numeric_limits<int64_t>::max()));
    c.optimizer.seed = static_cast<uint64_t>(seed);
  }
  XW_RETURN_IF_ERROR(ParseOptimizerKeys(doc, &c.optimizer));
  if (!c.no_subspaces && c.space.size() > 16) {
    return BadField(
        "dimensions",
        std::to_string(c.space.size()) +
            " dimensions give too many subspaces; set no_subspaces");
  }
  if (c.space.size() > 21)
    return BadField("dimensions", "at most 21 dimensions are supported");
  if (Status s = ValidateOptions(c.optimizer); !s.ok())
    return BadField("optimizer", s.message());
  return c;
}

Result<SearchConfig> LoadSearchConfig(const std::string& path) {
  return internal::LoadConfigFile(path, &ParseSearchConfigJson);
}

std::string SearchConfigToJson(const SearchConfig& c) {
  json dims = json::array();
  for (const Dimension& d : c.space.dims()) {
    dims.push_back({{"name", d.name},
                    {"type", DimTypeName(d.type)},
                    {"low", d.low},
                    {"high", d.high},
                    {"log", d.log}});
  }
  const OptimizerOptions& o = c.optimizer;
  json doc = {
      {"dimensions", dims},
      {"arch", c.arch},
      {"profiles", {c.profiles[0], c.profiles[1]}},
      {"data",
       {{"spec", c.data},
        {"train_limit", c.train_limit},
        {"test_limit", c.test_limit}}},
      {"objective", ObjectiveName(c.objective)},
      {"budget",
       {{"max_trials", c.budget.max_trials},
        {"max_seconds", c.budget.max_seconds}}},
      {"trials_per_subspace", c.trials_per_subspace},
      {"no_subspaces", c.no_subspaces},
      {"overlap", c.overlap},
      {"log_split", c.log_split == LogSplit::kLogSpace ? "log" : "linear"},
      {"seed", o.seed},
      {"acquisition", AcquisitionName(o.acquisition)},
      {"xi", o.acq.xi},
      {"kappa", o.acq.kappa},
      {"eta", o.acq.eta},
      {"initial_design", InitialDesignName(o.initial_design)},
      {"n_initial_points", o.n_initial_points},
      {"liar", LiarName(o.liar)},
      {"n_candidates", o.n_candidates},
      {"n_local_starts", o.n_local_starts},
      {"refit_every", o.refit_every},
      {"restart_every", o.restart_every},
      {"refit_dense_until", o.refit_dense_until},
  };
  if (o.gp.fit_noise)
    doc["noise"] = "gaussian";
  else
    doc["noise"] = o.gp.fixed_noise;
  return doc.dump(2);
}

int NumSearchSubspaces(const SearchConfig& c) {
  return c.no_subspaces ? 1 : NumSubspaces(c.space);
}

Result<SearchSpace> SearchSubspace(const SearchConfig& c, int index) {
  if (c.no_subspaces) {
    if (index != 0)
      return Status::InvalidArgument(
          "with no_subspaces the only subspace is 0");
    return c.space;
  }
  return Subspace(c.space, index, c.overlap, c.log_split);
}

OptimizerOptions SubspaceOptions(const SearchConfig& c, int index) {
  OptimizerOptions o = c.optimizer;
  o.seed = MixStream(MixStream(StreamId("hpo/subspace_seed"), c.optimizer.seed),
                     static_cast<uint64_t>(index));
  return o;
}

}  // namespace xw::hpo
