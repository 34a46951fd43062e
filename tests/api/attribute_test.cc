// Divergence attribution: knob enumeration and switching, and on a tiny
// pair whose divergence comes from one knob (Keras's epsilon-hat Adam with a
// large epsilon) mixed with knobs that barely matter, `attribute` must name
// that knob, and flipping it alone in a new run must reproduce the
// divergence.
#include "xwires/api/attribute.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "analysis_test_util.h"
#include "api/attribute_internal.h"
#include "xwires/dataset/store/analysis.h"

namespace xw {
namespace {

using testing::Edited;
using testing::Shipped;
using testing::TempDir;
using testing::TinyRun;

TEST(AttributeKnobTest, DifferingKnobsOfTorchAndTf) {
  const std::vector<Knob> knobs =
      DifferingKnobs(Shipped("torch"), Shipped("tf"));
  std::vector<std::string> paths;
  for (const Knob& k : knobs) paths.push_back(k.path);
  EXPECT_NE(std::find(paths.begin(), paths.end(), "adam.variant"), paths.end());
  EXPECT_NE(std::find(paths.begin(), paths.end(), "init"), paths.end());
  EXPECT_NE(std::find(paths.begin(), paths.end(), "rng_stream"), paths.end());
  EXPECT_EQ(std::find(paths.begin(), paths.end(), "name"), paths.end());
  // Printed for tf at their defaults too, so they are ablatable knobs.
  EXPECT_NE(std::find(paths.begin(), paths.end(), "batch_norm.accumulate"), paths.end());
  EXPECT_NE(std::find(paths.begin(), paths.end(), "batch_norm.fma"), paths.end());
  for (const Knob& k : knobs) {
    if (k.path == "adam.variant") {
      EXPECT_EQ(k.a_value, "\"torch\"");
      EXPECT_EQ(k.b_value, "\"keras\"");
    }
  }
  EXPECT_TRUE(
      DifferingKnobs(Shipped("torch"), Edited("torch", "copy", {})).empty());
}

TEST(AttributeKnobTest, SwitchKnobChangesOnlyThatKnob) {
  const Profile torch = Shipped("torch");
  auto p = SwitchKnob(torch, "adam.variant", "\"keras\"");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->name, "torch+adam.variant");
  EXPECT_EQ(p->adam.variant, AdamVariant::kKeras);
  const std::vector<Knob> diff = DifferingKnobs(torch, *p);
  ASSERT_EQ(diff.size(), 1u);
  EXPECT_EQ(diff[0].path, "adam.variant");
  auto acc = SwitchKnob(torch, "batch_norm.accumulate", "\"float\"");
  ASSERT_TRUE(acc.ok()) << acc.status().ToString();
  EXPECT_EQ(acc->bn.accumulate, BatchNormAccumulate::kFloat);
  EXPECT_TRUE(acc->bn.fma);
  auto bad = SwitchKnob(torch, "adam.nesterov", "true");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("adam.nesterov"), std::string::npos);
  bad = SwitchKnob(torch, "adam.variant", "\"sgd\"");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("adam.variant"), std::string::npos);
  EXPECT_FALSE(SwitchKnob(torch, "adam", "{}").ok());  // not a leaf
}

// lr 0.01 with epsilon 0.1: torch's Adam moves like SGD with step ~0.1 while
// Keras's epsilon-hat (epsilon not bias-corrected) takes steps up to ten
// times smaller early on, so the Keras model is far behind after 2 epochs.
TinyRun EpsHatRun() {
  TinyRun r;
  r.arch = "mlp";
  r.width = 0.25;
  r.train = 2000;
  r.test = 300;
  r.epochs = 2;
  r.batch = 32;
  r.lr = 0.01;
  r.eps = 0.1;
  return r;
}

TEST(AttributeTest, NamesTheKnobAndFlippingItAloneReproducesTheDivergence) {
  TempDir dir;
  auto ds = Dataset::Open(dir.path() + "/ds", OpenMode::kCreate);
  ASSERT_TRUE(ds.ok());
  const Profile a = Shipped("torch");
  const Profile b = Edited("torch", "torch_mixed",
                           {{"/adam/variant", "\"keras\""},
                            {"/kernels/reduce", "\"pairwise\""},
                            {"/batch_norm/eps", "0.001"},
                            {"/loss/clip_eps", "1e-6"}});
  const int64_t id = testing::TrainAndStore(**ds, {a, b}, EpsHatRun());
  auto trial = (*ds)->GetTrial(id);
  ASSERT_TRUE(trial.ok());
  ASSERT_GT(trial->divergence, 0.05) << "the tiny configuration must diverge";

  AttributeOptions opt;
  opt.jobs = 2;
  opt.threads = 1;
  int reported = 0;
  opt.on_run = [&](int done, int total, const std::string&) {
    ++reported;
    EXPECT_EQ(total, 10);  // 2 baselines + 2 x 4 knobs
    EXPECT_EQ(done, reported);
  };
  auto r = AttributeDivergence(**ds, id, opt);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(reported, 10);
  EXPECT_TRUE(r->reproduced_a);
  EXPECT_TRUE(r->reproduced_b);
  EXPECT_EQ(r->divergence, trial->divergence);
  ASSERT_EQ(r->knobs.size(), 4u);
  ASSERT_EQ(r->main_knobs, std::vector<std::string>{"adam.variant"})
      << AttributionText(*r);
  const KnobEffect& top = r->knobs.front();
  EXPECT_EQ(top.knob.path, "adam.variant");
  EXPECT_GT(top.share, 0.7);
  for (size_t i = 1; i < r->knobs.size(); ++i)
    EXPECT_LT(r->knobs[i].share, 0.3);

  // Flip adam.variant alone in a new run: the divergence comes back.
  const Profile flipped =
      Edited("torch", "torch_keras_adam", {{"/adam/variant", "\"keras\""}});
  const int64_t again = testing::TrainAndStore(**ds, {a, flipped}, EpsHatRun());
  const double d = (*ds)->GetTrial(again)->divergence;
  EXPECT_NEAR(d, r->divergence, 0.3 * r->divergence);

  // Stored and read back with its runs.
  AnalysisRecord row;
  row.trial_ids = {id};
  row.kind = "attribute";
  row.summary = r->summary;
  row.result_json = AttributionJson(*r);
  for (const AttributionRun& u : r->runs) {
    row.runs.push_back({u.knob, u.direction, u.profile, u.value_json, u.status,
                        u.test_acc, u.test_loss, u.weights_sha256});
  }
  ASSERT_TRUE(StoreAnalysis(**ds, row).ok());
  auto stored = LoadAnalyses(**ds, id, "attribute");
  ASSERT_TRUE(stored.ok());
  ASSERT_EQ(stored->size(), 1u);
  EXPECT_EQ((*stored)[0].runs.size(), 10u);
  EXPECT_EQ((*stored)[0].runs[0].direction, "baseline");
  EXPECT_EQ(nlohmann::json::parse((*stored)[0].result_json)["main_knobs"][0],
            "adam.variant");
}

