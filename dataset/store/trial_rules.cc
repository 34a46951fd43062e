#include "trial_rules.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <set>

#include "sha256.h"
#include "model_file.h"
#include "xwires/dataset/store/tensor_file.h"
#include "xwires/dataset/store/trial_check.h"

namespace xw {

namespace {

// The shortest of %.15g..%.17g that reads back as v: -0.3, not
// -0.29999999999999999.
std::string Num(double v) {
  char buf[40];
  for (int digits = 15; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    if (std::strtod(buf, nullptr) == v || std::isnan(v)) break;
  }
  return buf;
}

Status Bad(const std::string& where, const char* field, double value, const char* rule) {
  return Status::InvalidArgument(where + ": " + field + " " + Num(value) + " " + rule);
}

// NaN (unknown) passes; otherwise `ok(v)` must hold.
template <typename F>
Status Check(const std::string& where, const char* field, double v, const char* rule, F ok) {
  if (std::isnan(v) || ok(v)) return Status::OK();
  return Bad(where, field, v, rule);
}

Status CheckAccuracy(const std::string& where, const char* field, double v) {
  return Check(where, field, v, "is not an accuracy in [0, 1]",
               [](double x) { return x >= 0 && x <= 1; });
}

Status CheckLoss(const std::string& where, const char* field, double v, bool diverged) {
  return Check(where, field, v, "is not finite (only a diverged model may have one)",
               [&](double x) { return std::isfinite(x) || diverged; });
}

Status CheckHyperparameters(const TrialRecord& t, const std::string& what) {
  auto finite = [](auto ok) { return [ok](double x) { return std::isfinite(x) && ok(x); }; };
  XW_RETURN_IF_ERROR(Check(what, "lr", t.lr, "is not a finite number > 0",
                           finite([](double x) { return x > 0; })));
  XW_RETURN_IF_ERROR(Check(what, "adam_eps", t.adam_eps, "is not a finite number > 0",
                           finite([](double x) { return x > 0; })));
  for (auto [name, v] : {std::pair<const char*, double>{"beta1", t.beta1}, {"beta2", t.beta2}}) {
    XW_RETURN_IF_ERROR(Check(what, name, v, "is not in [0, 1)",
                             [](double x) { return x >= 0 && x < 1; }));
  }
  XW_RETURN_IF_ERROR(Check(what, "weight_decay", t.weight_decay, "is not a finite number >= 0",
                           finite([](double x) { return x >= 0; })));
  if (t.batch_size < 0) return Bad(what, "batch_size", double(t.batch_size), "is negative");
  if (t.epochs < 0) return Bad(what, "epochs", double(t.epochs), "is negative");
  // Above 2^53 a count is no longer exact as a double, and the --near index
  // (REAL columns) would disagree with the trial (fsck's near-index check).
  constexpr int64_t kExact = int64_t{1} << 53;
  for (auto [name, v] : {std::pair<const char*, int64_t>{"batch_size", t.batch_size},
                         {"epochs", t.epochs}}) {
    if (v > kExact) {
      return Status::InvalidArgument(what + ": " + name + " " + std::to_string(v) +
                                     " is above 2^53 (not exact as a double)");
    }
  }
  return Status::OK();
}

Status CheckModel(const ModelRecord& m, const std::string& where) {
  const bool diverged = m.status == "diverged";
  XW_RETURN_IF_ERROR(CheckAccuracy(where, "train_acc", m.train_acc));
  XW_RETURN_IF_ERROR(CheckAccuracy(where, "test_acc", m.test_acc));
  if (m.status == "ok" && std::isnan(m.test_acc)) {
    return Status::InvalidArgument(where + ": test_acc is unknown but the status is ok");
  }
  XW_RETURN_IF_ERROR(CheckLoss(where, "train_loss", m.train_loss, diverged));
  XW_RETURN_IF_ERROR(CheckLoss(where, "test_loss", m.test_loss, diverged));
  for (size_t e = 0; e < m.curves.size(); ++e) {
    const EpochMetrics& c = m.curves[e];
    const std::string at = where + ": curves epoch " + std::to_string(e + 1);
    if (c.epoch != static_cast<int>(e + 1)) {
      return Status::InvalidArgument(at + ": numbered " + std::to_string(c.epoch) +
                                     " (epochs must be 1, 2, ... in order)");
    }
    XW_RETURN_IF_ERROR(CheckAccuracy(at, "train_acc", c.train_acc));
    XW_RETURN_IF_ERROR(CheckAccuracy(at, "test_acc", c.test_acc));
    XW_RETURN_IF_ERROR(CheckLoss(at, "train_loss_mean", c.train_loss_mean, diverged));
    XW_RETURN_IF_ERROR(CheckLoss(at, "train_loss_last", c.train_loss_last, diverged));
    XW_RETURN_IF_ERROR(CheckLoss(at, "test_loss", c.test_loss, diverged));
  }
  return Status::OK();
}

bool Near(double a, double b) { return std::fabs(a - b) <= 1e-6; }

Status CheckDivergence(const TrialRecord& t, const std::string& what) {
  if (std::isnan(t.divergence)) return Status::OK();
  double largest = -1;
  for (size_t i = 0; i < t.models.size(); ++i) {
    for (size_t j = i + 1; j < t.models.size(); ++j) {
      const double d = std::fabs(t.models[i].test_acc - t.models[j].test_acc);
      if (!std::isnan(d)) largest = std::max(largest, d);
    }
  }
  if (largest < 0) return Status::OK();  // fewer than two known accuracies
  const auto extra = nlohmann::json::parse(t.extra_json.empty() ? "{}" : t.extra_json, nullptr,
                                           /*allow_exceptions=*/false);
  if (extra.is_object() && extra.contains("objectives") && extra["objectives"].is_object()) {
    const auto& obj = extra["objectives"];
    bool matches = false;
    for (const auto& [name, v] : obj.items()) {
      if (v.is_number() && Near(v.get<double>(), t.divergence)) matches = true;
    }
    if (obj.contains("abs_acc_diff") && obj["abs_acc_diff"].is_number() &&
        !Near(obj["abs_acc_diff"].get<double>(), largest)) {
      return Status::InvalidArgument(what + ": objectives.abs_acc_diff " +
                                     Num(obj["abs_acc_diff"].get<double>()) +
                                     " is not the largest |test_acc difference| " + Num(largest));
    }
    if (!matches) {
      return Status::InvalidArgument(what + ": divergence " + Num(t.divergence) +
                                     " is none of the recorded objectives");
    }
    return Status::OK();
  }
  if (!Near(t.divergence, largest)) {
    return Status::InvalidArgument(what + ": divergence " + Num(t.divergence) +
                                   " is not the largest |test_acc difference| " + Num(largest));
  }
  return Status::OK();
}

bool ValidProfileName(const std::string& p) {
  if (p.empty() || p.size() > 64) return false;
  for (char c : p) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' &&
        c != '.')
      return false;
  }
  return true;
}

