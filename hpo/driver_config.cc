// Search driver configuration: defaults of `xwires search`, the "train"
// object, and the map from a search point to training options.
#include <cmath>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "config_fields.h"
#include "driver_internal.h"
#include "util.h"
#include "xwires/hpo/search_driver.h"

namespace xw::hpo {
namespace {

using json = nlohmann::json;
using internal::BadField;
using internal::ValueText;

json TrainToJson(const TrainSettings& t) {
  return {{"width", t.arch_options.width},
          {"depth", t.arch_options.depth},
          {"dropout", t.arch_options.dropout},
          {"seed", t.seed},
          {"data_seed", t.data_seed ? json(*t.data_seed) : json(nullptr)},
          {"lr", t.adam.lr},
          {"adam_eps", t.adam.eps},
          {"beta1", t.adam.beta1},
          {"beta2", t.adam.beta2},
          {"weight_decay", t.adam.weight_decay},
          {"batch_size", t.batch_size},
          {"epochs", t.epochs},
          {"eval_batch_size", t.eval_batch_size},
          {"store_weights", t.store_weights},
          {"init_weights", t.init_weights.empty() ? json(nullptr) : json(t.init_weights)}};
}

// `v` is the merged "train" object (every key present).
Result<TrainSettings> ParseTrain(const json& v) {
  const std::set<std::string> keys = {
      "width",        "depth",      "dropout", "seed", "data_seed",
      "lr",           "adam_eps",   "beta1",   "beta2",
      "weight_decay", "batch_size", "epochs",  "eval_batch_size",
      "store_weights", "init_weights"};
  XW_RETURN_IF_ERROR(internal::CheckKeys(v, "train", keys, ValueText::kFull));
  // The "train" readers show a rejected value in full.
  auto number = [&v](const std::string& key) {
    return internal::GetNumber(v[key], "train." + key, ValueText::kFull);
  };
  auto integer = [&v](const std::string& key) {
    return internal::GetIntegerLiteral(v[key], "train." + key,
                                       ValueText::kFull);
  };
  TrainSettings t;
  XW_ASSIGN_OR_RETURN(t.arch_options.width, number("width"));
  XW_ASSIGN_OR_RETURN(int64_t depth, integer("depth"));
  if (depth < 0 || depth > 1000)
    return BadField("train.depth", "must be in [0, 1000]");
  t.arch_options.depth = static_cast<int>(depth);
  XW_ASSIGN_OR_RETURN(t.arch_options.dropout, number("dropout"));
  XW_ASSIGN_OR_RETURN(int64_t seed, integer("seed"));
  if (seed < 0) return BadField("train.seed", "must be >= 0");
  t.seed = static_cast<uint64_t>(seed);
  if (!v["data_seed"].is_null()) {
    XW_ASSIGN_OR_RETURN(int64_t data_seed, integer("data_seed"));
    if (data_seed < 0) return BadField("train.data_seed", "must be >= 0 or null");
    t.data_seed = static_cast<uint64_t>(data_seed);
  }
  XW_ASSIGN_OR_RETURN(t.adam.lr, number("lr"));
  XW_ASSIGN_OR_RETURN(t.adam.eps, number("adam_eps"));
  XW_ASSIGN_OR_RETURN(t.adam.beta1, number("beta1"));
  XW_ASSIGN_OR_RETURN(t.adam.beta2, number("beta2"));
  XW_ASSIGN_OR_RETURN(t.adam.weight_decay, number("weight_decay"));
  XW_ASSIGN_OR_RETURN(t.batch_size, integer("batch_size"));
  XW_ASSIGN_OR_RETURN(t.epochs, integer("epochs"));
  XW_ASSIGN_OR_RETURN(t.eval_batch_size, integer("eval_batch_size"));
  if (!v["store_weights"].is_boolean())
    return BadField("train.store_weights", "expected true or false");
  t.store_weights = v["store_weights"].get<bool>();
  if (v["init_weights"].is_string() && !v["init_weights"].get<std::string>().empty()) {
    t.init_weights = v["init_weights"].get<std::string>();
  } else if (!v["init_weights"].is_null()) {
    return BadField("train.init_weights",
                    "expected the path of an HDF5 weights file, or null");
  }
  return t;
}

json ScheduleToJson(const ScheduleOptions& s) {
  return {{"kind", ScheduleKindName(s.kind)},
          {"round", s.round},
          {"top_share", s.top_share},
          {"replicas", s.replicas},
          {"perturb", s.perturb},
          {"confirm_top", s.confirm_top},
          {"confirm_replicas", s.confirm_replicas},
          {"confirm_perturb", s.confirm_perturb},
          {"fdr_q", s.fdr_q}};
}

// `v` is the merged "schedule" object (every key present); values are
// range-checked by ValidateSchedule.
Result<ScheduleOptions> ParseSchedule(const json& v) {
  const std::set<std::string> keys = {"kind",        "round",           "top_share",
                                      "replicas",    "perturb",         "confirm_top",
                                      "confirm_replicas", "confirm_perturb", "fdr_q"};
  XW_RETURN_IF_ERROR(internal::CheckKeys(v, "schedule", keys, ValueText::kFull));
  ScheduleOptions s;
  XW_ASSIGN_OR_RETURN(std::string kind, internal::GetString(v["kind"], "schedule.kind"));
  if (kind == "auto") {
    s.kind = ScheduleKind::kAuto;
  } else if (kind == "screen") {
    s.kind = ScheduleKind::kScreen;
  } else if (kind == "two_stage") {
    s.kind = ScheduleKind::kTwoStage;
  } else {
    return BadField("schedule.kind",
                    "unknown schedule '" + kind + "' (expected auto, screen or two_stage)");
  }
  auto integer = [&v](const std::string& key) -> Result<int> {
    XW_ASSIGN_OR_RETURN(int64_t n, internal::GetIntegerLiteral(v[key], "schedule." + key,
                                                               ValueText::kFull));
    if (n < -1000000 || n > 1000000) return BadField("schedule." + key, "out of range");
    return static_cast<int>(n);
  };
  auto number = [&v](const std::string& key) {
    return internal::GetNumber(v[key], "schedule." + key, ValueText::kFull);
  };
  XW_ASSIGN_OR_RETURN(s.round, integer("round"));
  XW_ASSIGN_OR_RETURN(s.top_share, number("top_share"));
  XW_ASSIGN_OR_RETURN(s.replicas, integer("replicas"));
  XW_ASSIGN_OR_RETURN(s.perturb, internal::GetString(v["perturb"], "schedule.perturb"));
  XW_ASSIGN_OR_RETURN(s.confirm_top, integer("confirm_top"));
  XW_ASSIGN_OR_RETURN(s.confirm_replicas, integer("confirm_replicas"));
  XW_ASSIGN_OR_RETURN(s.confirm_perturb,
                      internal::GetString(v["confirm_perturb"], "schedule.confirm_perturb"));
  XW_ASSIGN_OR_RETURN(s.fdr_q, number("fdr_q"));
  return s;
}

// Every corner value of the space must make valid training options; the
// trainer's own validation names the option.
Status CheckSpace(const DriverConfig& c) {
  // The fixed settings on their own (even those a dimension overrides).
  if (Status st = ValidateTrainOptions(internal::TrialTrainOptions(c, {}, 1));
      !st.ok()) {
    return BadField("train", st.message());
  }
  const SearchSpace& s = c.search.space;
  const auto& names = internal::SearchableNames();
  for (const Dimension& d : s.dims()) {
    bool known = false;
    std::string list;
    for (const std::string& n : names) {
      known |= n == d.name;
      list += (list.empty() ? "" : ", ") + n;
    }
    if (!known) {
      return BadField(
          "dimensions",
          "'" + d.name + "' is not a searchable hyperparameter (" + list + ")");
    }
    if (d.name == "width" && !c.train.init_weights.empty()) {
      return BadField("dimensions",
                      "'width' cannot be searched with train.init_weights: "
                      "one weights file fits one width");
    }
    if ((d.name == "batch_size" || d.name == "epochs") &&
        d.type != DimType::kInteger) {
      return BadField("dimensions",
                      "'" + d.name + "' must have type \"integer\"");
    }
  }
  for (int corner = 0; corner < 2; ++corner) {
    std::vector<double> x;
    for (const Dimension& d : s.dims())
      x.push_back(corner == 0 ? d.low : d.high);
    TrainOptions o = internal::TrialTrainOptions(c, x, 1);
    Status st = ValidateTrainOptions(o);
    if (!st.ok()) {
      return BadField(corner == 0 ? "dimensions (low ends) / train"
                                  : "dimensions (high ends) / train",
                      st.message());
    }
  }
  return Status::OK();
}

}  // namespace

DriverConfig DefaultDriverConfig() {
  DriverConfig c;
  SearchConfig& s = c.search;
  s.space =
      SearchSpace::Create({
                              {"lr", DimType::kReal, 1e-8, 0.1, true},
                              {"epochs", DimType::kInteger, 1, 5, false},
                              {"adam_eps", DimType::kReal, 1e-8, 1.0, true},
                              {"batch_size", DimType::kInteger, 10, 400, true},
                          })
          .value();
  s.arch = "simple_cnn";
  s.profiles = {"torch", "tf"};
  s.data = "synthetic";
  s.train_limit = 2000;
  s.test_limit = 1000;
  s.objective = Objective::kSignificantDiff;
  s.budget.max_trials = 0;
  s.budget.max_seconds = 200;
  s.trials_per_subspace = 3;
  s.optimizer.n_initial_points = 2;
  c.train.arch_options.width = 0.5;
  return c;
}

Result<DriverConfig> ParseDriverConfigJson(const std::string& text) {
  XW_ASSIGN_OR_RETURN(json user, internal::ParseConfigText(text));
  if (!user.is_object()) return BadField("document", "expected an object");
  // Missing keys, at the top level and inside "train", "budget" and "data",
  // take the default search's values.
  json doc = json::parse(DriverConfigToJson(DefaultDriverConfig()));
  for (auto& [key, value] : user.items()) {
    const bool merge =
        key == "train" || key == "budget" || key == "data" || key == "schedule";
    json v = key == "data" && value.is_string() ? json{{"spec", value}} : value;
    if (merge && v.is_object()) {
      for (auto& [k, inner] : v.items()) doc[key][k] = inner;
    } else {
      doc[key] = v;
    }
  }
  json train = doc["train"];
  doc.erase("train");
  json schedule = doc["schedule"];
  doc.erase("schedule");
  DriverConfig c;
  XW_ASSIGN_OR_RETURN(c.search, ParseSearchConfigJson(doc.dump()));
  XW_ASSIGN_OR_RETURN(c.train, ParseTrain(train));
  XW_ASSIGN_OR_RETURN(c.schedule, ParseSchedule(schedule));
  XW_RETURN_IF_ERROR(ValidateSchedule(c.schedule, c.search.objective));
  XW_RETURN_IF_ERROR(CheckSpace(c));
  return c;
}

Result<DriverConfig> LoadDriverConfig(const std::string& path) {
  return internal::LoadConfigFile(path, &ParseDriverConfigJson);
}

std::string DriverConfigToJson(const DriverConfig& c) {
  json doc = json::parse(SearchConfigToJson(c.search));
  doc["train"] = TrainToJson(c.train);
  doc["schedule"] = ScheduleToJson(c.schedule);
  return doc.dump(2);
}

namespace internal {

const std::vector<std::string>& SearchableNames() {
  static const std::vector<std::string> names = {
      "lr",         "adam_eps", "beta1", "beta2",  "weight_decay",
      "batch_size", "epochs",   "width", "dropout"};
  return names;
}

TrainOptions TrialTrainOptions(const DriverConfig& c,
                               const std::vector<double>& x, int threads) {
  const TrainSettings& t = c.train;
  TrainOptions o;
  o.arch = c.search.arch;
  o.arch_options = t.arch_options;
  o.adam = t.adam;
  o.batch_size = t.batch_size;
  o.epochs = t.epochs;
  o.seed = t.seed;
  o.data_seed = t.data_seed;
  o.threads = threads;
  o.eval_batch_size = t.eval_batch_size;
  o.data_spec = c.search.data;
  o.train_limit = c.search.train_limit;
  o.test_limit = c.search.test_limit;
  // RunTrial points o.init_weights at the tensors PrepareTrials loaded.
  o.init_weights_source = t.init_weights;
  const SearchSpace& s = c.search.space;
  for (int i = 0; i < s.size() && i < static_cast<int>(x.size()); ++i) {
    const std::string& n = s.dim(i).name;
    const double v = x[i];
    if (n == "lr")
      o.adam.lr = v;
    else if (n == "adam_eps")
      o.adam.eps = v;
    else if (n == "beta1")
      o.adam.beta1 = v;
    else if (n == "beta2")
      o.adam.beta2 = v;
    else if (n == "weight_decay")
      o.adam.weight_decay = v;
    else if (n == "batch_size")
      o.batch_size = static_cast<int64_t>(std::llround(v));
    else if (n == "epochs")
      o.epochs = static_cast<int64_t>(std::llround(v));
    else if (n == "width")
      o.arch_options.width = v;
    else if (n == "dropout")
      o.arch_options.dropout = v;
  }
  return o;
}

std::string PointText(const SearchSpace& space, const std::vector<double>& x) {
  std::string out;
  for (int i = 0; i < space.size() && i < static_cast<int>(x.size()); ++i) {
    char buf[64];
    if (space.dim(i).type == DimType::kInteger) {
      std::snprintf(buf, sizeof buf, "%lld",
                    static_cast<long long>(std::llround(x[i])));
    } else {
      std::snprintf(buf, sizeof buf, "%.3g", x[i]);
    }
    out += (out.empty() ? "" : " ") + space.dim(i).name + "=" + buf;
  }
  return out;
}

}  // namespace internal
}  // namespace xw::hpo
