// Stored analyses (xwires/dataset/store/analysis.h): round trip in canonical form,
// the rules with their messages and untouched files, deletion with their
// trials (fsck --repair), and the in-place upgrade of a schema-1 dataset
// whose analyses the api module kept in its own tables.
#include <gtest/gtest.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include <cmath>
#include <filesystem>
#include <functional>
#include <fstream>
#include <sstream>

#include "testing/cli_runner.h"
#include "testing/file_tree.h"
#include "testing/temp_dir.h"
#include "xwires/dataset/query/query.h"
#include "xwires/dataset/store/analysis.h"
#include "xwires/dataset/store/dataset.h"
#include "xwires/dataset/store/fsck.h"

namespace xw {
namespace {

namespace fs = std::filesystem;

TrialRecord Pair(double lr, bool curves) {
  TrialRecord t;
  t.arch = "mlp";
  t.data_spec = "synthetic";
  t.lr = lr;
  t.batch_size = 32;
  t.divergence = 0.25;
  for (const char* name : {"a", "b"}) {
    ModelRecord m;
    m.profile = name;
    m.external = true;
    m.test_acc = name[0] == 'a' ? 0.5 : 0.75;
    if (curves) m.curves = {{1, 2.0, 1.9, 0.2, 2.1, m.test_acc}};
    t.models.push_back(m);
  }
  return t;
}

AnalysisRecord Attribution(int64_t trial) {
  AnalysisRecord a;
  a.kind = "attribute";
  a.trial_ids = {trial};
  a.summary = "main knob adam.variant";
  a.result_json = "{\n  \"main_knobs\": [\"adam.variant\"],\n  \"d0\": 0.25\n}";
  a.runs.push_back({"", "baseline", "a", "", "ok", 0.5, 1.25,
                    std::string(64, 'a')});
  a.runs.push_back({"adam.variant", "a_to_b", "a+adam.variant",
                    "\"keras\"", "diverged", kUnknown, INFINITY, ""});
  return a;
}

class AnalysisStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = tmp_.path() + "/ds";
    auto ds = Dataset::Open(dir_, OpenMode::kCreate);
    ASSERT_TRUE(ds.ok());
    trial_ = *(*ds)->AddTrial(Pair(0.01, true));
    other_ = *(*ds)->AddTrial(Pair(0.02, true));
    ds_ = std::move(ds).value();
  }

  testutil::TempDir tmp_;
  std::string dir_;
  std::unique_ptr<Dataset> ds_;
  int64_t trial_ = 0, other_ = 0;
};

TEST_F(AnalysisStoreTest, RoundTripInCanonicalForm) {
  EXPECT_TRUE(LoadAnalyses(*ds_)->empty());
  auto id = StoreAnalysis(*ds_, Attribution(trial_));
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  AnalysisRecord mi;
  mi.kind = "mi";
  mi.trial_ids = {other_, trial_};
  mi.created_at = "2026-01-02T03:04:05Z";
  mi.toolkit = "xwires 9.9";
  mi.result_json = R"({"rows": [], "estimator": "binned"})";
  ASSERT_TRUE(StoreAnalysis(*ds_, mi).ok());
  auto all = LoadAnalyses(*ds_);
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  ASSERT_EQ(all->size(), 2u);
  const AnalysisRecord& a = (*all)[0];
  EXPECT_EQ(a.id, *id);
  EXPECT_EQ(a.kind, "attribute");
  EXPECT_EQ(a.trial_ids, std::vector<int64_t>{trial_});
  EXPECT_EQ(a.result_json, R"({"d0":0.25,"main_knobs":["adam.variant"]})");
  EXPECT_EQ(a.created_at.size(), 20u);
  EXPECT_EQ(a.toolkit.rfind("xwires ", 0), 0u);
  ASSERT_EQ(a.runs.size(), 2u);
  EXPECT_EQ(a.runs[0].test_loss, 1.25);
  EXPECT_EQ(a.runs[1].value_json, "\"keras\"");
  EXPECT_TRUE(std::isnan(a.runs[1].test_acc));  // unknown stays unknown
  EXPECT_EQ(a.runs[1].test_loss, INFINITY);  // a diverged run keeps its inf
  const AnalysisRecord& m = (*all)[1];
  EXPECT_EQ(m.trial_ids, (std::vector<int64_t>{trial_, other_}));
  EXPECT_EQ(m.created_at, "2026-01-02T03:04:05Z");
  EXPECT_EQ(m.toolkit, "xwires 9.9");
  EXPECT_EQ(m.result_json, R"({"estimator":"binned","rows":[]})");
  EXPECT_EQ(LoadAnalyses(*ds_, other_)->size(), 1u);
  EXPECT_EQ(LoadAnalyses(*ds_, trial_, "attribute")->size(), 1u);
  EXPECT_EQ(LoadAnalyses(*ds_, other_, "compare")->size(), 0u);
}

