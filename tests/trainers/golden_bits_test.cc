// Golden bits: short training runs under the exact-order profiles (torch,
// reference, tf) whose weights_sha256 is written here as a literal. Every SIMD
// target the kernels are compiled for must reproduce it, on any thread
// count: the vector width decides how many outputs advance at once, never
// the bits (docs/profiles.md, "Same bits on every CPU"). The literals were
// produced by the AVX-512 kernels before the Highway port and are checked on
// every machine CI meets (AVX2 or AVX-512) and on every target each one can
// run (SetKernelTarget).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "xwires/core/data.h"
#include "xwires/core/simd_target.h"
#include "xwires/trainers/architectures.h"
#include "xwires/trainers/profile.h"
#include "xwires/trainers/trainer.h"

namespace xw {
namespace {

struct GoldenCase {
  const char* arch;
  const char* profile;
  double width;
  int depth;
  const char* sha256;
};

// Three Adam steps (48 synthetic images, batch 16) from seed 11. resnet20 at
// width 0.5 (8/16/32 channels) has output rows of 32, 16 and 8 pixels and a
// strided convolution, so every convolution path of the direct algorithm
// runs (forward, data and filter gradients).
const GoldenCase kCases[] = {
    {"mlp", "torch", 0.5, 0,
     "a2325468f3c7109743a966095f56088485d1ecdf5288e330f0302f89d274bba4"},
    {"mlp", "reference", 0.5, 0,
     "c4bbd4fb63f794127be4a339fa878118575f4a06ed53d8459eae2bb6d662bc79"},
    // torch simple_cnn and resnet20 (batch norm) produced again on
    // 2026-11-28 (Intel Xeon @ 2.50GHz, AVX3) when the torch profile's
    // batch norm took PyTorch CPU's double accumulators and fused
    // scale-shift (batch_norm.accumulate double, batch_norm.fma true); mlp
    // and vgg11 have no batch norm and keep theirs.
    {"simple_cnn", "torch", 0.5, 0,
     "f094d816301a28569f2432ce263ea0eb1b6d8818a3212554fb7b2aabe6377fbd"},
    {"simple_cnn", "reference", 0.5, 0,
     "3af1b58d99c9301d6bc8ad3fc0b34b7c1173a80db113fc4ffdfad5747c59314d"},
    {"resnet20", "torch", 0.5, 8,
     "00a1823cbbb67ee64fb46fe88b3ecdf757a00b383670eba8bf435568823d6708"},
    {"resnet20", "reference", 0.5, 8,
     "80327ec84cfe8c0acfa941b09ceabdef4e1ed164a7d5b434cb2e10df2e5c29ed"},
    // vgg11 at width 0.25 (16-128 channels) ends on 4x4 and 2x2 planes,
    // where the padding-free products run (conv_padding_free.cc). These
    // literals were produced before they existed, by the tiles and ordered
    // products that multiply the padding zeros: leaving the zero terms out
    // must not change a bit, for lanes8 chains (torch) or sequential ones.
    {"vgg11", "torch", 0.25, 0,
     "1b2efa849eac46a40fe0feec0c6d80a74fad068b2b15a08bb5e1166da9090ddd"},
    {"vgg11", "reference", 0.25, 0,
     "e5e93f87602875ec8b9da8e1a6be8a4cb92c3997339332e50542479e580585de"},
    // tf: im2col convolutions and dense products on the exact-order kernels
    // (gemm "owned"; TF's asymmetric 'same' padding with stride 2, 1x1
    // projections, rows of 32, 16, 8, 4 and 2 pixels), pairwise reductions,
    // no FMA. Produced on AVX-512 (AVX3 target); the same on every target,
    // thread count and build (-DXWIRES_NATIVE=OFF too).
    {"mlp", "tf", 0.5, 0,
     "abe00f76209642971979fa75c71371d9735c25da296f130e13475e4d7f9dcd8e"},
    {"simple_cnn", "tf", 0.5, 0,
     "7f35eaf4ab26038f52c818abcd5f1eee6216f85219e06f27ce088df99232d79c"},
    {"resnet20", "tf", 0.5, 8,
     "94654f2ff78fc0759118571cc2aaffead173b51f4223d80c075d31ac8246323c"},
    {"vgg11", "tf", 0.25, 0,
     "b587ae8d5a5e76e75505f355d6aa98ddc36632b8e2639e13269668cb2ab6f658"},
};

DataSplits GoldenData() {
  SyntheticOptions so;
  so.train_size = 48;
  so.test_size = 16;
  so.seed = 7;
  return MakeSynthetic(so);
}

std::string Train(const GoldenCase& c, const DataSplits& data, int threads) {
  auto profile = LoadProfile(c.profile);
  EXPECT_TRUE(profile.ok()) << profile.status().ToString();
  if (!profile.ok()) return "";
  TrainOptions o;
  o.arch = c.arch;
  o.arch_options.width = c.width;
  o.arch_options.depth = c.depth;
  o.epochs = 1;
  o.batch_size = 16;
  o.adam.lr = 0.01;
  o.seed = 11;
  o.threads = threads;
  auto r = TrainProfile(*profile, data, o);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? r->record.weights_sha256 : "";
}

class GoldenBitsTest : public ::testing::Test {
 protected:
  void TearDown() override { ASSERT_TRUE(SetKernelTarget("").ok()); }
};

TEST_F(GoldenBitsTest, BestTargetReproducesTheLiterals) {
  const DataSplits data = GoldenData();
  for (const GoldenCase& c : kCases) {
    EXPECT_EQ(Train(c, data, 2), c.sha256)
        << c.arch << " " << c.profile << " on " << KernelTarget();
  }
}

TEST_F(GoldenBitsTest, EveryTargetAndThreadCountReproducesTheLiterals) {
  const DataSplits data = GoldenData();
  for (const std::string& target : KernelTargets()) {
    ASSERT_TRUE(SetKernelTarget(target).ok());
    for (int threads : {1, 2, 4}) {
      for (const GoldenCase& c : kCases) {
        EXPECT_EQ(Train(c, data, threads), c.sha256)
            << c.arch << " " << c.profile << " on " << target << ", " << threads << " threads";
      }
    }
  }
}

}  // namespace
}  // namespace xw
