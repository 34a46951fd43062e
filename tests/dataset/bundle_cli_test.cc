// `xwires bundle create|verify|import` and `xwires merge` end to end, with
// trials trained by the real trainer (`xwires train`, tiny MLP runs):
// an honest bundle replays bit for bit and imports with identical query
// results; a bundle whose weights were altered by one bit (re-stored with
// consistent hashes, so only a replay can tell) fails --replay; a machine
// fingerprint that rules out bitwise comparison falls back to accuracies and
// says so; a bad bundle creates no dataset.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "bundle_test_util.h"
#include "dataset/store/dataset_internal.h"
#include "testing/cli_runner.h"
#include "testing/temp_dir.h"
#include "xwires/dataset/bundle/bundle.h"
#include "xwires/dataset/query/query.h"
#include "xwires/dataset/store/dataset.h"

namespace xw {
namespace {

namespace fs = std::filesystem;
using testutil::ShellQuote;
using testutil::Xwires;

class BundleCliTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testutil::TempDir();
    // A user's profile on Eigen's sgemm (ISA-dependent bits): tf with
    // kernels.gemm "eigen".
    auto eigen = nlohmann::json::parse(
        testutil::ReadFileBytes(std::string(XWIRES_SOURCE_DIR) + "/trainers/profiles/tf.json"));
    eigen["name"] = "tf_eigen";
    eigen["kernels"]["gemm"] = "eigen";
    testutil::WriteFileBytes(Raw("tf_eigen.json"), eigen.dump(2));
    for (int seed : {1, 2}) {
      auto r = Xwires("train --arch mlp --width 0.25 --train-limit 100 --test-limit 50 "
                      "--epochs 1 --threads 1 --quiet --profiles torch,tf," + Path("tf_eigen.json") +
                      " --seed " + std::to_string(seed) +
                      " --lr " + (seed == 1 ? "0.001" : "0.01") + " --dataset " + Path("A"));
      ASSERT_EQ(r.exit_code, 0) << r.err;
    }
    auto r = Xwires("bundle create " + Path("A") + " --trials 1,2 -o " + Path("honest.tar.zst") +
                    " --contributor " + ShellQuote("Test Bot <bot@example.org>"));
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::string Path(const std::string& name) {
    return ShellQuote((fs::path(dir_->path()) / name).string());
  }
  static std::string Raw(const std::string& name) {
    return (fs::path(dir_->path()) / name).string();
  }
  static int Count(const std::string& text, const std::string& part) {
    int n = 0;
    for (size_t p = text.find(part); p != std::string::npos; p = text.find(part, p + 1)) ++n;
    return n;
  }
  static testutil::TempDir* dir_;
};
testutil::TempDir* BundleCliTest::dir_ = nullptr;

TEST_F(BundleCliTest, HonestBundleReplaysBitForBit) {
  auto r = Xwires("bundle verify " + Path("honest.tar.zst") + " --replay 2 --threads 1");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(Count(r.out, "bitwise check passed"), 6) << r.out;
  EXPECT_NE(r.out.find("replay: 6 models re-trained, 0 failed"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("bundle OK"), std::string::npos);
  // Replays name the trials by their ids in the dataset the bundle was
  // made from (A's trials 1 and 2), not by their places in the bundle.
  for (const char* id : {"1", "2"}) {
    EXPECT_NE(r.out.find(std::string("replay: trial ") + id + " profile 'torch': bitwise check passed"),
              std::string::npos) << r.out;
  }
  r = Xwires("bundle create " + Path("A") + " --trials 2 -o " + Path("second.tar.zst"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = Xwires("bundle verify " + Path("second.tar.zst") + " --replay 1 --threads 1");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(Count(r.out, "replay: trial 2 profile "), 3) << r.out;
}

TEST_F(BundleCliTest, ImportGivesIdenticalQueryResultsAndSkipsRepeats) {
  auto r = Xwires("bundle import " + Path("B") + " " + Path("honest.tar.zst"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("added 2 trials, skipped 0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("contributor 'Test Bot <bot@example.org>'"), std::string::npos);
  for (const char* q : {"", " --where 'lr > 0.005'", " --sort -acc_torch"}) {
    auto qa = Xwires("query " + Path("A") + q), qb = Xwires("query " + Path("B") + q);
    ASSERT_EQ(qa.exit_code, 0) << qa.err;
    EXPECT_EQ(qa.out, qb.out) << "query" << q;
  }
  r = Xwires("bundle import " + Path("B") + " " + Path("honest.tar.zst"));
  EXPECT_NE(r.out.find("added 0 trials, skipped 2"), std::string::npos) << r.out;
  r = Xwires("merge " + Path("M") + " " + Path("A"));
  EXPECT_NE(r.out.find("added 2 trials, skipped 0"), std::string::npos) << r.out << r.err;
  r = Xwires("merge " + Path("M") + " " + Path("B"));
  EXPECT_NE(r.out.find("added 0 trials, skipped 2"), std::string::npos) << r.out << r.err;
}

TEST_F(BundleCliTest, OneAlteredBitFailsReplay) {
  // Dataset C holds trial 1 with one weight bit flipped (stored afresh, so
  // every hash in the bundle is consistent) and trial 2 as trained but with a
  // fingerprint naming another ISA and SIMD target: torch's and tf's
  // exact-order kernels still replay bit for bit, tf_eigen's Eigen GEMM only
  // by accuracy.
  {
    auto a = Dataset::Open(Raw("A")).value();
    auto c = Dataset::Open(Raw("C"), OpenMode::kCreate).value();
    auto profiles = *internal::ModelProfileDefinitions(*a);
    TrialRecord t1 =
        *internal::RecordFromRow(*a, *a->GetTrial(1), profiles, true, true);
    uint32_t bits;
    std::memcpy(&bits, t1.models[0].weights[0].value.data(), 4);
    bits ^= 1u;
    std::memcpy(t1.models[0].weights[0].value.data(), &bits, 4);
    t1.models[0].weights_sha256.clear();
    ASSERT_TRUE(c->AddTrial(t1).ok());
    TrialRecord t2 =
        *internal::RecordFromRow(*a, *a->GetTrial(2), profiles, true, true);
    for (ModelRecord& m : t2.models) {
      auto fp = nlohmann::json::parse(m.fingerprint_json);
      fp["isa"] = "other-isa";
      fp["kernel_target"] = "hwy:OTHER";
      m.fingerprint_json = fp.dump();
    }
    ASSERT_TRUE(c->AddTrial(t2).ok());
  }
  auto r = Xwires("bundle create " + Path("C") + " --trials 1,2 -o " + Path("altered.tar.zst"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = Xwires("bundle verify " + Path("altered.tar.zst"));
  ASSERT_EQ(r.exit_code, 0) << "static checks cannot see it: " << r.err;
  r = Xwires("bundle verify " + Path("altered.tar.zst") + " --replay 2 --threads 1");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("trial 1 profile 'torch': bitwise check FAILED"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("trial 1 profile 'tf': bitwise check passed"), std::string::npos);
  EXPECT_NE(r.out.find("trial 2 profile 'torch': bitwise check passed"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("trial 2 profile 'tf': bitwise check passed"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("trial 2 profile 'tf_eigen': accuracy check passed"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("bitwise impossible: isa differs (bundle 'other-isa'"),
            std::string::npos);
  EXPECT_NE(r.err.find("replay failed: 1 model(s) do not reproduce"), std::string::npos)
      << r.err;
}

// The same ISA flags but another dispatched SIMD target: Eigen's GEMM
// (tf_eigen) is not compared bitwise; the exact-order torch and tf kernels are.
TEST_F(BundleCliTest, AnotherKernelTargetReplaysExactOrderBitwiseAndEigenByAccuracy) {
  {
    auto a = Dataset::Open(Raw("A")).value();
    auto d = Dataset::Open(Raw("KT"), OpenMode::kCreate).value();
    TrialRecord t = *internal::RecordFromRow(
        *a, *a->GetTrial(1), *internal::ModelProfileDefinitions(*a), true,
        true);
    for (ModelRecord& m : t.models) {
      auto fp = nlohmann::json::parse(m.fingerprint_json);
      ASSERT_TRUE(fp.contains("kernel_target")) << fp.dump();
      fp["kernel_target"] = "hwy:OTHER";
      m.fingerprint_json = fp.dump();
    }
    ASSERT_TRUE(d->AddTrial(t).ok());
  }
  auto r = Xwires("bundle create " + Path("KT") + " --trials 1 -o " + Path("target.tar.zst"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = Xwires("bundle verify " + Path("target.tar.zst") + " --replay 1 --threads 1");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("trial 1 profile 'torch': bitwise check passed"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("trial 1 profile 'tf': bitwise check passed"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("trial 1 profile 'tf_eigen': accuracy check passed"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("bitwise impossible: kernel_target differs (bundle 'hwy:OTHER'"),
            std::string::npos);
}

TEST_F(BundleCliTest, SearchBundlesCheckTheSearchSpace) {
  testutil::WriteFileBytes(Raw("search.json"), R"({
    "arch": "mlp", "data": {"spec": "synthetic", "train_limit": 100, "test_limit": 50},
    "dimensions": [{"name": "lr", "type": "real", "low": 1e-4, "high": 0.1, "log": true}],
    "budget": {"max_trials": 2}, "no_subspaces": true, "n_initial_points": 2})");
  auto r = Xwires("search --config " + Path("search.json") + " --dataset " + Path("S") +
                  " --quiet --jobs 1 --threads 1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = Xwires("bundle create " + Path("S") + " --search 1 -o " + Path("s.tar.zst"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = Xwires("bundle verify " + Path("s.tar.zst"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("search: hyperparameters of 2 trials lie in the search space"),
            std::string::npos)
      << r.out;
  {  // A trial recorded under the search with lr outside its space.
    auto s = Dataset::Open(Raw("S"), OpenMode::kReadWrite).value();
    auto rows = *s->Query({});
    TrialRecord t = *internal::RecordFromRow(
        *s, rows[0], *internal::ModelProfileDefinitions(*s), true, true);
    t.lr = 0.5;
    auto hp = nlohmann::json::parse(t.hparams_json);
    hp["lr"] = 0.5;
    t.hparams_json = hp.dump();
    ASSERT_TRUE(s->AddTrial(t).ok());
  }
  r = Xwires("bundle create " + Path("S") + " --search 1 -o " + Path("s2.tar.zst"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = Xwires("bundle verify " + Path("s2.tar.zst"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("trials.json: trial 2: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("lr"), std::string::npos) << r.err;
  r = Xwires("bundle import " + Path("T") + " " + Path("s2.tar.zst"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_FALSE(fs::exists(Raw("T")));
}

TEST_F(BundleCliTest, BadBundleCreatesNoDataset) {
  testutil::WriteFileBytes(Raw("junk.tar.zst"), std::string(300, 'j'));
  auto r = Xwires("bundle import " + Path("D") + " " + Path("junk.tar.zst"));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("junk.tar.zst"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(Raw("D")));
  r = Xwires("bundle create " + Path("A") + " -o " + Path("none.tar.zst"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("exactly one of --search ID and --trials LIST"), std::string::npos);
  r = Xwires("bundle create " + Path("A") + " --trials 1,x -o " + Path("none.tar.zst"));
  EXPECT_NE(r.err.find("'x' is not a trial id"), std::string::npos);
}

}  // namespace
}  // namespace xw
