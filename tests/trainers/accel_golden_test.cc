// Golden bits of the shipped accelerator profiles: two Adam steps (32
// random 3x8x8 images, batch 16, seed 11; small, since the emulated products
// are scalar code) whose weights_sha256 is a literal
// here. The accelerator products are plain scalar code and the rest runs
// on the owned fixed-order kernels (the tf family's gemm "owned"), so every
// SIMD target and thread count must reproduce them (every_target false
// would check a profile on the best target only, for a user's ISA-dependent
// gemm "eigen"). Also: an accelerator profile that changes only
// convolutions gives its base profile's bits on an MLP, and loss scaling's
// skipped steps do not advance Adam.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "xwires/core/data.h"
#include "xwires/core/rng.h"
#include "xwires/core/simd_target.h"
#include "xwires/trainers/profile.h"
#include "xwires/trainers/trainer.h"

namespace xw {
namespace {

struct AccelGolden {
  const char* arch;
  const char* profile;
  double width;
  bool every_target;
  const char* sha256;
};

const AccelGolden kCases[] = {
    {"simple_cnn", "torch-a100", 0.5, true,
     "0ac564f0a7bff3b0de8d9d8e25a1b277d82cd718b98ebc31ce2904c38cff9427"},
    {"simple_cnn", "tf-a100", 0.5, true,
     "e54ec34b1fb458ce09a63fe966248ed7a1cda847e0874519c1112e0a083119e0"},
    {"simple_cnn", "torch-h100", 0.5, true,
     "0bf96a03803cd3daeb56994e1ab12d035290fc6af3a135f62d1e70669b8d562d"},
    {"simple_cnn", "torch-amp-fp16", 0.5, true,
     "115bb1bc58a0d0dac03e775f38031bf64b59ace57be42a6d2d7be7fa327335e6"},
    {"simple_cnn", "torch-bf16", 0.5, true,
     "3a2b53279c93acedf31077acd6eb7b6f0aba812760003a3fa03e64c8f71f60db"},
    {"simple_cnn", "tf-mixed-fp16", 0.5, true,
     "1980be067a22e1bf7788b7c8af35cdd3aea2852c0cb5f978681dc044b91ecc19"},
    {"simple_cnn", "tpu-bf16", 0.5, true,
     "15c064909f4127d8abd5a40bdf24b060db73a4139f365e25b47e68746b119af1"},
    {"mlp", "tf-a100", 0.5, true,
     "b39d8f83b19da8e74f929cc999f9f80cd012cbad2a7c249fb05383e8f960af0a"},
    {"mlp", "torch-amp-fp16", 0.5, true,
     "11b1a6b04d7ac7596ab35c5b3817acc59e0f459f028eb7fe4e9b51eed3567258"},
};

ImageDataset RandomImages(int64_t n, uint64_t stream) {
  ImageDataset d;
  d.images = Tensor({n, 3, 8, 8});
  Philox(7, stream).FillUniform(d.images.data(), d.images.size(), -1.0f, 1.0f);
  for (int64_t i = 0; i < n; ++i) d.labels.push_back(static_cast<int32_t>(i % 10));
  d.num_classes = 10;
  return d;
}

DataSplits GoldenData() {
  DataSplits data;
  data.name = "random8";
  data.train = RandomImages(32, StreamId("accel-golden/train"));
  data.test = RandomImages(8, StreamId("accel-golden/test"));
  return data;
}

Result<TrainResult> TrainRun(const std::string& arch, const std::string& profile, double width,
                        const DataSplits& data, int threads) {
  XW_ASSIGN_OR_RETURN(Profile p, LoadProfile(profile));
  TrainOptions o;
  o.arch = arch;
  o.arch_options.width = width;
  o.epochs = 1;
  o.batch_size = 16;
  o.adam.lr = 0.01;
  o.seed = 11;
  o.threads = threads;
  return TrainProfile(p, data, o);
}

std::string Sha(const AccelGolden& c, const DataSplits& data, int threads) {
  auto r = TrainRun(c.arch, c.profile, c.width, data, threads);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? r->record.weights_sha256 : "";
}

class AccelGoldenTest : public ::testing::Test {
 protected:
  void TearDown() override { ASSERT_TRUE(SetKernelTarget("").ok()); }
};

TEST_F(AccelGoldenTest, BestTargetReproducesTheLiterals) {
  const DataSplits data = GoldenData();
  for (const AccelGolden& c : kCases) {
    EXPECT_EQ(Sha(c, data, 2), c.sha256) << c.arch << " " << c.profile;
  }
}

TEST_F(AccelGoldenTest, EveryTargetAndThreadCountReproducesTheLiterals) {
  const DataSplits data = GoldenData();
  for (const std::string& target : KernelTargets()) {
    ASSERT_TRUE(SetKernelTarget(target).ok());
    for (int threads : {1, 2}) {
      for (const AccelGolden& c : kCases) {
        if (!c.every_target) continue;
        EXPECT_EQ(Sha(c, data, threads), c.sha256)
            << c.arch << " " << c.profile << " on " << target << ", " << threads << " threads";
      }
    }
  }
  ASSERT_TRUE(SetKernelTarget("").ok());
  for (const AccelGolden& c : kCases) {
    if (c.every_target) continue;
    EXPECT_EQ(Sha(c, data, 1), Sha(c, data, 2)) << c.profile;
  }
}

// torch-a100 changes convolutions only (PyTorch's Linear stays IEEE fp32):
// on an MLP it is the torch profile, bit for bit.
TEST_F(AccelGoldenTest, ConvOnlyProfileLeavesAnMlpAlone) {
  const DataSplits data = GoldenData();
  auto a = TrainRun("mlp", "torch-a100", 0.5, data, 2);
  auto b = TrainRun("mlp", "torch", 0.5, data, 2);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->record.weights_sha256, b->record.weights_sha256);
  // ... and on a CNN it is not.
  auto c = TrainRun("simple_cnn", "torch-a100", 0.5, data, 2);
  auto d = TrainRun("simple_cnn", "torch", 0.5, data, 2);
  ASSERT_TRUE(c.ok() && d.ok());
  EXPECT_NE(c->record.weights_sha256, d->record.weights_sha256);
}

// Every batch either steps Adam or is skipped, and each skip halved the scale.
TEST_F(AccelGoldenTest, LossScalingAccountsForEveryBatch) {
  const DataSplits data = GoldenData();
  for (const char* profile : {"torch-amp-fp16", "tf-mixed-fp16"}) {
    auto r = TrainRun("simple_cnn", profile, 0.5, data, 2);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->steps + r->skipped_steps, 2) << profile;
    const double s0 = std::string(profile) == "torch-amp-fp16" ? 65536.0 : 32768.0;
    EXPECT_EQ(r->final_loss_scale, s0 * std::ldexp(1.0, -static_cast<int>(r->skipped_steps)));
  }
  auto plain = TrainRun("simple_cnn", "torch-bf16", 0.5, data, 2);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->loss_scaling, LossScaling::kNone);
  EXPECT_EQ(plain->steps, 2);
  EXPECT_EQ(plain->final_loss_scale, 1.0);
}

}  // namespace
}  // namespace xw
