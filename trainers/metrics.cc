#include "xwires/trainers/metrics.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "xwires/core/build_info.h"

namespace xw {

namespace {

using Json = nlohmann::ordered_json;

Json Num(double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); }

Json ParseOrString(const std::string& text) {
  if (text.empty()) return Json::object();
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  return j.is_discarded() ? Json(text) : j;
}

Json CurvesJson(const std::vector<EpochMetrics>& curves) {
  Json out = Json::array();
  for (const EpochMetrics& e : curves) {
    out.push_back({{"epoch", e.epoch},
                   {"train_loss_mean", Num(e.train_loss_mean)},
                   {"train_loss_last", Num(e.train_loss_last)},
                   {"train_acc", Num(e.train_acc)},
                   {"test_loss", Num(e.test_loss)},
                   {"test_acc", Num(e.test_acc)}});
  }
  return out;
}

}  // namespace

std::string HparamsJson(const TrainOptions& o) {
  Json j = {{"arch", o.arch},
            {"width", o.arch_options.width},
            {"depth", o.arch_options.depth},
            {"dropout", o.arch_options.dropout},
            {"epochs", o.epochs},
            {"batch_size", o.batch_size},
            {"lr", o.adam.lr},
            {"adam_eps", o.adam.eps},
            {"beta1", o.adam.beta1},
            {"beta2", o.adam.beta2},
            {"weight_decay", o.adam.weight_decay},
            {"seed", o.seed},
            {"data_seed", DataSeed(o)},
            {"threads", o.threads},
            {"eval_batch_size", o.eval_batch_size},
            {"data", o.data_spec},
            {"train_limit", o.train_limit},
            {"test_limit", o.test_limit},
            {"init_weights", o.init_weights != nullptr ? Json(o.init_weights_source)
                                                       : Json(nullptr)}};
  return j.dump();
}

TrialRecord TrialRecordFor(const TrainOptions& o) {
  TrialRecord t;
  t.arch = o.arch;
  t.data_spec = o.data_spec;
  t.hparams_json = HparamsJson(o);
  t.lr = o.adam.lr;
  t.adam_eps = o.adam.eps;
  t.beta1 = o.adam.beta1;
  t.beta2 = o.adam.beta2;
  t.weight_decay = o.adam.weight_decay;
  t.batch_size = o.batch_size;
  t.epochs = o.epochs;
  t.seed = static_cast<int64_t>(o.seed);
  return t;
}

std::string MetricsJson(const TrialRecord& trial, const DataSplits& data,
                        const std::vector<std::string>& weights_files, double wall_time_s,
                        int threads) {
  Json j;
  j["format"] = "xwires-train-metrics-1";
  j["arch"] = trial.arch;
  j["data"] = {{"spec", trial.data_spec},
               {"name", data.name},
               {"train_size", data.train.size()},
               {"test_size", data.test.size()},
               {"image_shape", {data.train.channels(), data.train.height(), data.train.width()}},
               {"classes", data.train.num_classes}};
  j["hparams"] = ParseOrString(trial.hparams_json);
  // Dynamic loss scaling's per-model facts (TrainTrial puts them in the
  // trial's extra JSON): shown with each model that used it.
  const Json extra = ParseOrString(trial.extra_json.empty() ? "{}" : trial.extra_json);
  const Json* scaling = extra.is_object() && extra.contains("loss_scaling") &&
                                extra["loss_scaling"].is_object()
                            ? &extra["loss_scaling"]
                            : nullptr;
  Json names = Json::array(), models = Json::array();
  for (size_t i = 0; i < trial.models.size(); ++i) {
    const ModelRecord& m = trial.models[i];
    names.push_back(m.profile);
    models.push_back({{"profile", m.profile},
                      {"status", m.status},
                      {"test_acc", Num(m.test_acc)},
                      {"test_loss", Num(m.test_loss)},
                      {"train_acc", Num(m.train_acc)},
                      {"train_loss", Num(m.train_loss)},
                      {"wall_time_s", Num(m.wall_time_s)},
                      {"param_count", m.param_count},
                      {"threads", m.threads},
                      {"weights_file", i < weights_files.size() ? weights_files[i] : ""},
                      {"weights_sha256", m.weights_sha256},
                      {"profile_definition", ParseOrString(m.profile_json)},
                      {"curves", CurvesJson(m.curves)}});
    if (scaling != nullptr && scaling->contains(m.profile)) {
      models.back()["loss_scaling"] = (*scaling)[m.profile];
    }
  }
  j["profiles"] = names;
  j["models"] = models;
  j["test_acc_difference"] =
      trial.models.size() == 2
          ? Num(std::fabs(trial.models[0].test_acc - trial.models[1].test_acc))
          : Json(nullptr);
  j["divergence"] = Num(trial.divergence);
  j["wall_time_s"] = Num(wall_time_s);
  j["fingerprint"] = ParseOrString(MachineFingerprintJson(threads));
  return j.dump(2);
}

}  // namespace xw