TEST_F(AnalysisStoreTest, BadResultsAreRefusedByNameAndChangeNothing) {
  ASSERT_TRUE(StoreAnalysis(*ds_, Attribution(trial_)).ok());
  ds_.reset();
  const std::string before = testutil::HashTree(dir_);
  struct Case {
    std::function<void(AnalysisRecord&)> edit;
    Status::Code code;
    std::string message;
  };
  const std::vector<Case> cases = {
      {[](AnalysisRecord& a) { a.kind = "verify"; },
       Status::Code::kInvalidArgument, "kind 'verify'"},
      {[&](AnalysisRecord& a) { a.trial_ids.push_back(other_); },
       Status::Code::kInvalidArgument, "exactly one trial, not 2"},
      {[](AnalysisRecord& a) { a.result_json = "[1, 2]"; },
       Status::Code::kInvalidArgument, "result_json is not a JSON object"},
      {[](AnalysisRecord& a) { a.created_at = "yesterday"; },
       Status::Code::kInvalidArgument, "created_at 'yesterday'"},
      {[](AnalysisRecord& a) { a.runs[0].test_acc = 1.5; },
       Status::Code::kInvalidArgument, "run 0: test_acc 1.5 is not an accuracy"},
      {[](AnalysisRecord& a) { a.runs[0].test_loss = -INFINITY; },
       Status::Code::kInvalidArgument, "run 0: test_loss -inf is not finite"},
      {[](AnalysisRecord& a) { a.runs[1].direction = "sideways"; },
       Status::Code::kInvalidArgument, "run 1: direction 'sideways'"},
      {[](AnalysisRecord& a) { a.runs[0].weights_sha256 = "abc"; },
       Status::Code::kInvalidArgument, "weights_sha256 must be empty or 64"},
      {[](AnalysisRecord& a) { a.kind = "compare"; },
       Status::Code::kInvalidArgument, "compare result has no runs"},
      {[](AnalysisRecord& a) { a.trial_ids = {4242}; },
       Status::Code::kNotFound, "no trial with id 4242"},
  };
  {
    auto rw = Dataset::Open(dir_, OpenMode::kReadWrite);
    ASSERT_TRUE(rw.ok());
    for (const Case& c : cases) {
      AnalysisRecord a = Attribution(trial_);
      c.edit(a);
      auto r = StoreAnalysis(**rw, a);
      ASSERT_FALSE(r.ok()) << c.message;
      EXPECT_EQ(r.status().code(), c.code) << r.status().ToString();
      EXPECT_NE(r.status().message().find(c.message), std::string::npos)
          << "'" << c.message << "' not in: " << r.status().message();
    }
  }
  {
    auto ro = Dataset::Open(dir_, OpenMode::kReadOnly);
    ASSERT_TRUE(ro.ok());
    EXPECT_EQ(StoreAnalysis(**ro, Attribution(trial_)).status().code(),
              Status::Code::kFailedPrecondition);
  }
  EXPECT_EQ(testutil::HashTree(dir_), before);
  // A good result next to them is stored.
  auto rw = Dataset::Open(dir_, OpenMode::kReadWrite);
  ASSERT_TRUE(rw.ok());
  ASSERT_TRUE(StoreAnalysis(**rw, Attribution(other_)).ok());
  EXPECT_EQ(LoadAnalyses(**rw)->size(), 2u);
}

