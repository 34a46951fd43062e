#include "bundle_trials.h"

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "archive_io.h"
#include "bundle_json.h"
#include "bundle_sha256.h"
#include "xwires/dataset/tensor_file.h"

namespace xw {
namespace bundle {
namespace {

using json = nlohmann::json;

// Invalid UTF-8 in stored text (e.g. imported CSV names) must not throw.
std::string Dump(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

json Real(double v) {
  if (std::isnan(v)) return nullptr;
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

json Parsed(const std::string& text, json fallback) {
  if (text.empty()) return fallback;
  json j = json::parse(text, nullptr, false);
  return j.is_discarded() ? json(text) : j;
}

json CurvesJson(const std::vector<EpochMetrics>& curves) {
  json out = json::array();
  for (const EpochMetrics& e : curves) {
    out.push_back({{"epoch", e.epoch},
                   {"train_loss_mean", Real(e.train_loss_mean)},
                   {"train_loss_last", Real(e.train_loss_last)},
                   {"train_acc", Real(e.train_acc)},
                   {"test_loss", Real(e.test_loss)},
                   {"test_acc", Real(e.test_acc)}});
  }
  return out;
}

std::string ModelSha(const ModelRecord& m) {
  return m.weights_sha256.empty() && !m.weights.empty()
             ? WeightsSha256(m.weights)
             : m.weights_sha256;
}

// The fields trials.json and the content hash share.
json CoreJson(const TrialRecord& t, bool with_curves) {
  json models = json::array();
  for (const ModelRecord& m : t.models) {
    json jm = {{"profile", m.profile},
               {"external", m.external},
               {"status", m.status},
               {"train_acc", Real(m.train_acc)},
               {"test_acc", Real(m.test_acc)},
               {"train_loss", Real(m.train_loss)},
               {"test_loss", Real(m.test_loss)},
               {"wall_time_s", Real(m.wall_time_s)},
               {"param_count", m.param_count},
               {"threads", m.threads},
               {"fingerprint", Parsed(m.fingerprint_json, json::object())},
               {"weights_sha256", ModelSha(m)}};
    if (with_curves) jm["curves"] = CurvesJson(m.curves);
    models.push_back(std::move(jm));
  }
  auto opt = [](int64_t v) { return v > 0 ? json(v) : json(nullptr); };
  return {{"arch", t.arch},
          {"data_spec", t.data_spec},
          {"hparams", Parsed(t.hparams_json, json::object())},
          {"extra", Parsed(t.extra_json, json::object())},
          {"lr", Real(t.lr)},
          {"adam_eps", Real(t.adam_eps)},
          {"beta1", Real(t.beta1)},
          {"beta2", Real(t.beta2)},
          {"weight_decay", Real(t.weight_decay)},
          {"batch_size", opt(t.batch_size)},
          {"epochs", opt(t.epochs)},
          {"seed", t.seed ? json(*t.seed) : json(nullptr)},
          {"divergence", Real(t.divergence)},
          {"external_id", t.external_id},
          {"models", std::move(models)}};
}

json ContentJson(const TrialRecord& t, bool with_curves) {
  json j = CoreJson(t, with_curves);
  for (size_t i = 0; i < t.models.size(); ++i) {
    const ModelRecord& m = t.models[i];
    j["models"][i]["profile_definition"] =
        m.external ? json(nullptr) : Parsed(m.profile_json, json(nullptr));
  }
  return j;
}

}  // namespace

std::string TrialKeySha256(const TrialRecord& trial) {
  return Sha256Hex(Dump(ContentJson(trial, /*with_curves=*/false)));
}

Result<std::string> TrialsToJson(const std::vector<BundleTrial>& trials) {
  std::string out = "[";
  for (size_t k = 0; k < trials.size(); ++k) {
    const BundleTrial& b = trials[k];
    if (b.weights_files.size() != b.record.models.size()) {
      return Status::Internal("trial " + std::to_string(k) +
                              ": weights_files size mismatch");
    }
    json j = CoreJson(b.record, /*with_curves=*/true);
    j["content_sha256"] = b.content_sha256;
    j["provenance"] = b.record.provenance;
    j["in_search"] = b.in_search;
    for (size_t i = 0; i < b.weights_files.size(); ++i) {
      j["models"][i]["weights_file"] =
          b.weights_files[i].empty() ? json(nullptr) : json(b.weights_files[i]);
    }
    out += (k == 0 ? "\n" : ",\n") + Dump(j);
  }
  return out + "\n]\n";
}

}  // namespace bundle

std::string TrialContentSha256(const TrialRecord& trial) {
  return bundle::Sha256Hex(
      bundle::Dump(bundle::ContentJson(trial, /*with_curves=*/true)));
}

}  // namespace xw
