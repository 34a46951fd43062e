// Three-tier comparison: difference statistics on known values, identical
// pairs (same knobs under another name), a torch/tf pair that parts at the
// first layer, per-module capture, bad input.
#include "xwires/api/compare.h"

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "analysis_test_util.h"
#include "xwires/dataset/store/crossedwires.h"
#include "xwires/trainers/architectures.h"
#include "xwires/trainers/capture.h"

namespace xw {
namespace {

using testing::Edited;
using testing::Shipped;
using testing::TempDir;
using testing::TinyRun;

TEST(CompareDiffTest, KnownValues) {
  const float a[] = {1, 2, 3}, b[] = {1, 2, 4};
  const DiffStats s = Diff(a, b, 3, 1e-5, 1e-8);
  EXPECT_EQ(s.max_abs, 1.0);
  EXPECT_EQ(s.max_rel, 0.25);                           // |3-4| / 4
  EXPECT_NEAR(s.rel_l2, 1.0 / std::sqrt(21.0), 1e-15);  // ||a-b|| / ||b||
  EXPECT_NEAR(s.cosine, 17.0 / std::sqrt(14.0 * 21.0), 1e-15);
  EXPECT_EQ(s.not_close, 1);
  EXPECT_FALSE(s.identical);
  EXPECT_FALSE(s.close());

  const DiffStats same = Diff(a, a, 3, 0, 0);
  EXPECT_TRUE(same.identical);
  EXPECT_TRUE(same.close());
  EXPECT_EQ(same.max_abs, 0.0);
  EXPECT_NEAR(same.cosine, 1.0, 1e-15);
}

TEST(CompareDiffTest, IscloseUsesBAsReferenceAndNanIsNeverClose) {
  // |a-b| = 0.1 <= atol + rtol*|b| with rtol 0.105: 0.105*1 passes,
  // 0.105*0.9 does not.
  const float one[] = {1.0f}, nine[] = {0.9f};
  EXPECT_TRUE(Diff(nine, one, 1, 0.105, 0).close());
  EXPECT_FALSE(Diff(one, nine, 1, 0.105, 0).close());
  const float nan[] = {NAN}, zero[] = {0};
  const DiffStats s = Diff(nan, zero, 1, 1, 1);
  EXPECT_FALSE(s.close());
  EXPECT_TRUE(std::isinf(s.max_abs));
  // The same NaN bits on both sides are identical (and so close).
  EXPECT_TRUE(Diff(nan, nan, 1, 0, 0).identical);
  EXPECT_TRUE(Diff(nan, nan, 1, 0, 0).close());
}

TEST(CaptureTest, LastModuleIsTheLogitsAndPathsFollowStateDict) {
  InputSpec in;
  auto model = BuildModel("simple_cnn", in, ArchOptions{0.25, 0, 0.5});
  ASSERT_TRUE(model.ok());
  const Profile torch = Shipped("torch");
  ASSERT_TRUE((*model)->Initialize(torch, 3).ok());
  const DataSplits data = testing::TinyData(TinyRun{.train = 1, .test = 4});
  auto acts = ForwardCapture(**model, torch, data.test.images);
  ASSERT_TRUE(acts.ok()) << acts.status().ToString();
  ASSERT_GE(acts->size(), 8u);
  EXPECT_EQ(acts->front().path, "conv1");
  EXPECT_EQ(acts->front().type, "Conv2d");
  EXPECT_EQ((*acts)[1].path, "bn1");
  EXPECT_EQ((*acts)[2].path, "(2)");  // torchvision-style functional relu
  EXPECT_EQ(acts->back().path, "fc2");
  auto logits =
      (*model)->Forward(data.test.images, RunContext::ForProfile(torch));
  ASSERT_TRUE(logits.ok());
  EXPECT_TRUE(acts->back().value.BitwiseEqual(**logits));
  // A mis-shaped batch is refused with the expected shape in the message.
  Tensor bad({2, 1, 32, 32});
  auto r = ForwardCapture(**model, torch, bad);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("[N>=1, 3, 32, 32]"), std::string::npos);
}

class ComparePairTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto ds = Dataset::Open(dir_.path() + "/ds", OpenMode::kCreate);
    ASSERT_TRUE(ds.ok()) << ds.status().ToString();
    ds_ = std::move(ds).value();
  }
  TempDir dir_;
  std::unique_ptr<Dataset> ds_;
};

