#include "replica_fixtures.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "testing/trial_builder.h"
#include "xwires/core/build_info.h"

namespace xw::testutil {

using json = nlohmann::json;

std::vector<uint8_t> ReplicaLabels() {
  std::vector<uint8_t> l;
  for (int i = 0; i < kReplicaExamples; ++i) {
    l.push_back(static_cast<uint8_t>(i % kReplicaClasses));
  }
  return l;
}

TrialRecord ReplicaTrial(int seed) {
  TrialRecord t = BaseTrial({.arch = "mlp", .seed = seed});
  t.hparams_json = json{{"lr", 0.01}, {"seed", seed}}.dump();
  for (ModelRecord& m : t.models) {
    m.test_acc = m.profile == "torch" ? 0.6 : 0.3;
    m.test_loss = 1.5;
    m.train_acc = m.test_acc;
    m.train_loss = 1.4;
    m.fingerprint_json = MachineFingerprintJson(1);
    m.threads = 1;
    m.curves = {{1, 2.0, 1.9, 0.2, 2.1, m.test_acc}};
  }
  t.divergence = 0.3;
  return t;
}

ReplicaRecord MakeReplica(int64_t trial, const std::string& profile, const std::string& family,
                          int r, bool with_weights) {
  ReplicaRecord x;
  x.trial_id = trial;
  x.profile = profile;
  x.family = family;
  x.replica = r;
  x.params_json = json{{"family", r == 0 ? "none" : family}, {"index", r}}.dump();
  const int right = profile == "torch" ? 6 : 3;
  int correct = 0;
  for (int i = 0; i < kReplicaExamples; ++i) {
    const bool ok = (i * 7 + r * 3) % 10 < right - (i % 11 == r ? 1 : 0);
    x.predictions.push_back(
        static_cast<uint8_t>(ok ? i % kReplicaClasses : (i + 1) % kReplicaClasses));
    correct += ok;
  }
  x.test_acc = static_cast<double>(correct) / kReplicaExamples;
  x.test_loss = 1.0 + 0.01 * r;
  x.curves = {{1, 2.0, 1.9, 0.2, x.test_loss, x.test_acc}};
  x.wall_time_s = 0.5;
  if (with_weights) {
    Tensor w({2, 2});
    for (int k = 0; k < 4; ++k) w[k] = 0.25f * static_cast<float>(k + r);
    x.weights.push_back({"fc.weight", w});
  }
  return x;
}

void StoreReplicated(Dataset& ds, int64_t trial, const std::string& family, int first, int k,
                     int weights_replica) {
  std::vector<ReplicaRecord> a, b;
  for (int r = first; r < first + k; ++r) {
    for (const char* p : {"torch", "tf"}) {
      ReplicaRecord x = MakeReplica(trial, p, family, r, r == weights_replica);
      auto id = StoreReplica(ds, x);
      ASSERT_TRUE(id.ok() || id.status().code() == Status::Code::kAlreadyExists)
          << id.status().ToString();
      (p[1] == 'o' ? a : b).push_back(std::move(x));
    }
  }
  ReplicaStatsRecord s;
  s.trial_id = trial;
  s.profile_a = "torch";
  s.profile_b = "tf";
  s.family = family;
  s.first_replica = first;
  s.k_a = s.k_b = k;
  s.num_classes = kReplicaClasses;
  s.test_labels = ReplicaLabels();
  auto st = ReplicaPairStatistics(a, b, s.test_labels, kReplicaClasses);
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  s.stats = *st;
  ASSERT_TRUE(StoreReplicaStats(ds, s).ok());
}

}  // namespace xw::testutil
