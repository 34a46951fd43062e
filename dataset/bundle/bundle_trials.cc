#include "bundle_trials.h"

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "archive_io.h"
#include "bundle_json.h"
#include "dataset/store/sha256.h"
#include "xwires/dataset/store/tensor_file.h"

namespace xw {
namespace bundle {
namespace {

using json = nlohmann::json;

json Parsed(const std::string& text, json fallback) {
  if (text.empty()) return fallback;
  json j = json::parse(text, nullptr, false);
  return j.is_discarded() ? json(text) : j;
}

json CurvesJson(const std::vector<EpochMetrics>& curves) {
  json out = json::array();
  for (const EpochMetrics& e : curves) {
    out.push_back({{"epoch", e.epoch},
                   {"train_loss_mean", RealJson(e.train_loss_mean)},
                   {"train_loss_last", RealJson(e.train_loss_last)},
                   {"train_acc", RealJson(e.train_acc)},
                   {"test_loss", RealJson(e.test_loss)},
                   {"test_acc", RealJson(e.test_acc)}});
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
               {"train_acc", RealJson(m.train_acc)},
               {"test_acc", RealJson(m.test_acc)},
               {"train_loss", RealJson(m.train_loss)},
               {"test_loss", RealJson(m.test_loss)},
               {"wall_time_s", RealJson(m.wall_time_s)},
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
          {"lr", RealJson(t.lr)},
          {"adam_eps", RealJson(t.adam_eps)},
          {"beta1", RealJson(t.beta1)},
          {"beta2", RealJson(t.beta2)},
          {"weight_decay", RealJson(t.weight_decay)},
          {"batch_size", opt(t.batch_size)},
          {"epochs", opt(t.epochs)},
          {"seed", t.seed ? json(*t.seed) : json(nullptr)},
          {"divergence", RealJson(t.divergence)},
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
  return Sha256Hex(DumpLenient(ContentJson(trial, /*with_curves=*/false)));
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
    if (b.source_id > 0) j["id"] = b.source_id;
    for (size_t i = 0; i < b.weights_files.size(); ++i) {
      j["models"][i]["weights_file"] =
          b.weights_files[i].empty() ? json(nullptr) : json(b.weights_files[i]);
    }
    out += (k == 0 ? "\n" : ",\n") + DumpLenient(j);
  }
  return out + "\n]\n";
}

}  // namespace bundle

std::string TrialContentSha256(const TrialRecord& trial) {
  return Sha256Hex(
      bundle::DumpLenient(bundle::ContentJson(trial, /*with_curves=*/true)));
}

}  // namespace xw
