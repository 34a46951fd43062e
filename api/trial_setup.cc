#include "xwires/api/trial_setup.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "xwires/api/analysis_store.h"
#include "xwires/dataset/store/tensor_file.h"

namespace xw {
namespace {

using Json = nlohmann::json;

std::string TrialName(const TrialRow& t) {
  return "trial " + std::to_string(t.id);
}

// Reads hparams[key] into *out when present (and not null).
template <typename T>
Status Read(const Json& h, const char* key, const TrialRow& t, T* out) {
  auto it = h.find(key);
  if (it == h.end() || it->is_null()) return Status::OK();
  try {
    *out = it->get<T>();
  } catch (const std::exception&) {
    return Status::InvalidArgument(TrialName(t) + ": hparams_json." + key +
                                   ": wrong type (" + it->dump() + ")");
  }
  return Status::OK();
}

}  // namespace

Result<TrainOptions> OptionsFromTrial(const TrialRow& t) {
  TrainOptions o;
  o.arch = t.arch;
  // The typed columns first; the JSON, which holds every option, wins.
  if (std::isfinite(t.lr)) o.adam.lr = t.lr;
  if (std::isfinite(t.adam_eps)) o.adam.eps = t.adam_eps;
  if (std::isfinite(t.beta1)) o.adam.beta1 = t.beta1;
  if (std::isfinite(t.beta2)) o.adam.beta2 = t.beta2;
  if (std::isfinite(t.weight_decay)) o.adam.weight_decay = t.weight_decay;
  if (t.batch_size) o.batch_size = *t.batch_size;
  if (t.epochs) o.epochs = *t.epochs;
  if (t.seed) o.seed = static_cast<uint64_t>(*t.seed);
  o.data_spec = t.data_spec;
  Json h = Json::object();
  if (!t.hparams_json.empty()) {
    h = Json::parse(t.hparams_json, nullptr, /*allow_exceptions=*/false);
    if (!h.is_object()) {
      return Status::InvalidArgument(TrialName(t) +
                                     ": hparams_json is not a JSON object");
    }
  }
  XW_RETURN_IF_ERROR(Read(h, "arch", t, &o.arch));
  XW_RETURN_IF_ERROR(Read(h, "width", t, &o.arch_options.width));
  XW_RETURN_IF_ERROR(Read(h, "depth", t, &o.arch_options.depth));
  XW_RETURN_IF_ERROR(Read(h, "dropout", t, &o.arch_options.dropout));
  XW_RETURN_IF_ERROR(Read(h, "epochs", t, &o.epochs));
  XW_RETURN_IF_ERROR(Read(h, "batch_size", t, &o.batch_size));
  XW_RETURN_IF_ERROR(Read(h, "lr", t, &o.adam.lr));
  XW_RETURN_IF_ERROR(Read(h, "adam_eps", t, &o.adam.eps));
  XW_RETURN_IF_ERROR(Read(h, "beta1", t, &o.adam.beta1));
  XW_RETURN_IF_ERROR(Read(h, "beta2", t, &o.adam.beta2));
  XW_RETURN_IF_ERROR(Read(h, "weight_decay", t, &o.adam.weight_decay));
  XW_RETURN_IF_ERROR(Read(h, "seed", t, &o.seed));
  XW_RETURN_IF_ERROR(Read(h, "eval_batch_size", t, &o.eval_batch_size));
  XW_RETURN_IF_ERROR(Read(h, "data", t, &o.data_spec));
  XW_RETURN_IF_ERROR(Read(h, "train_limit", t, &o.train_limit));
  XW_RETURN_IF_ERROR(Read(h, "test_limit", t, &o.test_limit));
  XW_RETURN_IF_ERROR(Read(h, "init_weights", t, &o.init_weights_source));
  Status s = ValidateTrainOptions(o);
  if (!s.ok()) return s.WithContext(TrialName(t));
  return o;
}

Result<size_t> PickModel(const TrialRow& trial, const std::string& profile,
                         size_t which) {
  if (profile.empty()) {
    if (which < trial.models.size()) return which;
    return Status::FailedPrecondition(TrialName(trial) + " has " +
                                      std::to_string(trial.models.size()) +
                                      " model(s); a pair needs two");
  }
  for (size_t i = 0; i < trial.models.size(); ++i) {
    if (trial.models[i].profile == profile) return i;
  }
  std::string have;
  for (const ModelRow& m : trial.models)
    have += (have.empty() ? "" : ", ") + m.profile;
  return Status::NotFound(TrialName(trial) + " has no model under profile '" +
                          profile + "' (it has: " + have + ")");
}

Result<std::pair<size_t, size_t>> PickPair(const TrialRow& trial, const std::string& profile_a,
                                           const std::string& profile_b, const std::string& op) {
  XW_ASSIGN_OR_RETURN(size_t ia, PickModel(trial, profile_a, 0));
  XW_ASSIGN_OR_RETURN(size_t ib, PickModel(trial, profile_b, 1));
  if (ia == ib) return Status::InvalidArgument(op + ": both sides name the same model");
  return std::make_pair(ia, ib);
}

Result<TrialSetup> LoadTrialSetup(const Dataset& ds, int64_t trial_id,
                                  bool train_data) {
  TrialSetup s;
  XW_ASSIGN_OR_RETURN(s.trial, ds.GetTrial(trial_id));
  const TrialRow& t = s.trial;
  if (t.models.size() < 2) {
    return Status::FailedPrecondition(
        TrialName(t) + " (status " + t.status + ") has " +
        std::to_string(t.models.size()) + " model(s); a pair needs two");
  }
  XW_ASSIGN_OR_RETURN(std::vector<std::string> defs, StoredProfileJson(ds, t));
  for (size_t i = 0; i < t.models.size(); ++i) {
    if (t.models[i].external || defs[i].empty()) {
      return Status::FailedPrecondition(
          TrialName(t) + ": model '" + t.models[i].profile +
          "' is external (imported, e.g. from CrossedWires): no profile "
          "definition or weights "
          "to re-run it with");
    }
    auto p = ParseProfileJson(defs[i]);
    if (!p.ok())
      return p.status().WithContext(TrialName(t) + ": stored profile '" +
                                    t.models[i].profile + "'");
    s.profiles.push_back(std::move(p).value());
  }
  XW_ASSIGN_OR_RETURN(s.options, OptionsFromTrial(t));
  if (train_data && !s.options.init_weights_source.empty()) {
    auto w = ReadTensorFile(s.options.init_weights_source);
    if (!w.ok()) {
      return w.status().WithContext(
          TrialName(t) + " started from init weights that cannot be read");
    }
    s.init_weights = std::move(w).value();
  }
  DataOptions d;
  d.train_limit = train_data ? s.options.train_limit : 1;
  d.test_limit = s.options.test_limit;
  d.seed = s.options.seed;  // as `xwires train` and the search driver load it
  auto data = LoadDataSpec(s.options.data_spec, d);
  if (!data.ok())
    return data.status().WithContext(TrialName(t) + ": data '" +
                                     s.options.data_spec + "'");
  s.data = std::move(data).value();
  s.input.channels = s.data.test.channels();
  s.input.height = s.data.test.height();
  s.input.width = s.data.test.width();
  s.input.num_classes = s.data.test.num_classes;
  return s;
}

Result<std::unique_ptr<Model>> BuildWithWeights(const TrialSetup& setup,
                                                const NamedTensors& weights,
                                                const std::string& source) {
  XW_ASSIGN_OR_RETURN(auto model, BuildModel(setup.options.arch, setup.input,
                                             setup.options.arch_options));
  XW_RETURN_IF_ERROR(model->LoadState(weights, source));
  return model;
}

Result<std::unique_ptr<Model>> LoadStoredModel(const Dataset& ds,
                                               const TrialSetup& setup,
                                               size_t index,
                                               NamedTensors* weights) {
  const ModelRow& m = setup.trial.models.at(index);
  if (!m.has_weights) {
    return Status::FailedPrecondition(TrialName(setup.trial) + ": model '" +
                                      m.profile + "' has no stored weights");
  }
  XW_ASSIGN_OR_RETURN(NamedTensors w, ds.LoadWeights(m.id));
  XW_ASSIGN_OR_RETURN(
      auto model,
      BuildWithWeights(setup, w,
                       TrialName(setup.trial) + " model '" + m.profile + "'"));
  if (weights != nullptr) *weights = std::move(w);
  return model;
}

}  // namespace xw