TEST_F(AnalysisStoreTest, ResultsGoWithTheirTrials) {
  ASSERT_TRUE(StoreAnalysis(*ds_, Attribution(trial_)).ok());
  ASSERT_TRUE(StoreAnalysis(*ds_, Attribution(other_)).ok());
  AnalysisRecord mi;
  mi.kind = "mi";
  mi.trial_ids = {trial_, other_};
  mi.result_json = "{}";
  ASSERT_TRUE(StoreAnalysis(*ds_, mi).ok());
  // fsck --repair deletes a trial whose HDF5 bundle is gone.
  const std::string file = ds_->GetTrial(trial_)->models[0].h5_file;
  ds_.reset();
  fs::remove(dir_ + "/" + file);
  FsckOptions o;
  o.repair = true;
  auto r = Fsck(dir_, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto ds = Dataset::Open(dir_, OpenMode::kReadOnly);
  ASSERT_TRUE(ds.ok());
  EXPECT_FALSE((*ds)->GetTrial(trial_).ok());
  const auto left = *LoadAnalyses(**ds);
  ASSERT_EQ(left.size(), 1u);  // the mi result described the deleted trial
  EXPECT_EQ(left[0].trial_ids, std::vector<int64_t>{other_});
  EXPECT_EQ(left[0].runs.size(), 2u);
  SQLite::Database db(dir_ + "/xwires.db");
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM analysis_runs").getInt(), 2);
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM trials_near").getInt(), 1);
}

TEST_F(AnalysisStoreTest, FsckReportsStoredResultsThatBreakTheRules) {
  const int64_t id = *StoreAnalysis(*ds_, Attribution(trial_));
  ds_.reset();
  {
    SQLite::Database db(dir_ + "/xwires.db", SQLite::OPEN_READWRITE);
    db.exec("UPDATE analysis_runs SET test_acc = 2.0 WHERE direction = "
            "'baseline'");
  }
  const std::string before = testutil::HashTree(dir_);
  auto r = Fsck(dir_, {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->Clean());
  ASSERT_EQ(r->issues.size(), 1u);
  EXPECT_EQ(r->issues[0].kind, "invalid-analysis");
  EXPECT_EQ(r->issues[0].trial_id, trial_);
  EXPECT_EQ(r->issues[0].detail,
            "analysis " + std::to_string(id) +
                ": run 0: test_acc 2 is not an accuracy in [0, 1]");
  EXPECT_EQ(testutil::HashTree(dir_), before);
}

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(AnalysisMigration, SchemaOneDatasetIsUpgradedInPlace) {
  testutil::TempDir tmp;
  const std::string dir = tmp.path() + "/v1";
  fs::create_directories(dir);
  std::vector<std::string> legacy;
  {
    SQLite::Database db(dir + "/xwires.db",
                        SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    db.exec(ReadText(std::string(XWIRES_SOURCE_DIR) +
                     "/tests/fixtures/format_v1/dataset_v1.sql"));
    SQLite::Statement st(db,
                         "SELECT result_json FROM analysis_results ORDER BY id");
    while (st.executeStep()) legacy.push_back(st.getColumn(0).getString());
  }
  ASSERT_EQ(legacy.size(), 2u);
  const std::string before = testutil::HashTree(dir);
  auto q = testutil::Xwires("query " + testutil::ShellQuote(dir));
  EXPECT_EQ(q.exit_code, 2);
  EXPECT_NE(q.err.find("schema version 1 needs migrating to 4; run `xwires "
                       "migrate`"),
            std::string::npos)
      << q.err;
  EXPECT_EQ(testutil::HashTree(dir), before);  // reading changed nothing
  auto m = testutil::Xwires("migrate " + testutil::ShellQuote(dir));
  EXPECT_EQ(m.exit_code, 0) << m.err;
  EXPECT_NE(m.out.find("migrated to schema version 4"), std::string::npos)
      << m.out;
  m = testutil::Xwires("migrate " + testutil::ShellQuote(dir));
  EXPECT_NE(m.out.find("schema version 4, current"), std::string::npos)
      << m.out;

  auto ds = Dataset::Open(dir, OpenMode::kReadWrite);
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  EXPECT_EQ((*ds)->schema_version(), 4);
  const auto analyses = *LoadAnalyses(**ds);
  ASSERT_EQ(analyses.size(), 2u);
  EXPECT_EQ(analyses[0].kind, "compare");
  EXPECT_EQ(analyses[0].trial_ids, std::vector<int64_t>{1});
  EXPECT_EQ(analyses[0].result_json, legacy[0]);  // moved, not rewritten
  EXPECT_EQ(analyses[0].created_at, "2026-11-24T19:35:10Z");
  EXPECT_EQ(analyses[0].toolkit, "xwires 0.1.0");
  EXPECT_EQ(analyses[1].kind, "attribute");
  EXPECT_EQ(analyses[1].trial_ids, std::vector<int64_t>{2});
  EXPECT_EQ(analyses[1].result_json, legacy[1]);
  ASSERT_EQ(analyses[1].runs.size(), 4u);
  EXPECT_EQ(analyses[1].runs[0].direction, "baseline");
  for (const AnalysisRecord& a : analyses) {
    EXPECT_TRUE(CheckAnalysis(a, "migrated").ok());
  }
  ds->reset();
  SQLite::Database db(dir + "/xwires.db");
  for (const char* old :
       {"analysis_results", "attribution_runs", "analysis_schema_version"}) {
    EXPECT_FALSE(db.tableExists(old)) << old;
  }
  // The near index covers the existing trials.
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM trials_near").getInt(), 2);
  EXPECT_EQ(db.execAndGet("SELECT sum(n) FROM trials_near_bounds").getInt(), 2);
  auto again = Dataset::Open(dir, OpenMode::kReadOnly);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  NearTarget t = *ParseNearTarget("lr=0.01,batch_size=32");
  t.method = NearMethod::kIndex;
  auto near = (*again)->Near(t, {});
  ASSERT_TRUE(near.ok()) << near.status().ToString();
  ASSERT_EQ(near->size(), 2u);
  EXPECT_EQ((*near)[0].trial.id, 1);  // equidistant: by id
  EXPECT_EQ((*near)[1].trial.id, 2);
}

}  // namespace
}  // namespace xw
