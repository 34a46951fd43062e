// Bundle create / verify / import / merge on real datasets: round trips give
// identical query results, duplicates are skipped and counted, provenance is
// recorded, and every malicious bundle is rejected with the dataset unchanged.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>

#include "bundle_test_util.h"
#include "dataset/store/dataset_internal.h"
#include "dataset/store/sha256.h"
#include "testing/temp_dir.h"
#include "testing/trial_builder.h"
#include "xwires/core/build_info.h"
#include "xwires/dataset/bundle/bundle.h"
#include "xwires/dataset/query/query.h"
#include "xwires/dataset/store/tensor_file.h"

namespace xw {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using Entries = std::vector<std::pair<std::string, std::string>>;

TrialRecord MakeTrial(int i, std::optional<int64_t> search_id) {
  TrialRecord t = testutil::BaseTrial({.arch = "simple_cnn",
                                       .seed = i,
                                       .lr = 1e-3 * (i + 1),
                                       .epochs = 2,
                                       .provenance = "bundle_ops_test"});
  t.hparams_json = json{{"lr", t.lr}, {"adam_eps", 1e-7}, {"seed", i}}.dump(2);
  t.search_id = search_id;
  for (ModelRecord& m : t.models) {
    const bool tf = m.profile == "tf";
    m.profile_json = "{\n  \"name\": \"" + m.profile + "\",\n  \"conv\": \"direct\"\n}";
    m.test_acc = 0.2 + 0.01 * i + (tf ? 0.1 : 0.0);
    m.train_acc = m.test_acc + 0.05;
    m.test_loss = 2.0 - 0.1 * i;
    m.train_loss = i == 2 ? INFINITY : 1.5;  // a diverged loss survives too
    if (i == 2) m.status = "diverged";
    m.wall_time_s = 1.25;
    m.param_count = 7;
    m.fingerprint_json = MachineFingerprintJson(1);
    m.threads = 1;
    m.curves = {{1, 2.0, 1.9, 0.2, 2.1, 0.15}, {2, 1.5, 1.4, 0.3 + 0.01 * i, 1.6, kUnknown}};
    Tensor w({2, 3});
    for (int k = 0; k < 6; ++k) w[k] = 0.5f * static_cast<float>(i * 10 + k) + tf;
    m.weights.push_back({"fc.weight", w});
    Tensor n(Shape{});
    n[0] = static_cast<float>(i);
    m.weights.push_back({"bn.num_batches_tracked", n, true});
  }
  t.divergence = 0.1;
  return t;
}

class BundleOpsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(tmp_.path());
    auto a = Dataset::Open((root_ / "A").string(), OpenMode::kCreate);
    ASSERT_TRUE(a.ok()) << a.status().ToString();
    a_ = std::move(a).value();
    SearchRecord s;
    s.config_json = R"({"arch": "simple_cnn", "profiles": ["torch", "tf"]})";
    s.space_json = R"([{"name": "lr", "low": 1e-4, "high": 0.1}])";
    s.objective = "abs_acc_diff";
    search_ = *a_->AddSearch(s);
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(a_->AddTrial(MakeTrial(i, search_)).ok());
    ASSERT_TRUE(a_->AddTrial(MakeTrial(7, std::nullopt)).ok());  // outside the search
    BundleCreateOptions o;
    o.contributor = "Jane Doe <jane@example.org>";
    bundle_ = (root_ / "contrib.tar.zst").string();
    auto r = CreateBundle(*a_, search_, {}, bundle_, o);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->trials, 3);
    bundle_sha256_ = r->sha256;
    EXPECT_EQ(bundle_sha256_, *Sha256File(bundle_));
  }

  std::unique_ptr<Dataset> Open(const std::string& name) {
    auto ds = Dataset::Open((root_ / name).string(), OpenMode::kCreate);
    EXPECT_TRUE(ds.ok()) << ds.status().ToString();
    return std::move(ds).value();
  }

  // Content hashes of every stored trial, in id order.
  static std::vector<std::string> Hashes(const Dataset& ds, const TrialQuery& q = {}) {
    auto profiles = *internal::ModelProfileDefinitions(ds);
    std::vector<std::string> out;
    const std::vector<TrialRow> rows = *ds.Query(q);
    for (const TrialRow& row : rows) {
      out.push_back(TrialContentSha256(
          *internal::RecordFromRow(ds, row, profiles, true, false)));
    }
    return out;
  }

  testutil::TempDir tmp_;
  fs::path root_;
  std::unique_ptr<Dataset> a_;
  int64_t search_ = 0;
  std::string bundle_, bundle_sha256_;
};

