// Analysis tables: round trip, datasets without them, refusals that leave
// the dataset's files untouched.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "analysis_test_util.h"
#include "xwires/api/analysis_store.h"

namespace xw {
namespace {

using testing::ReadFile;
using testing::TempDir;

class AnalysisStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto ds = Dataset::Open(dir_.path() + "/ds", OpenMode::kCreate);
    ASSERT_TRUE(ds.ok());
    TrialRecord t;
    t.arch = "mlp";
    t.data_spec = "synthetic";
    t.divergence = 0.25;
    for (const char* name : {"a", "b"}) {
      ModelRecord m;
      m.profile = name;
      m.external = true;
      m.test_acc = name[0] == 'a' ? 0.5 : 0.75;
      t.models.push_back(m);
    }
    auto id = (*ds)->AddTrial(t);
    ASSERT_TRUE(id.ok()) << id.status().ToString();
    trial_ = *id;
    ds_ = std::move(ds).value();
  }

  AnalysisResultRow Row(const std::string& kind) const {
    AnalysisResultRow r;
    r.trial_id = trial_;
    r.kind = kind;
    r.summary = "summary";
    r.result_json = R"({"profiles": ["a", "b"]})";
    return r;
  }

  TempDir dir_;
  std::unique_ptr<Dataset> ds_;
  int64_t trial_ = 0;
};

TEST_F(AnalysisStoreTest, FreshDatasetHasNoResults) {
  auto r = LoadAnalysisResults(*ds_, -1);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->empty());
}

TEST_F(AnalysisStoreTest, RoundTripWithRuns) {
  AnalysisResultRow row = Row("attribute");
  row.runs.push_back({"", "baseline", "torch", "", "ok", 0.5, 1.25, "abc"});
  row.runs.push_back({"adam.variant", "a_to_b", "torch+adam.variant",
                      "\"keras\"", "diverged", kUnknown, kUnknown, "def"});
  auto id = StoreAnalysisResult(*ds_, row);
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  ASSERT_TRUE(StoreAnalysisResult(*ds_, Row("compare")).ok());
  auto all = LoadAnalysisResults(*ds_, trial_);
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 2u);
  const AnalysisResultRow& a = (*all)[0];
  EXPECT_EQ(a.id, *id);
  EXPECT_EQ(a.kind, "attribute");
  EXPECT_EQ(a.result_json, row.result_json);
  EXPECT_FALSE(a.created_at.empty());
  ASSERT_EQ(a.runs.size(), 2u);
  EXPECT_EQ(a.runs[0].test_acc, 0.5);
  EXPECT_EQ(a.runs[0].test_loss, 1.25);
  EXPECT_EQ(a.runs[1].value_json, "\"keras\"");
  EXPECT_TRUE(std::isnan(a.runs[1].test_acc));  // unknown stays unknown
  EXPECT_EQ(LoadAnalysisResults(*ds_, trial_, "compare")->size(), 1u);
  EXPECT_EQ(LoadAnalysisResults(*ds_, trial_ + 1)->size(), 0u);
  // The dataset itself still opens and reads normally next to our tables.
  ds_.reset();
  auto again = Dataset::Open(dir_.path() + "/ds", OpenMode::kReadOnly);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_TRUE((*again)->GetTrial(trial_).ok());
  EXPECT_EQ(LoadAnalysisResults(**again, -1)->size(), 2u);
}

TEST_F(AnalysisStoreTest, RefusalsNameTheProblemAndChangeNothing) {
  ASSERT_TRUE(StoreAnalysisResult(*ds_, Row("compare")).ok());
  ds_.reset();
  const std::string db = dir_.path() + "/ds/xwires.db";
  {
    auto rw = Dataset::Open(dir_.path() + "/ds", OpenMode::kReadWrite);
    ASSERT_TRUE(rw.ok());
    AnalysisResultRow bad = Row("verify");
    auto r = StoreAnalysisResult(**rw, bad);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("'verify'"), std::string::npos);
    bad = Row("compare");
    bad.result_json = "{not json";
    EXPECT_EQ(StoreAnalysisResult(**rw, bad).status().code(),
              Status::Code::kInvalidArgument);
    bad = Row("compare");
    bad.trial_id = trial_ + 7;
    EXPECT_EQ(StoreAnalysisResult(**rw, bad).status().code(),
              Status::Code::kNotFound);
  }
  const std::string before = ReadFile(db);
  auto ro = Dataset::Open(dir_.path() + "/ds", OpenMode::kReadOnly);
  ASSERT_TRUE(ro.ok());
  auto r = StoreAnalysisResult(**ro, Row("compare"));
  EXPECT_EQ(r.status().code(), Status::Code::kFailedPrecondition);
  EXPECT_EQ(LoadAnalysisResults(**ro, -1)->size(), 1u);
  ro->reset();
  EXPECT_EQ(ReadFile(db), before);
}

}  // namespace
}  // namespace xw