Status CheckJson(const std::string& text, const std::string& what,
                 bool must_be_object) {
  if (text.empty()) return Status::OK();
  auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded())
    return Status::InvalidArgument(what + " is not valid JSON");
  if (must_be_object && !j.is_object())
    return Status::InvalidArgument(what + " is not a JSON object");
  return Status::OK();
}

}  // namespace

Status CheckTrialRecord(const TrialRecord& t, const std::string& what) {
  if (t.arch.empty()) return Status::InvalidArgument(what + ": empty arch");
  if (t.models.empty()) return Status::InvalidArgument(what + ": no models");
  XW_RETURN_IF_ERROR(CheckJson(t.hparams_json, what + ": hparams_json", true));
  XW_RETURN_IF_ERROR(CheckJson(t.extra_json, what + ": extra_json", true));
  std::set<std::string> seen;
  static const std::set<std::string> kStatuses = {"ok", "diverged", "failed",
                                                  "incomplete"};
  for (const ModelRecord& m : t.models) {
    std::string mw = what + ": model '" + m.profile + "'";
    if (!ValidProfileName(m.profile)) {
      return Status::InvalidArgument(
          mw + ": profile name must be 1-64 of [A-Za-z0-9_.-]");
    }
    if (!seen.insert(m.profile).second)
      return Status::InvalidArgument(mw + ": duplicate profile");
    if (!kStatuses.count(m.status)) {
      return Status::InvalidArgument(mw + ": unknown status '" + m.status +
                                     "' (ok, diverged, failed, incomplete)");
    }
    XW_RETURN_IF_ERROR(CheckJson(m.profile_json, mw + ": profile_json", false));
    XW_RETURN_IF_ERROR(
        CheckJson(m.fingerprint_json, mw + ": fingerprint_json", true));
    if (!m.weights_sha256.empty() && !m.weights.empty() &&
        m.weights_sha256 != WeightsSha256(m.weights)) {
      return Status::InvalidArgument(
          mw + ": weights_sha256 does not match the weights");
    }
  }
  return CheckTrialValues(t, what);
}

