// ISA-dependent profiles pooled from different SIMD targets
// (include/xwires/dataset/query/isa_pooling.h): the query over stored
// fingerprints, and the warnings of `stats`, `merge` and `bundle import` on
// models trained by the real trainer under a user profile on Eigen's sgemm,
// once on the dispatched target and once under XWIRES_SIMD_TARGET=SSE4.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "testing/cli_runner.h"
#include "testing/temp_dir.h"
#include "testing/trial_builder.h"
#include "xwires/dataset/query/isa_pooling.h"
#include "xwires/dataset/store/dataset.h"

namespace xw {
namespace {

namespace fs = std::filesystem;
using testutil::ShellQuote;
using testutil::Xwires;

TrialRecord Trial(int seed, const std::string& target, bool isa_dependent) {
  TrialRecord t = testutil::BaseTrial({.arch = "mlp",
                                       .seed = seed,
                                       .lr = 1e-3,
                                       .profiles = {"torch", "mine"},
                                       .provenance = "isa_pooling_test"});
  for (ModelRecord& m : t.models) {
    m.test_acc = 0.5;
    m.param_count = 6;
    nlohmann::json fp = {{"isa", "native:avx512f"}, {"kernel_target", target}};
    // Only the user's profile is ISA-dependent; torch is exact-order and
    // its models from the same targets must not be reported.
    if (isa_dependent && m.profile == "mine") fp["isa_dependent"] = true;
    m.fingerprint_json = fp.dump();
  }
  return t;
}

TEST(IsaPoolingTest, ReportsOnlyIsaDependentProfilesFromSeveralTargets) {
  testutil::TempDir dir;
  auto ds = Dataset::Open(dir.path() + "/d", OpenMode::kCreate).value();
  ds->AddTrial(Trial(1, "hwy:AVX3", true)).value();
  ds->AddTrial(Trial(2, "hwy:AVX3", true)).value();
  EXPECT_TRUE(FindIsaMixedProfiles(*ds).value().empty()) << "one target only";
  ds->AddTrial(Trial(3, "hwy:AVX2", true)).value();
  auto mixed = FindIsaMixedProfiles(*ds).value();
  ASSERT_EQ(mixed.size(), 1u);
  EXPECT_EQ(mixed[0].profile, "mine");
  ASSERT_EQ(mixed[0].targets.size(), 2u);
  EXPECT_EQ(mixed[0].targets[0].first, "native:avx512f / hwy:AVX2");
  EXPECT_EQ(mixed[0].targets[0].second, 1);
  EXPECT_EQ(mixed[0].targets[1].first, "native:avx512f / hwy:AVX3");
  EXPECT_EQ(mixed[0].targets[1].second, 2);
  const std::string w = IsaMixedWarning(mixed[0]);
  EXPECT_NE(w.find("profile 'mine'"), std::string::npos) << w;
  EXPECT_NE(w.find("3 models"), std::string::npos) << w;
  EXPECT_NE(w.find("hwy:AVX2 (1), native:avx512f / hwy:AVX3 (2)"), std::string::npos) << w;
  // The filter restricts the pool: trial 3 alone is one target.
  TrialQuery q;
  q.where = "seed = 3";
  EXPECT_TRUE(FindIsaMixedProfiles(*ds, q).value().empty());
}

TEST(IsaPoolingTest, ExactOrderModelsFromSeveralTargetsAreNotReported) {
  testutil::TempDir dir;
  auto ds = Dataset::Open(dir.path() + "/d", OpenMode::kCreate).value();
  ds->AddTrial(Trial(1, "hwy:AVX3", false)).value();
  ds->AddTrial(Trial(2, "hwy:SSE4", false)).value();
  TrialRecord imported = Trial(3, "hwy:AVX2", true);
  imported.models[1].fingerprint_json = "{}";  // imported results carry no machine
  ds->AddTrial(imported).value();
  EXPECT_TRUE(FindIsaMixedProfiles(*ds).value().empty());
}

// The commands, on real trainings: a user's profile on Eigen's sgemm (tf
// with kernels.gemm "eigen"), trained natively into A and under SSE4 into B.
class IsaPoolingCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto eigen = nlohmann::json::parse(std::ifstream(std::string(XWIRES_SOURCE_DIR) +
                                                     "/trainers/profiles/tf.json"));
    eigen["name"] = "tf_eigen";
    eigen["kernels"]["gemm"] = "eigen";
    std::ofstream(Raw("tf_eigen.json")) << eigen.dump(2);
    Train("A", "", 1);
    Train("B", "XWIRES_SIMD_TARGET=SSE4 ", 2);
  }
  void Train(const std::string& dataset, const std::string& env, int seed) {
    auto r = testutil::Run(env + std::string(XWIRES_BINARY_DIR) +
                           "/xwires train --arch mlp --width 0.25 --train-limit 100 "
                           "--test-limit 50 --epochs 1 --threads 1 --quiet --profiles tf," +
                           Path("tf_eigen.json") + " --seed " + std::to_string(seed) +
                           " --dataset " + Path(dataset));
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  std::string Path(const std::string& name) const { return ShellQuote(Raw(name)); }
  std::string Raw(const std::string& name) const {
    return (fs::path(dir_.path()) / name).string();
  }
  static bool Warns(const std::string& err) {
    return err.find("warning: profile 'tf_eigen' has ISA-dependent kernels") !=
           std::string::npos;
  }
  testutil::TempDir dir_;
};

TEST_F(IsaPoolingCliTest, StatsMergeAndBundleImportWarnWhenTargetsMix) {
  auto b = Dataset::Open(Raw("B")).value();
  const auto fp = nlohmann::json::parse(b->GetTrial(1).value().Model("tf_eigen")->fingerprint_json);
  if (fp.value("kernel_target", "") != "hwy:SSE4") {
    GTEST_SKIP() << "this CPU cannot dispatch SSE4: " << fp.dump();
  }
  auto a = Dataset::Open(Raw("A")).value();
  if (a->GetTrial(1).value().Model("tf_eigen")->fingerprint_json == fp.dump()) {
    GTEST_SKIP() << "SSE4 is this CPU's dispatched target: nothing to mix";
  }
  a.reset();
  b.reset();
  // One target each: no warning.
  auto r = Xwires("stats " + Path("A"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(Warns(r.err)) << r.err;
  // A bundle of B imported next to A's models, and A merged with B.
  r = Xwires("bundle create " + Path("B") + " --trials 1 -o " + Path("b.tar.zst") +
             " --contributor " + ShellQuote("Test Bot <bot@example.org>"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(Xwires("merge " + Path("C") + " " + Path("A")).exit_code, 0);
  r = Xwires("bundle import " + Path("C") + " " + Path("b.tar.zst"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Warns(r.err)) << r.err;
  EXPECT_NE(r.err.find("hwy:SSE4 (1)"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("profile 'tf'"), std::string::npos) << "tf is exact-order: " << r.err;
  r = Xwires("merge " + Path("A") + " " + Path("B"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Warns(r.err)) << r.err;
  r = Xwires("stats " + Path("A"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Warns(r.err)) << r.err;
  // The warning is about the pool the filter selects.
  r = Xwires("stats " + Path("A") + " --where 'seed = 1'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(Warns(r.err)) << r.err;
}

}  // namespace
}  // namespace xw
