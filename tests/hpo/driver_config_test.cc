// Search driver: configuration, point -> training options, thread split,
// objectives on known predictions, and the rank-to-rank byte encodings.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "driver_internal.h"
#include "driver_run.h"
#include "xwires/hpo/search_driver.h"

namespace xw::hpo {
namespace {

using internal::HistoryEntry;

TEST(DriverConfigTest, DefaultIsTheFiveMinuteSearch) {
  const DriverConfig c = DefaultDriverConfig();
  ASSERT_EQ(c.search.space.size(), 4);
  EXPECT_EQ(c.search.space.dim(0).name, "lr");
  EXPECT_EQ(c.search.space.dim(0).low, 1e-8);
  EXPECT_EQ(c.search.space.dim(0).high, 0.1);
  EXPECT_TRUE(c.search.space.dim(0).log);
  EXPECT_EQ(c.search.space.dim(1).high, 5);  // epochs scaled from 50
  EXPECT_EQ(c.search.space.dim(3).high,
            400);  // batch_size: 10000 / 50000 of 2000 images
  EXPECT_TRUE(c.search.space.dim(3).log);
  EXPECT_EQ(c.search.arch, "simple_cnn");
  EXPECT_EQ(c.train.arch_options.width, 0.5);
  EXPECT_EQ(c.search.profiles[0], "torch");
  EXPECT_EQ(c.search.profiles[1], "tf");
  EXPECT_EQ(NumSearchSubspaces(c.search), 16);
}

TEST(DriverConfigTest, JsonRoundTripsAndEmptyDocumentIsTheDefault) {
  const DriverConfig d = DefaultDriverConfig();
  auto empty = ParseDriverConfigJson("{}");
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_EQ(DriverConfigToJson(*empty), DriverConfigToJson(d));
  DriverConfig c = d;
  c.train.seed = 7;
  c.train.adam.beta1 = 0.5;
  c.search.trials_per_subspace = 9;
  auto back = ParseDriverConfigJson(DriverConfigToJson(c));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(DriverConfigToJson(*back), DriverConfigToJson(c));
  EXPECT_EQ(back->train.seed, 7u);
  EXPECT_EQ(back->train.adam.beta1, 0.5);
  EXPECT_EQ(back->search.trials_per_subspace, 9);
  EXPECT_EQ(back->search.space, c.search.space);
}

TEST(DriverConfigTest, MissingKeysInsideObjectsKeepTheDefaults) {
  auto c = ParseDriverConfigJson(
      R"({"train": {"seed": 3}, "budget": {"max_trials": 5}, "data": "synthetic"})");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->train.seed, 3u);
  EXPECT_EQ(c->train.arch_options.width, 0.5);
  EXPECT_EQ(c->search.budget.max_trials, 5);
  EXPECT_EQ(c->search.budget.max_seconds, 200);
  EXPECT_EQ(c->search.train_limit, 2000);
}

TEST(DriverConfigTest, BadInputNamesTheKey) {
  struct Case {
    const char* doc;
    const char* needle;
  } cases[] = {
      {R"({"train": {"widht": 1}})", "train.widht"},
      {R"({"train": {"epochs": 1.5}})", "train.epochs"},
      {R"({"train": {"lr": -1}})", "lr"},
      {R"({"dimensions": [{"name": "momentum", "low": 0, "high": 1}]})",
       "momentum"},
      {R"({"dimensions": [{"name": "epochs", "low": 1, "high": 4}]})",
       "integer"},
      {R"({"dimensions": [{"name": "batch_size", "type": "integer", "low": 0, "high": 4}]})",
       "batch_size"},
      {R"({"bogus": 1})", "bogus"},
      {R"([1, 2])", "object"},
      {R"({"train": )", "syntax"},
  };
  for (const Case& k : cases) {
    auto c = ParseDriverConfigJson(k.doc);
    ASSERT_FALSE(c.ok()) << k.doc;
    EXPECT_EQ(c.status().code(), Status::Code::kInvalidArgument) << k.doc;
    EXPECT_NE(c.status().message().find(k.needle), std::string::npos)
        << k.doc << " -> " << c.status().message();
  }
}

TEST(DriverConfigTest, PointFillsSearchedHyperparameters) {
  auto c = ParseDriverConfigJson(R"({
      "dimensions": [{"name": "lr", "low": 1e-4, "high": 1, "log": true},
                     {"name": "batch_size", "type": "integer", "low": 10, "high": 100},
                     {"name": "beta2", "low": 0.9, "high": 0.99},
                     {"name": "width", "low": 0.25, "high": 1}],
      "train": {"epochs": 3, "adam_eps": 1e-3}})");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  TrainOptions o = internal::TrialTrainOptions(*c, {0.01, 37, 0.95, 0.5}, 3);
  EXPECT_EQ(o.adam.lr, 0.01);
  EXPECT_EQ(o.batch_size, 37);
  EXPECT_EQ(o.adam.beta2, 0.95);
  EXPECT_EQ(o.arch_options.width, 0.5);
  EXPECT_EQ(o.epochs, 3);       // fixed
  EXPECT_EQ(o.adam.eps, 1e-3);  // fixed
  EXPECT_EQ(o.threads, 3);
  EXPECT_EQ(o.train_limit, 2000);
  EXPECT_EQ(internal::PointText(c->search.space, {0.01, 37, 0.95, 0.5}),
            "lr=0.01 batch_size=37 beta2=0.95 width=0.5");
}

