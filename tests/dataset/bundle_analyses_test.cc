// Analyses travel (bundle format 2): a result stored in A arrives identical
// in B through bundle create + import and through merge, once; tampered or
// impossible analyses are rejected with B unchanged while a good bundle next
// to them imports; format-1 bundles (written by the previous release) still
// import; a search and its trials arrive in one transaction.
#include <gtest/gtest.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "bundle_test_util.h"
#include "dataset/bundle/bundle_manifest.h"
#include "dataset/bundle/bundle_trials.h"
#include "dataset/store/dataset_internal.h"
#include "dataset/store/sha256.h"
#include "testing/cli_runner.h"
#include "testing/file_tree.h"
#include "testing/temp_dir.h"
#include "xwires/dataset/bundle/bundle.h"
#include "xwires/dataset/store/analysis.h"

namespace xw {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

TrialRecord Trial(int i) {
  TrialRecord t;
  t.arch = "mlp";
  t.data_spec = "synthetic";
  t.lr = 0.01 * (i + 1);
  t.batch_size = 32;
  t.seed = i;
  for (const char* p : {"torch", "tf"}) {
    ModelRecord m;
    m.profile = p;
    m.external = true;  // no definition for the CLI's profile checker
    m.test_acc = 0.5 + 0.01 * i + (p[1] == 'f' ? 0.1 : 0.0);
    Tensor w({3}, 0.5f * static_cast<float>(i + 1));
    m.weights.push_back({"fc.weight", w});
    t.models.push_back(std::move(m));
  }
  t.divergence = 0.1;
  return t;
}

AnalysisRecord Result(const std::string& kind, std::vector<int64_t> trials) {
  AnalysisRecord a;
  a.kind = kind;
  a.trial_ids = std::move(trials);
  a.summary = kind + " summary";
  a.result_json = R"({"kind": ")" + kind + R"(", "values": [0.25, 1e-09]})";
  if (kind == "attribute") {
    a.runs.push_back({"", "baseline", "torch", "", "ok", 0.5, 2.25,
                      std::string(64, 'c')});
    a.runs.push_back({"adam.variant", "a_to_b", "torch+adam.variant",
                      "\"keras\"", "diverged", 0.1, INFINITY, ""});
  }
  return a;
}

// An analysis as content: everything but ids, with its trials as content
// hashes, so that results in two datasets compare equal.
std::string Content(const Dataset& ds, const AnalysisRecord& a) {
  auto profiles = *internal::ModelProfileDefinitions(ds);
  std::multiset<std::string> trials;
  for (int64_t id : a.trial_ids) {
    trials.insert(TrialContentSha256(
        *internal::RecordFromRow(ds, *ds.GetTrial(id), profiles, true, false)));
  }
  json runs = json::array();
  for (const AnalysisRun& r : a.runs) {
    runs.push_back({r.knob, r.direction, r.profile, r.value_json, r.status,
                    r.test_acc, std::isinf(r.test_loss) ? -1.0 : r.test_loss,
                    r.weights_sha256});
  }
  return json{a.kind,        a.created_at, a.toolkit, a.summary,
              a.result_json, runs,         trials}
      .dump();
}

std::multiset<std::string> Contents(const Dataset& ds) {
  std::multiset<std::string> out;
  const std::vector<AnalysisRecord> stored = *LoadAnalyses(ds);
  for (const AnalysisRecord& a : stored) out.insert(Content(ds, a));
  return out;
}

class BundleAnalysesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(tmp_.path());
    a_ = Open("A");
    SearchRecord s;
    s.config_json = R"({"arch": "mlp"})";
    s.objective = "abs_acc_diff";
    search_ = *a_->AddSearch(s);
    for (int i = 0; i < 3; ++i) {
      TrialRecord t = Trial(i);
      t.search_id = search_;
      ids_.push_back(*a_->AddTrial(t));
    }
    outside_ = *a_->AddTrial(Trial(7));
    ASSERT_TRUE(StoreAnalysis(*a_, Result("compare", {ids_[0]})).ok());
    ASSERT_TRUE(StoreAnalysis(*a_, Result("attribute", {ids_[1]})).ok());
    ASSERT_TRUE(StoreAnalysis(*a_, Result("mi", ids_)).ok());
    // Describes a trial outside the search: not in a --search bundle.
    ASSERT_TRUE(StoreAnalysis(*a_, Result("mi", {ids_[0], outside_})).ok());
    bundle_ = (root_ / "search.tar.zst").string();
    ASSERT_TRUE(CreateBundle(*a_, search_, {}, bundle_).ok());
  }

  // A's analyses as the --search bundle carries them: all but the last,
  // which describes a trial outside the search.
  std::multiset<std::string> BundledContents() {
    std::multiset<std::string> in_a = Contents(*a_);
    in_a.erase(in_a.find(Content(*a_, (*LoadAnalyses(*a_))[3])));
    return in_a;
  }

  std::unique_ptr<Dataset> Open(const std::string& name) {
    auto ds = Dataset::Open((root_ / name).string(), OpenMode::kCreate);
    EXPECT_TRUE(ds.ok()) << ds.status().ToString();
    return std::move(ds).value();
  }

  testutil::TempDir tmp_;
  fs::path root_;
  std::unique_ptr<Dataset> a_;
  int64_t search_ = 0, outside_ = 0;
  std::vector<int64_t> ids_;
  std::string bundle_;
};