TEST_F(ComparePairTest, SameKnobsUnderAnotherNameAreIdenticalOnEveryTier) {
  const int64_t id = testing::TrainAndStore(
      *ds_, {Shipped("torch"), Edited("torch", "torch_copy", {})}, TinyRun{});
  auto r = ComparePair(*ds_, id, CompareOptions{});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->profile_a, "torch");
  EXPECT_EQ(r->profile_b, "torch_copy");
  EXPECT_EQ(r->tier1.verdict, "identical");
  EXPECT_EQ(r->tier2.verdict, "identical");
  EXPECT_EQ(r->tier3.verdict, "identical");
  EXPECT_EQ(r->first_differing, "");
  EXPECT_EQ(r->parted_at, "");
  EXPECT_EQ(r->task.agreement, 1.0);
}

TEST_F(ComparePairTest, TorchVsTfPartsAtTheFirstLayerAndTaskMetricsAddUp) {
  const int64_t id = testing::TrainAndStore(
      *ds_, {Shipped("torch"), Shipped("tf")}, TinyRun{});
  CompareOptions opt;
  opt.probe = 8;
  auto r = ComparePair(*ds_, id, opt);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  // Different init schemes and random streams: nothing agrees from the start.
  EXPECT_EQ(r->tier1.verdict, "differ");
  EXPECT_EQ(r->tier2.verdict, "differ");
  EXPECT_EQ(r->parted_at, "conv1");
  EXPECT_EQ(r->first_differing, "conv1");
  EXPECT_EQ(r->probe, 8);
  EXPECT_EQ(r->layers.front().shape_a,
            (Shape{8, 8, 32, 32}));  // 32 * 0.25 channels
  // Batch counters are buffers, equal in both runs.
  bool saw_counter = false;
  for (const TensorDiff& t : r->tensors) {
    if (t.name == "bn1.num_batches_tracked") {
      saw_counter = true;
      EXPECT_TRUE(t.buffer);
      EXPECT_TRUE(t.stats.identical);
    }
  }
  EXPECT_TRUE(saw_counter);
  // Tier 3 recomputes exactly the stored accuracies (same build, same data).
  const TaskDiff& t = r->task;
  EXPECT_EQ(t.n, 100);
  EXPECT_EQ(t.acc_a, t.stored_acc_a);
  EXPECT_EQ(t.acc_b, t.stored_acc_b);
  int64_t total = 0, diag = 0;
  for (int i = 0; i < t.classes; ++i) {
    for (int j = 0; j < t.classes; ++j)
      total += t.confusion_a[i * t.classes + j];
    diag += t.confusion_a[i * t.classes + i];
  }
  EXPECT_EQ(total, 100);
  EXPECT_NEAR(static_cast<double>(diag) / 100, t.acc_a, 1e-12);
  EXPECT_LE(t.agreement, 1.0);
  // The verdict follows the accuracy tolerance.
  opt.acc_tol = 1.0;
  EXPECT_EQ(ComparePair(*ds_, id, opt)->tier3.verdict,
            t.agreement == 1 ? "identical" : "close");
  // JSON carries every tier.
  const auto j = nlohmann::json::parse(CompareJson(*r));
  EXPECT_EQ(j["tier2"]["parted_at"], "conv1");
  EXPECT_EQ(j["tier3"]["confusion_a"].size(), 10u);
  EXPECT_NE(CompareText(*r).find("<- parted"), std::string::npos);
}

TEST_F(ComparePairTest, BadInputNamesTheProblem) {
  const int64_t id = testing::TrainAndStore(
      *ds_, {Shipped("torch"), Shipped("tf")}, TinyRun{});
  CompareOptions opt;
  opt.probe = 0;
  auto r = ComparePair(*ds_, id, opt);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("--probe"), std::string::npos);
  r = ComparePair(*ds_, id + 100, CompareOptions{});
  EXPECT_EQ(r.status().code(), Status::Code::kNotFound);
  opt = CompareOptions{};
  opt.profile_b = "keras";
  r = ComparePair(*ds_, id, opt);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("'keras'"), std::string::npos);
  // Imported results have no weights or profile definitions.
  auto rep = ImportCrossedWires(
      *ds_,
      std::string(XWIRES_SOURCE_DIR) +
          "/tests/api/fixtures/crossedwires_vgg16_head40.csv",
      "vgg16");
  ASSERT_TRUE(rep.ok()) << rep.status().ToString();
  r = ComparePair(*ds_, id + 1, CompareOptions{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("external"), std::string::npos);
}

}  // namespace
}  // namespace xw