Status CheckTrialStatus(const std::string& status) {
  static const std::set<std::string> kTrialStatuses = {"ok", "diverged", "failed",
                                                       "incomplete", "pending"};
  if (kTrialStatuses.count(status)) return Status::OK();
  return Status::InvalidArgument("unknown trial status '" + status +
                                 "' (ok, diverged, failed, incomplete, pending)");
}

Status CheckTrialForStore(const TrialRecord& t, const std::string& what) {
  return CheckTrialRecord(t, what);
}

Status CheckRunMetrics(double test_acc, double test_loss, bool diverged,
                       const std::string& what) {
  XW_RETURN_IF_ERROR(CheckAccuracy(what, "test_acc", test_acc));
  return CheckLoss(what, "test_loss", test_loss, diverged);
}

Status CheckTrialValues(const TrialRecord& t, const std::string& what) {
  XW_RETURN_IF_ERROR(CheckHyperparameters(t, what));
  for (const ModelRecord& m : t.models) {
    XW_RETURN_IF_ERROR(CheckModel(m, what + ": model '" + m.profile + "'"));
  }
  return CheckDivergence(t, what);
}

Status CheckReplica(const ReplicaRecord& r, const std::string& what) {
  static const std::set<std::string> kFamilies = {"ulp", "seed", "order"};
  auto bad = [&](const std::string& m) { return Status::InvalidArgument(what + ": " + m); };
  if (!kFamilies.count(r.family)) {
    return bad("family '" + r.family + "' (expected ulp, seed or order)");
  }
  if (r.replica < 0) return bad("replica index " + std::to_string(r.replica) + " is negative");
  if (r.profile.empty() || r.profile.size() > 64) return bad("profile name must be 1-64 characters");
  const auto params = nlohmann::json::parse(r.params_json, nullptr, /*allow_exceptions=*/false);
  if (!params.is_object()) return bad("params_json is not a JSON object");
  if (r.status != "ok" && r.status != "diverged") {
    return bad("status '" + r.status + "' (expected ok or diverged)");
  }
  if ((r.status == "diverged") != (r.first_nonfinite_step >= 1)) {
    return bad("first_nonfinite_step " + std::to_string(r.first_nonfinite_step) +
               " does not fit status '" + r.status +
               "' (a diverged replica records the step, >= 1; an ok one -1)");
  }
  if (std::isnan(r.test_acc)) return bad("test_acc is unknown");
  ModelRecord m;
  m.status = r.status;
  m.test_acc = r.test_acc;
  m.test_loss = r.test_loss;
  m.curves = r.curves;
  XW_RETURN_IF_ERROR(CheckModel(m, what));
  if (r.predictions.empty()) return bad("no per-example test predictions");
  if (!r.weights_sha256.empty() && !IsSha256Hex(r.weights_sha256)) {
    return bad("weights_sha256 must be 64 lowercase hex digits");
  }
  if (!r.weights.empty() && !r.weights_sha256.empty() &&
      WeightsSha256(r.weights) != r.weights_sha256) {
    return bad("weights_sha256 does not match the weights");
  }
  return Status::OK();
}

}  // namespace xw