TEST(AttributeNoiseTest, KnobEffectsAgainstTheReplicaNoiseFloor) {
  // sigma 0.02 over 4 + 4 replicas (df 6): T = t(0.975, 6) sqrt(2) 0.02 =
  // 0.06920911844985238 (scipy.stats.t.ppf(0.975, 6) * sqrt(2) * 0.02;
  // Boost.Math's quantile agrees with scipy's to about 1e-9 relative).
  EXPECT_NEAR(NoiseThreshold(0.02, 6), 0.06920911844985238, 1e-10);
  EXPECT_TRUE(std::isnan(NoiseThreshold(0.02, 0)));
  EXPECT_TRUE(std::isnan(NoiseThreshold(NAN, 6)));
  AttributionReport r;
  r.profile_a = "torch";
  r.profile_b = "tf";
  r.runs.resize(2);
  r.runs[0].test_acc = 0.50;  // baselines: divergence 0.2
  r.runs[1].test_acc = 0.30;
  auto knob = [](const char* path, double acc_a_k, double acc_b_k) {
    KnobEffect e;
    e.knob = {path, "1", "2"};
    e.acc_a_switched = acc_a_k;
    e.acc_b_switched = acc_b_k;
    return e;
  };
  r.knobs = {knob("both", 0.35, 0.45),      // 0.15 and 0.15
             knob("alone", 0.40, 0.33),     // 0.10 and 0.03
             knob("remains", 0.48, 0.40),   // 0.02 and 0.10
             knob("no", 0.47, 0.32)};       // 0.03 and 0.02
  AttributionReport without = r;
  SummarizeAttribution(&without);
  for (const KnobEffect& e : without.knobs) EXPECT_EQ(e.beyond_noise, "-");
  EXPECT_NE(without.summary.find("no replicas of this pair"), std::string::npos);
  r.noise_sd = 0.02;
  r.noise_df = 6;
  r.noise_family = "ulp";
  r.noise_threshold = NoiseThreshold(0.02, 6);
  SummarizeAttribution(&r);
  ASSERT_EQ(r.knobs.size(), 4u);
  for (const KnobEffect& e : r.knobs) EXPECT_EQ(e.beyond_noise, e.knob.path) << e.knob.path;
  EXPECT_NE(r.summary.find("3 of 4 knob(s) beyond the noise floor"), std::string::npos)
      << r.summary;
  // The stored JSON keeps the verdicts, and the report's table shows them.
  const Table t = AttributionKnobTableFromJson(AttributionJson(r)).value();
  EXPECT_EQ(t.columns.back(), "beyond noise");
  ASSERT_EQ(t.rows.size(), 4u);
  EXPECT_EQ(std::get<std::string>(t.rows[0].back()), r.knobs[0].beyond_noise);
}

TEST(AttributeTest, BadInputNamesTheProblem) {
  TempDir dir;
  auto ds = Dataset::Open(dir.path() + "/ds", OpenMode::kCreate);
  ASSERT_TRUE(ds.ok());
  TinyRun run;
  run.arch = "mlp";
  run.train = 50;
  run.test = 20;
  const int64_t same = testing::TrainAndStore(
      **ds, {Shipped("torch"), Edited("torch", "copy", {})}, run);
  auto r = AttributeDivergence(**ds, same, AttributeOptions{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("same knobs"), std::string::npos);

  const int64_t pair =
      testing::TrainAndStore(**ds, {Shipped("torch"), Shipped("tf")}, run);
  AttributeOptions opt;
  opt.knobs = {"adam.nesterov"};
  r = AttributeDivergence(**ds, pair, opt);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(r.status().message().find("adam.nesterov"), std::string::npos);
  EXPECT_NE(r.status().message().find("adam.variant"),
            std::string::npos);  // the real ones
  opt.knobs.clear();
  opt.jobs = -1;
  EXPECT_FALSE(AttributeDivergence(**ds, pair, opt).ok());
}

}  // namespace
}  // namespace xw
