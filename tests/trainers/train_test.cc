// The training loop: determinism across thread counts, batch handling, test
// accuracy over the whole set, divergence as a result, shared starting
// weights, and errors that name the problem.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "xwires/core/data.h"
#include "xwires/trainers/architectures.h"
#include "xwires/trainers/profile.h"
#include "xwires/trainers/trainer.h"

namespace xw {
namespace {

DataSplits SmallData(int64_t train, int64_t test) {
  SyntheticOptions so;
  so.train_size = train;
  so.test_size = test;
  so.seed = 5;
  return MakeSynthetic(so);
}

Profile Load(const std::string& name) {
  auto p = LoadProfile(name);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return p.ok() ? *p : Profile{};
}

TrainOptions Tiny(const std::string& arch) {
  TrainOptions o;
  o.arch = arch;
  o.arch_options.width = 0.125;
  o.epochs = 1;
  o.batch_size = 16;
  o.adam.lr = 0.01;
  o.seed = 3;
  return o;
}

TEST(TrainTest, SameSeedAndProfileGiveIdenticalWeightsOnOneAndTwoThreads) {
  const DataSplits data = SmallData(48, 20);
  for (const char* profile : {"torch", "tf"}) {
    for (const std::string arch : {"simple_cnn", "resnet20"}) {
      TrainOptions o = Tiny(arch);
      if (arch == "resnet20") o.arch_options = ArchOptions{0.25, 8};
      o.threads = 1;
      auto one = TrainProfile(Load(profile), data, o);
      o.threads = 2;
      auto two = TrainProfile(Load(profile), data, o);
      ASSERT_TRUE(one.ok() && two.ok()) << one.status().ToString() << two.status().ToString();
      EXPECT_EQ(one->record.weights_sha256, two->record.weights_sha256) << profile << " " << arch;
      EXPECT_EQ(one->record.test_acc, two->record.test_acc);
      EXPECT_EQ(one->record.weights_sha256.size(), 64u);
    }
  }
}

TEST(TrainTest, UserProfileWithShuffleIsDeterministicAndChangesTheOrder) {
  const DataSplits data = SmallData(40, 10);
  std::string json = Load("torch").json;
  const auto name = json.find("\"name\": \"torch\"");
  const auto shuffle = json.find("\"shuffle\": false");
  ASSERT_NE(name, std::string::npos);
  ASSERT_NE(shuffle, std::string::npos);
  json.replace(shuffle, 16, "\"shuffle\": true");
  json.replace(name, 15, "\"name\": \"torch_shuffled\"");
  auto shuffled = ParseProfileJson(json);
  ASSERT_TRUE(shuffled.ok()) << shuffled.status().ToString();
  EXPECT_TRUE(shuffled->shuffle);
  TrainOptions o = Tiny("mlp");
  o.epochs = 2;
  o.batch_size = 8;
  o.threads = 1;
  auto one = TrainProfile(*shuffled, data, o);
  o.threads = 2;
  auto two = TrainProfile(*shuffled, data, o);
  auto plain = TrainProfile(Load("torch"), data, o);
  ASSERT_TRUE(one.ok() && two.ok() && plain.ok()) << one.status().ToString();
  EXPECT_EQ(one->record.profile, "torch_shuffled");
  EXPECT_EQ(one->record.weights_sha256, two->record.weights_sha256);
  // Same init stream and arithmetic; only the batch order differs.
  EXPECT_NE(one->record.weights_sha256, plain->record.weights_sha256);
}

TEST(TrainTest, ProfilesDivergeFromTheSameStart) {
  const DataSplits data = SmallData(32, 10);
  auto torch = TrainProfile(Load("torch"), data, Tiny("simple_cnn"));
  auto tf = TrainProfile(Load("tf"), data, Tiny("simple_cnn"));
  ASSERT_TRUE(torch.ok() && tf.ok());
  EXPECT_NE(torch->record.weights_sha256, tf->record.weights_sha256);
}

TEST(TrainTest, AnyBatchSizeKeepsThePartialBatch) {
  const DataSplits data = SmallData(10, 7);
  const Profile p = Load("reference");
  struct { int64_t batch, steps_per_epoch; } cases[] = {{1, 10}, {3, 4}, {10, 1}, {64, 1}};
  for (const auto& c : cases) {
    TrainOptions o = Tiny("mlp");
    o.epochs = 2;
    o.batch_size = c.batch;
    auto r = TrainProfile(p, data, o);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->steps, 2 * c.steps_per_epoch) << "batch " << c.batch;
    ASSERT_EQ(r->record.curves.size(), 2u);
    for (const auto& e : r->record.curves) {
      // correct / total over all 7 test images: a multiple of 1/7.
      const double k = e.test_acc * 7;
      EXPECT_NEAR(k, std::round(k), 1e-9);
      EXPECT_TRUE(std::isfinite(e.train_loss_mean) && std::isfinite(e.train_loss_last));
    }
  }
}

TEST(TrainTest, TestAccuracyIsCorrectOverTotal) {
  const DataSplits data = SmallData(20, 13);
  const Profile p = Load("torch");
  auto model = BuildModel("mlp", InputSpec{}, ArchOptions{0.125});
  ASSERT_TRUE(model.ok());
  ASSERT_TRUE((*model)->Initialize(p, 1).ok());
  auto whole = Evaluate(**model, p, data.test, 256);
  auto batched = Evaluate(**model, p, data.test, 4);  // 4+4+4+1
  ASSERT_TRUE(whole.ok() && batched.ok());
  EXPECT_EQ(whole->total, 13);
  EXPECT_EQ(whole->correct, batched->correct);
  EXPECT_DOUBLE_EQ(whole->accuracy, whole->correct / 13.0);
  auto logits = Predict(**model, p, data.test.images, 5);
  ASSERT_TRUE(logits.ok());
  int64_t correct = 0;
  for (int64_t i = 0; i < 13; ++i) correct += ArgMax(logits->data() + i * 10, 10) == data.test.labels[i];
  EXPECT_EQ(correct, whole->correct);
}

TEST(TrainTest, NonFiniteLossStopsTheRunAndMarksItDiverged) {
  const DataSplits data = SmallData(16, 10);
  TrainOptions o = Tiny("mlp");
  o.epochs = 3;
  o.batch_size = 8;
  o.adam.lr = 1e30;  // first step pushes weights to ~1e30: logits overflow
  auto r = TrainProfile(Load("torch"), data, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->record.status, "diverged");
  EXPECT_EQ(r->diverged_step, 2);
  EXPECT_EQ(r->steps, 1);
  ASSERT_EQ(r->record.curves.size(), 1u);  // stopped inside epoch 1
  EXPECT_FALSE(std::isfinite(r->record.curves[0].train_loss_last));
  // Accuracy measured as the model stands.
  EXPECT_GE(r->record.test_acc, 0.0);
  EXPECT_LE(r->record.test_acc, 1.0);
}

TEST(TrainTest, ShouldStopEndsTheRunBetweenBatchesAsCancelled) {
  const DataSplits data = SmallData(48, 10);
  TrainOptions o = Tiny("mlp");
  o.epochs = 2;
  int polls = 0, batches = 0;
  o.should_stop = [&] { return ++polls == 4; };
  o.on_progress = [&](const TrainProgress& p) { batches += !p.epoch_end; };
  auto r = TrainProfile(Load("torch"), data, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kCancelled) << r.status().ToString();
  // Polled before each of the 3 batches of epoch 1 and before its test pass.
  EXPECT_EQ(batches, 3);
  EXPECT_EQ(polls, 4);
  // Later polls never return true again: a trial then trains both profiles.
  auto trial = TrainTrial({Load("torch"), Load("tf")}, data, o);
  ASSERT_TRUE(trial.ok()) << trial.status().ToString();
  EXPECT_EQ(trial->models.size(), 2u);
}

TEST(TrainTest, InitWeightsStartEveryProfileFromTheSameParameters) {
  const DataSplits data = SmallData(16, 10);
  auto model = BuildModel("simple_cnn", InputSpec{}, ArchOptions{0.125});
  ASSERT_TRUE(model.ok());
  ASSERT_TRUE((*model)->Initialize(Load("torch"), 9).ok());
  const NamedTensors init = (*model)->ExportState();
  TrainOptions o = Tiny("simple_cnn");
  o.adam.lr = 0.0;  // parameters stay where they started
  o.init_weights = &init;
  o.init_weights_source = "init.h5";
  auto trial = TrainTrial({Load("torch"), Load("tf")}, data, o);
  ASSERT_TRUE(trial.ok()) << trial.status().ToString();
  ASSERT_EQ(trial->models.size(), 2u);
  for (const ModelRecord& m : trial->models) {
    ASSERT_EQ(m.weights.size(), init.size());
    for (size_t i = 0; i < init.size(); ++i) {
      if (init[i].name.find("running") != std::string::npos ||
          init[i].name.find("num_batches") != std::string::npos) {
        continue;  // buffers move even at lr 0
      }
      EXPECT_TRUE(m.weights[i].value.BitwiseEqual(init[i].value)) << m.profile << " " << init[i].name;
    }
  }
  EXPECT_DOUBLE_EQ(trial->divergence,
                   std::fabs(trial->models[0].test_acc - trial->models[1].test_acc));
  EXPECT_NE(trial->hparams_json.find("\"init_weights\":\"init.h5\""), std::string::npos);
}

TEST(TrainTest, BadInputsAreNamed) {
  const DataSplits data = SmallData(8, 4);
  const Profile p = Load("torch");
  TrainOptions o = Tiny("mlp");
  o.epochs = 0;
  auto r = TrainProfile(p, data, o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("epochs"), std::string::npos);
  o = Tiny("mlp");
  o.batch_size = 0;
  EXPECT_NE(TrainProfile(p, data, o).status().message().find("batch_size"), std::string::npos);
  // Weights of another architecture.
  auto other = BuildModel("mlp", InputSpec{}, ArchOptions{0.25});
  ASSERT_TRUE(other.ok());
  const NamedTensors wrong = (*other)->ExportState();
  o = Tiny("mlp");
  o.init_weights = &wrong;
  o.init_weights_source = "other.h5";
  auto mismatch = TrainProfile(p, data, o);
  ASSERT_FALSE(mismatch.ok());
  EXPECT_NE(mismatch.status().message().find("other.h5: tensor 'fc1.weight' has shape"),
            std::string::npos)
      << mismatch.status().message();
  // vgg needs 32x32 images.
  DataSplits small = data;
  small.train.images = Tensor({8, 3, 8, 8});
  small.test.images = Tensor({4, 3, 8, 8});
  EXPECT_FALSE(TrainProfile(p, small, Tiny("vgg11")).ok());
}

}  // namespace
}  // namespace xw