TEST_F(BundleOpsTest, VerifyReportsEveryStaticCheck) {
  std::vector<std::string> lines;
  BundleVerifyOptions o;
  o.log = [&](const std::string& l) { lines.push_back(l); };
  auto r = VerifyBundle(bundle_, BundleCheckers{}, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->trials, 3);
  EXPECT_EQ(r->models_with_weights, 6);
  EXPECT_EQ(r->bundle_sha256, bundle_sha256_);
  EXPECT_EQ(r->manifest.contributor, "Jane Doe <jane@example.org>");
  ASSERT_TRUE(r->manifest.search.has_value());
  EXPECT_EQ(r->manifest.data_specs, std::vector<std::string>{"synthetic"});
  EXPECT_EQ(r->manifest.profiles.size(), 2u);
  EXPECT_EQ(lines, r->checks);
  ASSERT_GE(lines.size(), 10u);
  EXPECT_NE(lines[4].find("analyses: 0 results"), std::string::npos) << lines[4];
  EXPECT_NE(lines[5].find("weights: 6 files"), std::string::npos) << lines[5];
  EXPECT_NE(lines[6].find("replicas: 0 replicas"), std::string::npos) << lines[6];
  EXPECT_NE(lines[7].find("replica statistics: 0 rows"), std::string::npos) << lines[7];
  EXPECT_NE(lines[8].find("not checked"), std::string::npos) << lines[8];
  // Replay without a trainer is refused rather than silently skipped.
  o.replay = 1;
  EXPECT_EQ(VerifyBundle(bundle_, BundleCheckers{}, o).status().code(),
            Status::Code::kFailedPrecondition);
}

TEST_F(BundleOpsTest, ImportGivesIdenticalQueryResults) {
  auto b = Open("B");
  auto r = ImportBundle(*b, bundle_, BundleCheckers{});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->added, 3);
  EXPECT_EQ(r->skipped, 0);
  TrialQuery in_search;
  in_search.where = "search_id = " + std::to_string(search_);
  EXPECT_EQ(Hashes(*b), Hashes(*a_, in_search));
  // A filtered, ordered query returns the same trials with the same values.
  TrialQuery q;
  q.where = "acc_tf > 0.305 and lr < 0.0025";
  q.order_by = {"-diff", "lr"};
  auto qa = *a_->Query(q), qb = *b->Query(q);
  ASSERT_EQ(qa.size(), 1u);
  ASSERT_EQ(qb.size(), 1u);
  EXPECT_EQ(qa[0].lr, qb[0].lr);
  EXPECT_EQ(qa[0].Model("tf")->test_acc, qb[0].Model("tf")->test_acc);
  auto all_b = *b->Query({});
  EXPECT_TRUE(std::isinf(all_b[2].models[0].train_loss));
  // Weights and curves arrive bit for bit.
  EXPECT_EQ(WeightsSha256(*b->LoadWeights(qb[0].models[1].id)),
            WeightsSha256(*a_->LoadWeights(qa[0].models[1].id)));
  auto ca = *a_->LoadCurves(qa[0].models[0].id), cb = *b->LoadCurves(qb[0].models[0].id);
  ASSERT_EQ(ca.size(), cb.size());
  EXPECT_EQ(ca[1].train_acc, cb[1].train_acc);
  EXPECT_TRUE(std::isnan(cb[1].test_acc));
  // Provenance and the search.
  EXPECT_EQ(qb[0].provenance.rfind("bundle sha256:" + bundle_sha256_ + " imported ", 0), 0u);
  EXPECT_NE(qb[0].provenance.find("contributor 'Jane Doe <jane@example.org>'; origin: "
                                  "bundle_ops_test"),
            std::string::npos)
      << qb[0].provenance;
  auto searches = *b->Searches();
  ASSERT_EQ(searches.size(), 1u);
  EXPECT_EQ(qb[0].search_id, searches[0].id);
  EXPECT_EQ(searches[0].record.objective, "abs_acc_diff");
}

