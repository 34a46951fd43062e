// Replicas (trainers/replica.h): each family changes what it says and nothing
// else, and a replica's bits are a pure function of (trial, r, family): the
// golden hashes below hold on every SIMD target and thread count for the
// exact-order profiles, as golden_bits_test.cc does for plain runs.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "xwires/core/data.h"
#include "xwires/core/simd_target.h"
#include "xwires/trainers/metrics.h"
#include "xwires/trainers/profile.h"
#include "xwires/trainers/replica.h"
#include "xwires/trainers/trainer.h"

namespace xw {
namespace {

DataSplits SmallData() {
  SyntheticOptions so;
  so.train_size = 48;
  so.test_size = 32;
  so.seed = 7;
  return MakeSynthetic(so);
}

TrainOptions SmallOptions(const std::string& arch, int threads) {
  TrainOptions o;
  o.arch = arch;
  o.arch_options.width = 0.5;
  o.epochs = 1;
  o.batch_size = 16;
  o.adam.lr = 0.01;
  o.seed = 11;
  o.threads = threads;
  return o;
}

Profile Load(const std::string& name) {
  auto p = LoadProfile(name);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return p.ok() ? *p : Profile{};
}

ReplicaResult Replica(const std::string& arch, const std::string& profile, int64_t r,
                      PerturbFamily f, int threads, const DataSplits& data) {
  auto out = TrainReplica(Load(profile), data, SmallOptions(arch, threads), r, f);
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  return out.ok() ? std::move(out).value() : ReplicaResult{};
}

struct GoldenReplica {
  const char* arch;
  const char* profile;
  int64_t replica;
  PerturbFamily family;
  const char* sha256;
};

// Produced on 2026-11-28 on an Intel Xeon @ 2.50GHz (AVX-512), 2 threads;
// every target and thread count must reproduce them (measured: AVX3, AVX2,
// SSE4, SSSE3 and SCALAR at 1, 2 and 3 threads). The torch simple_cnn
// literals were produced again on 2026-11-28 (same CPU) when the torch
// profile's batch norm moved to PyTorch's double accumulation and fused
// scale-shift (batch_norm.accumulate, batch_norm.fma).
const GoldenReplica kGolden[] = {
    {"mlp", "torch", 1, PerturbFamily::kUlp,
     "4ac7c8955bcf8169b2d0485e4c600f3228e876ce3d86f0ba143715db39d38aea"},
    {"mlp", "reference", 2, PerturbFamily::kUlp,
     "2856e1aac88931733c57d0731a7925c86519d2306167e7b2a8466ca74726f46b"},
    {"simple_cnn", "torch", 1, PerturbFamily::kUlp,
     "d5bbeac8d26c6dd595b2df4fb35c8c90c6e18b92428e238efa1c0fa60dbbe4d3"},
    {"simple_cnn", "torch", 1, PerturbFamily::kOrder,
     "a1f775b509534c6395dc3184ff87c1dee80374b14c2bf7f042756354bfe802b7"},
    {"simple_cnn", "torch", 3, PerturbFamily::kOrder,
     "f6211ce8cf77761e371341e12f66de4a8a8850c56fabb18ecad0d7cc9fcd5956"},
    {"simple_cnn", "reference", 3, PerturbFamily::kSeed,
     "c2bd4ea1f15d7b54dce4e5f508120ecce8c262ef975db929d8a64c36706be913"},
};

class ReplicaTest : public ::testing::Test {
 protected:
  void TearDown() override { ASSERT_TRUE(SetKernelTarget("").ok()); }
};

TEST_F(ReplicaTest, GoldenHashesOnEveryTargetAndThreadCount) {
  const DataSplits data = SmallData();
  for (const GoldenReplica& g : kGolden) {
    EXPECT_EQ(Replica(g.arch, g.profile, g.replica, g.family, 2, data).train.record.weights_sha256,
              g.sha256)
        << g.arch << " " << g.profile << " r=" << g.replica << " "
        << PerturbFamilyName(g.family) << " on " << KernelTarget();
  }
  // Each target at one thread count, alternating 1 and 3, keeps the test
  // short; the best target ran at 2 above.
  int threads = 1;
  for (const std::string& target : KernelTargets()) {
    ASSERT_TRUE(SetKernelTarget(target).ok());
    threads = 4 - threads;
    {
      for (const GoldenReplica& g : kGolden) {
        EXPECT_EQ(
            Replica(g.arch, g.profile, g.replica, g.family, threads, data).train.record.weights_sha256,
            g.sha256)
            << g.arch << " " << g.profile << " r=" << g.replica << " "
            << PerturbFamilyName(g.family) << " on " << target << ", " << threads << " threads";
      }
    }
  }
}

TEST_F(ReplicaTest, ReplicaZeroIsTheTrialAsTrained) {
  const DataSplits data = SmallData();
  auto plain = TrainProfile(Load("torch"), data, SmallOptions("mlp", 2));
  ASSERT_TRUE(plain.ok());
  for (PerturbFamily f : {PerturbFamily::kUlp, PerturbFamily::kSeed, PerturbFamily::kOrder}) {
    const ReplicaResult r0 = Replica("mlp", "torch", 0, f, 2, data);
    EXPECT_EQ(r0.train.record.weights_sha256, plain->record.weights_sha256);
    EXPECT_EQ(r0.perturbation.ParamsJson(), R"({"family":"none"})");
  }
}

TEST_F(ReplicaTest, UlpMovesOneFirstLayerWeightByOneUlp) {
  const DataSplits data = SmallData();
  const ReplicaResult r0 = Replica("simple_cnn", "torch", 0, PerturbFamily::kUlp, 2, data);
  std::vector<std::string> shas;
  for (int64_t r = 1; r <= 4; ++r) {
    const ReplicaResult rr = Replica("simple_cnn", "torch", r, PerturbFamily::kUlp, 2, data);
    const UlpNudge& n = rr.perturbation.nudge;
    EXPECT_EQ(n.tensor, "conv1.weight") << "the first layer's weight";
    EXPECT_GE(n.index, 0);
    EXPECT_EQ(std::nextafter(n.before, n.direction > 0 ? 1e30f : -1e30f), n.after);
    EXPECT_NE(n.before, n.after);
    EXPECT_EQ(rr.perturbation.train_seed, 11u) << "ulp keeps the seed";
    EXPECT_NE(rr.train.record.weights_sha256, r0.train.record.weights_sha256);
    const auto j = nlohmann::json::parse(rr.perturbation.ParamsJson());
    EXPECT_EQ(j["family"], "ulp");
    EXPECT_EQ(j["index"], n.index);
    EXPECT_EQ(j["tensor"], n.tensor);
    shas.push_back(rr.train.record.weights_sha256);
  }
  for (size_t i = 0; i < shas.size(); ++i)
    for (size_t j = i + 1; j < shas.size(); ++j) EXPECT_NE(shas[i], shas[j]);
}

TEST_F(ReplicaTest, SeedChangesTheTrainingSeedOnly) {
  auto p = ResolvePerturbation(Load("tf"), 11, 2, PerturbFamily::kSeed);
  ASSERT_TRUE(p.ok());
  EXPECT_NE(p->train_seed, 11u);
  EXPECT_FALSE(p->ulp);
  EXPECT_EQ(p->reduce, "pairwise");
  auto again = ResolvePerturbation(Load("tf"), 11, 2, PerturbFamily::kSeed);
  EXPECT_EQ(again->train_seed, p->train_seed);
  auto other = ResolvePerturbation(Load("tf"), 11, 3, PerturbFamily::kSeed);
  EXPECT_NE(other->train_seed, p->train_seed);
  // The replica records the data seed of the trial, not its own seed.
  const DataSplits data = SmallData();
  TrainOptions o = SmallOptions("mlp", 2);
  auto rr = TrainReplica(Load("tf"), data, o, 2, PerturbFamily::kSeed);
  ASSERT_TRUE(rr.ok()) << rr.status().ToString();
  EXPECT_EQ(nlohmann::json::parse(rr->perturbation.ParamsJson())["seed"], p->train_seed);
}

TEST_F(ReplicaTest, OrderTakesTheFrameworksOtherWidths) {
  const Profile torch = Load("torch"), tf = Load("tf"), ref = Load("reference");
  std::vector<std::string> torch_orders, tf_orders;
  for (int64_t r = 1; r <= 4; ++r) {
    auto p = ResolvePerturbation(torch, 5, r, PerturbFamily::kOrder);
    ASSERT_TRUE(p.ok());
    torch_orders.push_back(p->reduce + (p->ulp ? "+ulp" : ""));
    auto q = ResolvePerturbation(tf, 5, r, PerturbFamily::kOrder);
    ASSERT_TRUE(q.ok());
    tf_orders.push_back(q->reduce + (q->ulp ? "+ulp" : ""));
  }
  EXPECT_EQ(torch_orders,
            (std::vector<std::string>{"lanes16", "lanes4", "lanes16+ulp", "lanes4+ulp"}));
  EXPECT_EQ(tf_orders,
            (std::vector<std::string>{"lanes8", "lanes16", "lanes4", "lanes8+ulp"}));
  auto refused = ResolvePerturbation(ref, 5, 1, PerturbFamily::kOrder);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("'reference'"), std::string::npos)
      << refused.status().message();
  EXPECT_NE(refused.status().message().find("sequential"), std::string::npos);
  EXPECT_TRUE(CheckPerturbation(ref, PerturbFamily::kUlp).ok());
  EXPECT_FALSE(ParsePerturbFamily("bits").ok());
  EXPECT_EQ(*ParsePerturbFamily("order"), PerturbFamily::kOrder);
  // The profile's definition is recorded unchanged.
  const DataSplits data = SmallData();
  const ReplicaResult rr = Replica("mlp", "torch", 1, PerturbFamily::kOrder, 2, data);
  EXPECT_EQ(rr.train.record.profile_json, torch.json);
}

TEST_F(ReplicaTest, PredictionsMatchTheRecordedAccuracy) {
  const DataSplits data = SmallData();
  const ReplicaResult rr = Replica("mlp", "torch", 1, PerturbFamily::kUlp, 2, data);
  const auto& pred = rr.train.test_predictions;
  ASSERT_EQ(static_cast<int64_t>(pred.size()), data.test.size());
  int64_t correct = 0;
  for (size_t i = 0; i < pred.size(); ++i) {
    EXPECT_LT(pred[i], data.test.num_classes);
    correct += pred[i] == data.test.labels[i];
  }
  EXPECT_DOUBLE_EQ(static_cast<double>(correct) / data.test.size(), rr.train.record.test_acc);
  EXPECT_EQ(rr.train.diverged_step, -1);
}

TEST_F(ReplicaTest, NonFiniteLossIsRecordedWithItsStep) {
  const DataSplits data = SmallData();
  TrainOptions o = SmallOptions("mlp", 2);
  o.adam.lr = 1e38;  // the first update overflows the weights
  o.epochs = 2;
  auto rr = TrainReplica(Load("torch"), data, o, 1, PerturbFamily::kUlp);
  ASSERT_TRUE(rr.ok()) << rr.status().ToString();
  EXPECT_EQ(rr->train.record.status, "diverged");
  EXPECT_GE(rr->train.diverged_step, 2);
  EXPECT_EQ(rr->train.record.curves.size(), 1u) << "evaluated as it stood, once";
  EXPECT_EQ(static_cast<int64_t>(rr->train.test_predictions.size()), data.test.size());
}

TEST_F(ReplicaTest, DataSeedIsRecordedAndDefaultsToTheSeed) {
  TrainOptions o = SmallOptions("mlp", 2);
  auto j = nlohmann::json::parse(HparamsJson(o));
  EXPECT_EQ(j["data_seed"], 11);
  o.data_seed = 3;
  j = nlohmann::json::parse(HparamsJson(o));
  EXPECT_EQ(j["seed"], 11);
  EXPECT_EQ(j["data_seed"], 3);
}

}  // namespace
}  // namespace xw
