#include "bundle_checkers.h"

#include <cmath>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <tuple>
#include <vector>

#include "xwires/core/data.h"
#include "xwires/hpo/search_config.h"
#include "xwires/hpo/search_driver.h"
#include "xwires/trainers/profile.h"
#include "xwires/trainers/replica.h"
#include "xwires/trainers/trainer.h"

namespace xw::cli {
namespace {

using json = nlohmann::json;

// hparams[key] as T, `fallback` when absent or null; wrong types are errors.
template <typename T>
Result<T> Hp(const json& hp, const char* key, T fallback) {
  auto it = hp.find(key);
  if (it == hp.end() || it->is_null()) return fallback;
  if constexpr (std::is_same_v<T, std::string>) {
    if (!it->is_string())
      return Status::InvalidArgument(std::string("hparams.") + key +
                                     " must be a string");
  } else {
    if (!it->is_number())
      return Status::InvalidArgument(std::string("hparams.") + key +
                                     " must be a number");
  }
  return it->get<T>();
}

Result<TrainOptions> OptionsOf(const TrialRecord& t, const json& hp,
                               const ReplaySettings& s) {
  TrainOptions o;
  XW_ASSIGN_OR_RETURN(o.arch, Hp<std::string>(hp, "arch", t.arch));
  XW_ASSIGN_OR_RETURN(o.arch_options.width,
                      Hp<double>(hp, "width", o.arch_options.width));
  XW_ASSIGN_OR_RETURN(o.arch_options.depth,
                      Hp<int>(hp, "depth", o.arch_options.depth));
  XW_ASSIGN_OR_RETURN(o.arch_options.dropout,
                      Hp<double>(hp, "dropout", o.arch_options.dropout));
  XW_ASSIGN_OR_RETURN(o.epochs, Hp<int64_t>(hp, "epochs", t.epochs));
  XW_ASSIGN_OR_RETURN(o.batch_size,
                      Hp<int64_t>(hp, "batch_size", t.batch_size));
  XW_ASSIGN_OR_RETURN(o.adam.lr, Hp<double>(hp, "lr", t.lr));
  XW_ASSIGN_OR_RETURN(o.adam.eps, Hp<double>(hp, "adam_eps", t.adam_eps));
  XW_ASSIGN_OR_RETURN(o.adam.beta1, Hp<double>(hp, "beta1", t.beta1));
  XW_ASSIGN_OR_RETURN(o.adam.beta2, Hp<double>(hp, "beta2", t.beta2));
  XW_ASSIGN_OR_RETURN(o.adam.weight_decay,
                      Hp<double>(hp, "weight_decay", t.weight_decay));
  // A trial without a recorded seed (e.g. imported results) cannot be
  // replayed: any seed we chose would train a different model.
  auto hp_seed = hp.find("seed");
  if (!t.seed && (hp_seed == hp.end() || hp_seed->is_null())) {
    return Status::FailedPrecondition(
        "the trial has no recorded seed (imported results do not carry one); "
        "it cannot be replayed");
  }
  XW_ASSIGN_OR_RETURN(
      o.seed,
      Hp<uint64_t>(hp, "seed", static_cast<uint64_t>(t.seed.value_or(0))));
  XW_ASSIGN_OR_RETURN(o.eval_batch_size,
                      Hp<int64_t>(hp, "eval_batch_size", o.eval_batch_size));
  XW_ASSIGN_OR_RETURN(o.train_limit, Hp<int64_t>(hp, "train_limit", -1));
  XW_ASSIGN_OR_RETURN(o.test_limit, Hp<int64_t>(hp, "test_limit", -1));
  o.data_spec = t.data_spec;
  o.threads = s.threads;
  if (std::isnan(o.adam.weight_decay)) o.adam.weight_decay = 0;
  return o;
}

// SearchConfig of a stored search: `xwires search` stores its whole driver
// configuration; plain search configs and a bare dimension list (the space
// column) are read too.
// `whole` tells whether the config (arch, ...) was read, not just the space.
Result<hpo::SearchConfig> ConfigOf(const SearchRecord& search, bool* whole) {
  *whole = true;
  auto d = hpo::ParseDriverConfigJson(search.config_json);
  if (d.ok()) return d->search;
  auto c = hpo::ParseSearchConfigJson(search.config_json);
  if (c.ok()) return c;
  *whole = false;
  json space = json::parse(search.space_json, nullptr, false);
  if (space.is_object() && space.contains("dimensions"))
    space = space["dimensions"];
  if (space.is_array()) {
    auto s = hpo::ParseSearchConfigJson(json{{"dimensions", space}}.dump());
    if (s.ok()) return s;
  }
  return d.status().WithContext(
      "the bundle's search configuration cannot be read");
}

// The trial's value of search dimension `name`: from its hyperparameters, or
// the typed column of the same name.
Result<double> ValueOf(const TrialRecord& t, const json& hp,
                       const std::string& name) {
  auto it = hp.find(name);
  if (it != hp.end() && it->is_number()) return it->get<double>();
  const std::map<std::string, double> typed = {
      {"lr", t.lr},
      {"adam_eps", t.adam_eps},
      {"beta1", t.beta1},
      {"beta2", t.beta2},
      {"weight_decay", t.weight_decay},
      {"batch_size", double(t.batch_size)},
      {"epochs", double(t.epochs)}};
  auto t_it = typed.find(name);
  if (t_it != typed.end() && std::isfinite(t_it->second) && t_it->second != 0)
    return t_it->second;
  return Status::InvalidArgument("hyperparameter '" + name +
                                 "' of the search space is missing");
}

Status CheckSearchSpace(const SearchRecord& search, const TrialRecord& t) {
  bool whole = false;
  XW_ASSIGN_OR_RETURN(hpo::SearchConfig c, ConfigOf(search, &whole));
  if (whole && c.arch != t.arch) {
    return Status::InvalidArgument("arch '" + t.arch +
                                   "' is not the search's '" + c.arch + "'");
  }
  json hp = json::parse(t.hparams_json.empty() ? "{}" : t.hparams_json, nullptr,
                        false);
  if (!hp.is_object())
    return Status::InvalidArgument("hparams is not a JSON object");
  std::vector<double> x;
  for (const hpo::Dimension& d : c.space.dims()) {
    XW_ASSIGN_OR_RETURN(double v, ValueOf(t, hp, d.name));
    x.push_back(v);
  }
  return c.space.CheckPoint(x);
}

struct DataKey {
  std::string spec;
  int64_t train_limit, test_limit;
  uint64_t seed;
  auto operator<=>(const DataKey&) const = default;
};

// The trial's hyperparameters, refusing trials trained from weights that the
// bundle does not carry.
Result<json> ReplayableHparams(const TrialRecord& t) {
  json hp = json::parse(t.hparams_json.empty() ? "{}" : t.hparams_json, nullptr,
                        false);
  if (!hp.is_object())
    return Status::InvalidArgument("hparams is not a JSON object");
  if (hp.contains("init_weights") && !hp["init_weights"].is_null()) {
    return Status::FailedPrecondition(
        "the trial was trained from --init-weights, which the "
        "bundle does not carry; it cannot be replayed");
  }
  return hp;
}

// The trial's data, loaded once per (spec, limits, data seed).
Result<const DataSplits*> DataOf(const TrialRecord& t, const json& hp,
                                 const TrainOptions& o, const ReplaySettings& s,
                                 std::map<DataKey, DataSplits>* cache) {
  // The data seed follows `train`: the synthetic generator uses the seed.
  XW_ASSIGN_OR_RETURN(uint64_t data_seed,
                      Hp<uint64_t>(hp, "data_seed", o.seed));
  DataKey key{s.data_spec.empty() ? t.data_spec : s.data_spec, o.train_limit,
              o.test_limit, data_seed};
  auto it = cache->find(key);
  if (it == cache->end()) {
    DataOptions d;
    d.train_limit = key.train_limit;
    d.test_limit = key.test_limit;
    d.seed = key.seed;
    XW_ASSIGN_OR_RETURN(DataSplits data, LoadDataSpec(key.spec, d));
    it = cache->emplace(key, std::move(data)).first;
  }
  return &it->second;
}

Result<TrialRecord> Retrain(const TrialRecord& t, const ReplaySettings& s,
                            std::map<DataKey, DataSplits>* cache) {
  XW_ASSIGN_OR_RETURN(json hp, ReplayableHparams(t));
  XW_ASSIGN_OR_RETURN(TrainOptions o, OptionsOf(t, hp, s));
  std::vector<Profile> profiles;
  for (const ModelRecord& m : t.models) {
    if (m.external || m.profile_json.empty()) continue;
    auto p = ParseProfileJson(m.profile_json);
    if (!p.ok()) return p.status().WithContext("profile '" + m.profile + "'");
    profiles.push_back(std::move(*p));
  }
  if (profiles.empty())
    return Status::FailedPrecondition("no model has a profile definition");
  XW_ASSIGN_OR_RETURN(const DataSplits* data, DataOf(t, hp, o, s, cache));
  return TrainTrial(profiles, *data, o);
}

// Replica `want` of `t`, re-trained as `xwires replicate` trains it.
Result<ReplicaRecord> RetrainReplica(const TrialRecord& t, const ReplicaRecord& want,
                                     const ReplaySettings& s,
                                     std::map<DataKey, DataSplits>* cache) {
  XW_ASSIGN_OR_RETURN(json hp, ReplayableHparams(t));
  XW_ASSIGN_OR_RETURN(TrainOptions o, OptionsOf(t, hp, s));
  const ModelRecord* model = nullptr;
  for (const ModelRecord& m : t.models) {
    if (m.profile == want.profile && !m.external && !m.profile_json.empty()) model = &m;
  }
  if (model == nullptr) {
    return Status::FailedPrecondition("profile '" + want.profile +
                                      "' has no definition in the bundle");
  }
  XW_ASSIGN_OR_RETURN(Profile profile, ParseProfileJson(model->profile_json));
  XW_ASSIGN_OR_RETURN(PerturbFamily family, ParsePerturbFamily(want.family));
  XW_ASSIGN_OR_RETURN(const DataSplits* data, DataOf(t, hp, o, s, cache));
  XW_ASSIGN_OR_RETURN(ReplicaResult r, TrainReplica(profile, *data, o, want.replica, family));
  ReplicaRecord out = want;
  const ModelRecord& m = r.train.record;
  out.status = m.status == "ok" ? "ok" : "diverged";
  out.test_acc = m.test_acc;
  out.test_loss = m.test_loss;
  out.weights_sha256 = m.weights_sha256;
  out.params_json = r.perturbation.ParamsJson();
  out.predictions = std::move(r.train.test_predictions);
  out.curves = m.curves;
  return out;
}

}  // namespace

Result<TrialRecord> RetrainTrial(const TrialRecord& trial,
                                 const ReplaySettings& settings) {
  std::map<DataKey, DataSplits> cache;
  return Retrain(trial, settings, &cache);
}

BundleCheckers MakeBundleCheckers(const ReplaySettings& settings) {
  BundleCheckers c;
  c.profile = [](const std::string&, const std::string& json_text) {
    return ParseProfileJson(json_text).status();
  };
  c.search_space = CheckSearchSpace;
  c.same_bits_on_every_isa = [](const std::string& json_text) {
    auto p = ParseProfileJson(json_text);
    return p.ok() && SameBitsOnEveryIsa(p->kernels);
  };
  auto cache = std::make_shared<std::map<DataKey, DataSplits>>();
  c.retrain = [settings, cache](const TrialRecord& t) {
    return Retrain(t, settings, cache.get());
  };
  c.retrain_replica = [settings, cache](const TrialRecord& t, const ReplicaRecord& r) {
    return RetrainReplica(t, r, settings, cache.get());
  };
  return c;
}

}  // namespace xw::cli