TEST(DriverConfigTest, SplitThreads) {
  EXPECT_EQ(internal::SplitThreads(2, 2), (std::vector<int>{1, 1}));
  EXPECT_EQ(internal::SplitThreads(7, 3), (std::vector<int>{3, 2, 2}));
  EXPECT_EQ(internal::SplitThreads(2, 4), (std::vector<int>{1, 1, 1, 1}));
  EXPECT_EQ(internal::SplitThreads(8, 1), (std::vector<int>{8}));
}

TEST(DriverObjectiveTest, KnownValues) {
  const std::vector<int32_t> labels = {0, 0, 1, 1, 2, 2, 2, 2};
  const std::vector<int32_t> a = {0, 0, 1, 0,
                                  2, 2, 2, 2};  // class acc 1, .5, 1
  const std::vector<int32_t> b = {0, 1, 1, 1,
                                  2, 0, 0, 2};  // class acc .5, 1, .5
  EXPECT_DOUBLE_EQ(internal::DisagreementRate(a, b), 4.0 / 8);
  EXPECT_DOUBLE_EQ(internal::MaxClassGap(a, b, labels, 3), 0.5);
  // A class absent from the test set does not count.
  EXPECT_DOUBLE_EQ(internal::MaxClassGap(a, b, labels, 5), 0.5);
  EXPECT_DOUBLE_EQ(internal::DisagreementRate(a, a), 0.0);
  EXPECT_TRUE(std::isnan(internal::DisagreementRate(a, {1})));
}

TEST(DriverWireTest, HistoryRoundTrip) {
  std::vector<HistoryEntry> h(3);
  h[0] = {5, 2, {1e-3, 17}, "done", 0.25, 4};
  h[1] = {6, 0, {0.5, 1}, "failed", 0, 0};
  h[2] = {9, 3, {}, "pending", 0, 0};
  auto back = internal::DecodeHistory(internal::EncodeHistory(h));
  ASSERT_TRUE(back.ok());
  ASSERT_EQ(back->size(), 3u);
  EXPECT_EQ((*back)[0].x, h[0].x);
  EXPECT_EQ((*back)[0].objective, 0.25);
  EXPECT_EQ((*back)[0].pending_ref, 4);
  EXPECT_EQ((*back)[2].status, "pending");
  std::string cut = internal::EncodeHistory(h);
  cut.pop_back();
  EXPECT_EQ(internal::DecodeHistory(cut).status().code(),
            Status::Code::kCorruption);
}