TEST_F(BundleOpsTest, AlreadyPresentTrialsAreSkippedAndCounted) {
  auto b = Open("B");
  const std::string one = (root_ / "one.tar.zst").string();
  ASSERT_TRUE(CreateBundle(*a_, std::nullopt, {2}, one).ok());
  auto r = ImportBundle(*b, one, BundleCheckers{});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->added, 1);
  EXPECT_TRUE(b->Searches()->empty());  // --trials bundles carry no search
  r = ImportBundle(*b, bundle_, BundleCheckers{});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->added, 2);
  EXPECT_EQ(r->skipped, 1);
  r = ImportBundle(*b, bundle_, BundleCheckers{});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->added, 0);
  EXPECT_EQ(r->skipped, 3);
  EXPECT_EQ(*b->Count({}), 3);
  EXPECT_EQ(b->Searches()->size(), 1u);
}

TEST_F(BundleOpsTest, MergeAddsMissingTrialsOnce) {
  auto b = Open("B");
  ASSERT_TRUE(ImportBundle(*b, bundle_, BundleCheckers{}).ok());
  auto m = Open("M");
  auto r = MergeDatasets(*m, *b);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->added, 3);
  r = MergeDatasets(*m, *a_);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->added, 1);  // only the trial outside the search is new
  EXPECT_EQ(r->skipped, 3);
  EXPECT_EQ(r->provenance.rfind("merged from " + fs::absolute(a_->dir()).string(), 0), 0u);
  std::vector<std::string> ha = Hashes(*a_), hm = Hashes(*m);
  EXPECT_EQ(std::multiset<std::string>(ha.begin(), ha.end()),
            std::multiset<std::string>(hm.begin(), hm.end()));
  EXPECT_EQ(m->Searches()->size(), 1u);  // the same search, found again
  EXPECT_EQ(MergeDatasets(*m, *a_)->added, 0);
  EXPECT_EQ(MergeDatasets(*m, *m).status().code(), Status::Code::kInvalidArgument);
}

TEST_F(BundleOpsTest, CreateRejectsBadSelections) {
  const std::string out = (root_ / "x.tar.zst").string();
  EXPECT_EQ(CreateBundle(*a_, std::nullopt, {}, out).status().code(),
            Status::Code::kInvalidArgument);
  EXPECT_EQ(CreateBundle(*a_, search_, {1}, out).status().code(),
            Status::Code::kInvalidArgument);
  EXPECT_EQ(CreateBundle(*a_, 99, {}, out).status().code(), Status::Code::kNotFound);
  EXPECT_EQ(CreateBundle(*a_, std::nullopt, {1, 99}, out).status().code(),
            Status::Code::kNotFound);
  BundleCreateOptions o;
  o.contributor = "x\ny";
  EXPECT_EQ(CreateBundle(*a_, std::nullopt, {1}, out, o).status().code(),
            Status::Code::kInvalidArgument);
  EXPECT_FALSE(fs::exists(out));
  EXPECT_FALSE(fs::exists(out + ".partial"));
}

TEST(TrialContentHash, CoversContentNotStorage) {
  TrialRecord t = MakeTrial(1, 5);
  const std::string h = TrialContentSha256(t);
  TrialRecord u = t;
  u.search_id = 9;
  u.provenance = "elsewhere";
  u.hparams_json = json::parse(t.hparams_json).dump();  // same JSON, other spacing
  EXPECT_EQ(TrialContentSha256(u), h);
  u.models[1].curves[0].test_loss += 1e-12;
  EXPECT_NE(TrialContentSha256(u), h);
  u = t;
  u.models[0].weights[0].value[0] += 1;  // weights_sha256 empty: hashed from weights
  EXPECT_NE(TrialContentSha256(u), h);
}

}  // namespace
}  // namespace xw
