// VerifyBundle: the static checks (bundle_open.cc) plus a seeded replay.
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <numeric>
#include <tuple>

#include "bundle_open.h"
#include "xwires/core/build_info.h"
#include "xwires/core/rng.h"
#include "xwires/dataset/bundle/bundle.h"

namespace xw {
namespace {

using json = nlohmann::json;

// A model can be replayed when it was trained by xwires from a known profile.
bool Replayable(const ModelRecord& m) {
  return !m.external && !m.profile_json.empty();
}

// K distinct indices of `eligible`, drawn by a Philox-seeded partial
// Fisher-Yates shuffle: the same seed picks the same trials everywhere.
std::vector<int64_t> Draw(std::vector<int64_t> eligible, int k, uint64_t seed,
                          uint64_t stream = StreamId("bundle/replay")) {
  const Philox rng(seed, stream);
  const size_t n = eligible.size();
  const size_t take = std::min<size_t>(n, static_cast<size_t>(k));
  for (size_t i = 0; i < take; ++i) {
    const size_t j = i + rng.U32(i) % (n - i);
    std::swap(eligible[i], eligible[j]);
  }
  eligible.resize(take);
  return eligible;
}

std::string Field(const std::string& fingerprint, const char* key) {
  json j = json::parse(fingerprint, nullptr, false);
  if (!j.is_object() || !j.contains(key)) return "";
  return j[key].is_string() ? j[key].get<std::string>() : j[key].dump();
}

// Bitwise comparison is meaningful only when this build would compute the
// same bits: same toolkit and Eigen as the producer and, unless the profile's
// kernels are exact-order (`isa_free`), the same ISA and kernel target (the
// profile is the bundle's own definition, so it is the same by construction).
bool SameNumerics(const std::string& producer_fingerprint, bool isa_free, std::string* why) {
  const BuildInfo& b = GetBuildInfo();
  const std::string target = Field(MachineFingerprintJson(0), "kernel_target");
  const std::tuple<const char*, std::string, bool> keys[] = {
      {"isa", b.isa, !isa_free},
      {"kernel_target", target, !isa_free},
      {"toolkit", b.toolkit_version, true},
      {"eigen", b.eigen_version, true}};
  for (const auto& [key, mine, required] : keys) {
    const std::string theirs = Field(producer_fingerprint, key);
    // Fingerprints from before the dispatched kernels carry no
    // kernel_target; their "isa" alone decided the kernels' code paths.
    if (theirs.empty() && std::string(key) == "kernel_target") continue;
    if (required && theirs != mine) {
      *why = std::string(key) + " differs (bundle '" + theirs + "', here '" +
             mine + "')";
      return false;
    }
  }
  return true;
}

std::string Acc(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4f", v);
  return buf;
}

ReplayOutcome Compare(int64_t index, const ModelRecord& want,
                      const ModelRecord& got, const std::string& producer,
                      bool isa_free, double tolerance) {
  ReplayOutcome r;
  r.trial_index = index;
  r.profile = want.profile;
  std::string why;
  if (!want.weights_sha256.empty() && SameNumerics(producer, isa_free, &why)) {
    r.method = "bitwise";
    r.passed = got.weights_sha256 == want.weights_sha256;
    r.detail = "weights_sha256 " + want.weights_sha256.substr(0, 16) +
               (r.passed ? " == " : " != ") + got.weights_sha256.substr(0, 16) +
               " (replayed)";
    return r;
  }
  r.method = "accuracy";
  const double diff = std::fabs(want.test_acc - got.test_acc);
  r.passed =
      std::isfinite(diff) ? diff <= tolerance : want.test_acc == got.test_acc;
  r.detail = "test_acc " + Acc(want.test_acc) + " vs " + Acc(got.test_acc) +
             " replayed, |diff| " + Acc(diff) + (r.passed ? " <= " : " > ") +
             "tolerance " + Acc(tolerance) +
             (why.empty() ? " (no weights to compare)"
                          : " (bitwise impossible: " + why + ")");
  return r;
}

// Replays `options.replica_replays` replicas r >= 1 of trial `k` (drawn
// with the trials' seed; replica 0 is the trial itself), comparing as the
// models are compared.
Status ReplayReplicas(const bundle::OpenedBundle& b, int64_t k, const BundleCheckers& checkers,
                      const BundleVerifyOptions& options, BundleReport* report) {
  const TrialRecord& trial = b.trials[k].record;
  std::vector<int64_t> eligible;
  for (size_t i = 0; i < b.replicas.replicas.size(); ++i) {
    const bundle::BundleReplica& r = b.replicas.replicas[i];
    if (static_cast<int64_t>(r.trial) == k && r.record.replica >= 1) {
      eligible.push_back(static_cast<int64_t>(i));
    }
  }
  const int n = options.replica_replays < 0 ? static_cast<int>(eligible.size())
                                             : options.replica_replays;
  for (int64_t i : Draw(eligible, n, options.replay_seed,
                        MixStream(StreamId("bundle/replay-replicas"), k))) {
    const ReplicaRecord& want = b.replicas.replicas[i].record;
    const std::string name = want.family + " " + std::to_string(want.replica);
    const ModelRecord* model = nullptr;
    for (const ModelRecord& m : trial.models) {
      if (m.profile == want.profile) model = &m;
    }
    if (model == nullptr || !Replayable(*model)) continue;
    auto got = checkers.retrain_replica(trial, want);
    if (!got.ok()) {
      return got.status().WithContext("replaying replica " + name + " of '" + want.profile +
                                      "' of trial " + std::to_string(k));
    }
    ModelRecord w = *model, g = *model;
    w.weights_sha256 = want.weights_sha256;
    w.test_acc = want.test_acc;
    g.weights_sha256 = got->weights_sha256;
    g.test_acc = got->test_acc;
    const std::string producer =
        want.fingerprint_json.empty() || want.fingerprint_json == "{}" ? b.manifest.machine_json
                                                                       : want.fingerprint_json;
    const bool isa_free =
        checkers.same_bits_on_every_isa && checkers.same_bits_on_every_isa(model->profile_json);
    report->replays.push_back(
        Compare(k, w, g, producer, isa_free, options.accuracy_tolerance));
    ReplayOutcome& r = report->replays.back();
    r.replica = name;
    if (options.log) {
      options.log("replay: trial " + std::to_string(k) + " profile '" + want.profile +
                  "' replica " + name + ": " + r.method + " check " +
                  (r.passed ? "passed" : "FAILED") + ": " + r.detail);
    }
  }
  return Status::OK();
}

}  // namespace

bool BundleReport::replay_passed() const {
  for (const ReplayOutcome& r : replays) {
    if (!r.passed) return false;
  }
  return true;
}

Result<BundleReport> VerifyBundle(const std::string& path,
                                  const BundleCheckers& checkers,
                                  const BundleVerifyOptions& options) {
  bundle::OpenOptions open;
  open.temp_dir = options.temp_dir;
  open.log = options.log;
  open.limits = options.limits;
  XW_ASSIGN_OR_RETURN(bundle::OpenedBundle b,
                      bundle::OpenBundle(path, checkers, open));
  BundleReport report;
  report.manifest = b.manifest;
  report.bundle_sha256 = b.sha256;
  report.trials = static_cast<int64_t>(b.trials.size());
  report.analyses = static_cast<int64_t>(b.analyses.size());
  report.replicas = static_cast<int64_t>(b.replicas.replicas.size());
  report.replica_stats = static_cast<int64_t>(b.replicas.stats.size());
  for (const auto& t : b.trials) {
    for (const auto& f : t.weights_files)
      report.models_with_weights += f.empty() ? 0 : 1;
  }
  report.checks = b.checks;
  if (options.replay <= 0) return report;
  if (!checkers.retrain) {
    return Status::FailedPrecondition(
        "--replay needs a trainer (no retrain checker given)");
  }
  std::vector<int64_t> eligible;
  for (size_t k = 0; k < b.trials.size(); ++k) {
    const auto& models = b.trials[k].record.models;
    if (std::any_of(models.begin(), models.end(), Replayable))
      eligible.push_back(int64_t(k));
  }
  for (int64_t k : Draw(eligible, options.replay, options.replay_seed)) {
    const TrialRecord& want = b.trials[k].record;
    auto got = checkers.retrain(want);
    if (!got.ok())
      return got.status().WithContext("replaying trial " + std::to_string(k));
    // The retrained models follow the replayable models in order.
    size_t next = 0;
    for (const ModelRecord& m : want.models) {
      if (!Replayable(m)) continue;
      if (next >= got->models.size()) {
        return Status::Internal("replay of trial " + std::to_string(k) +
                                " returned " +
                                std::to_string(got->models.size()) + " models");
      }
      const ModelRecord& replayed = got->models[next++];
      const std::string producer =
          m.fingerprint_json.empty() || m.fingerprint_json == "{}"
              ? b.manifest.machine_json
              : m.fingerprint_json;
      const bool isa_free = checkers.same_bits_on_every_isa &&
                            checkers.same_bits_on_every_isa(m.profile_json);
      report.replays.push_back(Compare(k, m, replayed, producer, isa_free,
                                       options.accuracy_tolerance));
      const ReplayOutcome& r = report.replays.back();
      if (options.log) {
        options.log("replay: trial " + std::to_string(k) + " profile '" +
                    m.profile + "': " + r.method + " check " +
                    (r.passed ? "passed" : "FAILED") + ": " + r.detail);
      }
    }
    if (checkers.retrain_replica) {
      XW_RETURN_IF_ERROR(ReplayReplicas(b, k, checkers, options, &report));
    }
  }
  if (eligible.empty() && options.log) {
    options.log(
        "replay: no trial has a model trained by xwires from a known profile");
  }
  return report;
}

}  // namespace xw