TEST_F(BundleAnalysesTest, AnalysesArriveIdenticalThroughABundle) {
  auto v = VerifyBundle(bundle_, BundleCheckers{});
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(v->manifest.format_version, kBundleFormatVersion);
  EXPECT_EQ(v->analyses, 3);
  auto b = Open("B");
  auto r = ImportBundle(*b, bundle_, BundleCheckers{});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->added, 3);
  EXPECT_EQ(r->analyses_added, 3);
  EXPECT_EQ(Contents(*b), BundledContents());
  const AnalysisRecord attribution = (*LoadAnalyses(*b, -1, "attribute"))[0];
  EXPECT_EQ(attribution.result_json,
            (*LoadAnalyses(*a_, -1, "attribute"))[0].result_json);
  EXPECT_EQ(attribution.runs[1].test_loss, INFINITY);
  // Again: nothing new, the results are not duplicated.
  r = ImportBundle(*b, bundle_, BundleCheckers{});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->added, 0);
  EXPECT_EQ(r->analyses_added, 0);
  EXPECT_EQ(r->analyses_skipped, 3);
  EXPECT_EQ(LoadAnalyses(*b)->size(), 3u);
}

TEST_F(BundleAnalysesTest, AnalysesArriveIdenticalThroughMerge) {
  auto m = Open("M");
  auto r = MergeDatasets(*m, *a_);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->added, 4);
  EXPECT_EQ(r->analyses_added, 4);
  EXPECT_EQ(Contents(*m), Contents(*a_));
  r = MergeDatasets(*m, *a_);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->analyses_added, 0);
  EXPECT_EQ(r->analyses_skipped, 4);
  EXPECT_EQ(LoadAnalyses(*m)->size(), 4u);
}

TEST_F(BundleAnalysesTest, AnalysesOfTrialsAlreadyPresentStillArrive) {
  // B got the trials without their analyses (a format-1 bundle, say); the
  // format-2 bundle then adds only the analyses, on B's own trial ids.
  auto b = Open("B");
  auto m = Open("M");
  for (int64_t id : ids_) {
    TrialRow row = *a_->GetTrial(id);
    TrialRecord t = *internal::RecordFromRow(
        *a_, row, *internal::ModelProfileDefinitions(*a_), true, true);
    t.search_id.reset();
    ASSERT_TRUE(b->AddTrial(Trial(30)).ok());  // shifts B's ids
    ASSERT_TRUE(b->AddTrial(t).ok());
  }
  auto r = ImportBundle(*b, bundle_, BundleCheckers{});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->added, 0);
  EXPECT_EQ(r->analyses_added, 3);
  EXPECT_EQ(Contents(*b), BundledContents());
}