TEST(DriverWireTest, TrialRecordRoundTrip) {
  TrialRecord t;
  t.arch = "mlp";
  t.hparams_json = R"({"lr": 0.1})";
  t.lr = 0.1;
  t.batch_size = 7;
  t.search_id = 3;
  t.divergence = 0.125;
  ModelRecord m;
  m.profile = "torch";
  m.test_acc = 0.5;
  m.train_loss = std::nan("");
  m.curves.push_back({1, 2.0, 1.5, 0.3, 2.1, 0.5});
  Tensor w({2, 3});
  for (int i = 0; i < 6; ++i) w[i] = 0.5f * i;
  m.weights.push_back({"fc.weight", w, false});
  m.weights.push_back({"bn.num_batches_tracked", Tensor({}, 4.0f), true});
  t.models = {m, m};
  t.models[1].profile = "tf";
  auto back = internal::DecodeTrialRecord(internal::EncodeTrialRecord(t));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->arch, "mlp");
  EXPECT_EQ(back->search_id, 3);
  EXPECT_EQ(back->batch_size, 7);
  EXPECT_EQ(back->divergence, 0.125);
  ASSERT_EQ(back->models.size(), 2u);
  EXPECT_EQ(back->models[1].profile, "tf");
  EXPECT_TRUE(std::isnan(back->models[0].train_loss));
  ASSERT_EQ(back->models[0].curves.size(), 1u);
  EXPECT_EQ(back->models[0].curves[0].test_loss, 2.1);
  ASSERT_EQ(back->models[0].weights.size(), 2u);
  EXPECT_EQ(back->models[0].weights[0].value.shape(), (Shape{2, 3}));
  EXPECT_EQ(back->models[0].weights[0].value[5], 2.5f);
  EXPECT_TRUE(back->models[0].weights[1].is_int64);
  EXPECT_EQ(WeightsSha256(back->models[0].weights), WeightsSha256(m.weights));
  std::string bytes = internal::EncodeTrialRecord(t);
  EXPECT_FALSE(
      internal::DecodeTrialRecord(bytes.substr(0, bytes.size() / 2)).ok());
  EXPECT_FALSE(internal::DecodeTrialRecord(bytes + "x").ok());
}

// The seed's presence travels with it: no seed (imported trials) stays
// absent, and seed 0 stays a real seed 0.
TEST(DriverWireTest, TrialRecordSeedPresence) {
  TrialRecord t;
  t.arch = "mlp";
  t.models.resize(1);
  t.models[0].profile = "torch";
  for (std::optional<int64_t> seed :
       {std::optional<int64_t>(), std::optional<int64_t>(0),
        std::optional<int64_t>(42), std::optional<int64_t>(-5)}) {
    t.seed = seed;
    const std::string bytes = internal::EncodeTrialRecord(t);
    auto back = internal::DecodeTrialRecord(bytes);
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(back->seed, seed) << seed.value_or(-1);
    EXPECT_FALSE(
        internal::DecodeTrialRecord(bytes.substr(0, bytes.size() - 1)).ok());
  }
}

TEST(DriverHistoryTest, EntryOfRow) {
  const std::string extra =
      internal::SearchExtraJson(3, {0.001, 20}, 12, "abs_acc_diff");
  auto done = internal::EntryOfRow(40, "ok", extra, 0.3);
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(done->status, "done");
  EXPECT_EQ(done->subspace, 3);
  EXPECT_EQ(done->x, (std::vector<double>{0.001, 20}));
  EXPECT_EQ(done->pending_ref, 12);
  EXPECT_EQ(done->objective, 0.3);
  auto diverged = internal::EntryOfRow(41, "diverged", extra, 0.0);
  EXPECT_EQ(diverged->status, "done");
  auto pending = internal::EntryOfRow(42, "pending", extra, std::nan(""));
  EXPECT_EQ(pending->status, "pending");
  nlohmann::json failed = nlohmann::json::parse(extra);
  failed["error"] = "boom";
  EXPECT_EQ(
      internal::EntryOfRow(43, "failed", failed.dump(), std::nan(""))->status,
      "failed");
  EXPECT_FALSE(internal::EntryOfRow(44, "ok", "{}", 0.1).ok());
}

}  // namespace
}  // namespace xw::hpo