TEST_F(BundleAnalysesTest, SearchAndTrialsArriveTogetherOrNotAtAll) {
  // A trial that breaks the value gate: nothing reaches B, not even the
  // search (which an import used to add, then remove).
  auto b = Open("B");
  ASSERT_TRUE(b->AddTrial(Trial(20)).ok());
  b.reset();
  const std::string before = testutil::HashTree((root_ / "B").string());
  // An impossible accuracy whose content hash and manifest checksum agree:
  // only the store's value gate, inside the import, can refuse it.
  auto entries = testutil::ReadArchiveEntries(bundle_);
  auto manifest = bundle::ParseManifest(entries[0].second);
  ASSERT_TRUE(manifest.ok()) << manifest.status().ToString();
  ASSERT_EQ(entries[1].first, "trials.json");
  auto trials = bundle::ParseTrialsJson(entries[1].second, *manifest);
  ASSERT_TRUE(trials.ok()) << trials.status().ToString();
  (*trials)[2].record.models[0].test_acc = 1.6;
  (*trials)[2].content_sha256 = TrialContentSha256((*trials)[2].record);
  entries[1].second = *bundle::TrialsToJson(*trials);
  json m = json::parse(entries[0].second);
  m["files"][0]["bytes"] = entries[1].second.size();
  m["files"][0]["sha256"] = Sha256Hex(entries[1].second);
  entries[0].second = m.dump(1);
  std::vector<testutil::RawEntry> raw;
  for (const auto& [name, bytes] : entries)
    raw.push_back(testutil::File(name, bytes));
  const std::string evil = (root_ / "evil.tar.zst").string();
  testutil::WriteRawArchive(evil, raw);
  {
    auto rw = Dataset::Open((root_ / "B").string(), OpenMode::kReadWrite);
    ASSERT_TRUE(rw.ok());
    auto r = ImportBundle(**rw, evil, BundleCheckers{});
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("trial 2: model 'torch': test_acc 1.6 "
                                        "is not an accuracy in [0, 1]"),
              std::string::npos)
        << r.status().ToString();
    EXPECT_TRUE((*rw)->Searches()->empty());
  }
  EXPECT_EQ(testutil::HashTree((root_ / "B").string()), before);
  auto rw = Dataset::Open((root_ / "B").string(), OpenMode::kReadWrite);
  auto r = ImportBundle(**rw, bundle_, BundleCheckers{});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->searches_added, 1);
  const auto searches = *(*rw)->Searches();
  ASSERT_EQ(searches.size(), 1u);
  for (int64_t id : r->trial_ids) {
    EXPECT_EQ((*rw)->GetTrial(id)->search_id, searches[0].id);
  }
}

TEST_F(BundleAnalysesTest, CreateRefusesAStoredResultThatBreaksTheRules) {
  {
    SQLite::Database db((root_ / "A" / "xwires.db").string(),
                        SQLite::OPEN_READWRITE);
    db.exec("UPDATE analysis_runs SET test_acc = 2.0 WHERE knob = ''");
  }
  auto r = CreateBundle(*a_, search_, {}, (root_ / "x.tar.zst").string());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find(
                "stored analysis 2: run 0: test_acc 2 is not an accuracy"),
            std::string::npos)
      << r.status().ToString();
  EXPECT_FALSE(fs::exists(root_ / "x.tar.zst"));
  // Merge refuses it too, and the target is left as it was.
  auto m = Open("M");
  ASSERT_TRUE(m->AddTrial(Trial(20)).ok());
  m.reset();
  const std::string before = testutil::HashTree((root_ / "M").string());
  {
    auto rw = Dataset::Open((root_ / "M").string(), OpenMode::kReadWrite);
    auto mr = MergeDatasets(**rw, *a_);
    ASSERT_FALSE(mr.ok());
    EXPECT_NE(mr.status().message().find("run 0: test_acc 2 is not an accuracy"),
              std::string::npos)
        << mr.status().ToString();
  }
  EXPECT_EQ(testutil::HashTree((root_ / "M").string()), before);
  // A good dataset next to it still merges.
  auto rw = Dataset::Open((root_ / "M").string(), OpenMode::kReadWrite);
  auto good = Open("G");
  ASSERT_TRUE(good->AddTrial(Trial(21)).ok());
  ASSERT_TRUE(StoreAnalysis(*good, Result("compare", {1})).ok());
  auto ok = MergeDatasets(**rw, *good);
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->analyses_added, 1);
}

TEST_F(BundleAnalysesTest, CliRefusesABadAnalysisAndImportsTheGoodBundle) {
  // A --trials bundle (the CLI checks a search's space with the search
  // module), and a copy whose attribution's baseline accuracy is
  // impossible, every checksum recomputed.
  const std::string good = (root_ / "trials.tar.zst").string();
  ASSERT_TRUE(CreateBundle(*a_, std::nullopt, ids_, good).ok());
  auto entries = testutil::ReadArchiveEntries(good);
  ASSERT_EQ(entries[2].first, "analyses.json");
  json analyses = json::parse(entries[2].second);
  for (json& a : analyses) {
    if (a["kind"] == "attribute") a["runs"][0]["test_acc"] = 1.5;
  }
  entries[2].second = analyses.dump();
  json m = json::parse(entries[0].second);
  for (json& f : m["files"]) {
    if (f["path"] != "analyses.json") continue;
    f["bytes"] = entries[2].second.size();
    f["sha256"] = Sha256Hex(entries[2].second);
  }
  entries[0].second = m.dump(1);
  std::vector<testutil::RawEntry> raw;
  for (const auto& [name, bytes] : entries)
    raw.push_back(testutil::File(name, bytes));
  const std::string evil = (root_ / "evil.tar.zst").string();
  testutil::WriteRawArchive(evil, raw);
  const std::string b = (root_ / "B").string();
  Open("B")->AddTrial(Trial(20)).value();
  const std::string before = testutil::HashTree(b);
  auto r = testutil::Xwires("bundle import " + b + " " + evil);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("analyses.json: analysis [1] (attribute): run 0: "
                       "test_acc 1.5 is not an accuracy in [0, 1]"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(testutil::HashTree(b), before);
  r = testutil::Xwires("bundle import " + b + " " + good);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("added 3 trials, skipped 0 already present\n"
                       "analyses: added 3, skipped 0 already present"),
            std::string::npos)
      << r.out;
  r = testutil::Xwires("merge " + (root_ / "M").string() + " " +
                       (root_ / "A").string());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("analyses: added 4, skipped 0"), std::string::npos)
      << r.out;
}

TEST(BundleFormat1, BundleOfThePreviousReleaseStillImports) {
  testutil::TempDir tmp;
  const std::string v1 = std::string(XWIRES_SOURCE_DIR) +
                         "/tests/fixtures/format_v1/bundle_v1.tar.zst";
  auto v = VerifyBundle(v1, BundleCheckers{});
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(v->manifest.format_version, 1);
  EXPECT_EQ(v->analyses, 0);
  auto ds = Dataset::Open(tmp.path() + "/B", OpenMode::kCreate);
  ASSERT_TRUE(ds.ok());
  auto r = ImportBundle(**ds, v1, BundleCheckers{});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->added, 2);
  EXPECT_EQ(r->analyses_added, 0);
  const TrialRow t = *(*ds)->GetTrial(r->trial_ids[0]);
  EXPECT_EQ(t.arch, "simple_cnn");
  ASSERT_EQ(t.models.size(), 2u);
  EXPECT_TRUE((*ds)->LoadWeights(t.models[0].id).ok());
}

}  // namespace
}  // namespace xw
