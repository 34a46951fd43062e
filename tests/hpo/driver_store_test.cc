// The dataset side of a search: pending/failed rows
// (xwires/dataset/store/search_log.h) and SearchStore's resume reconciliation.
#include "driver_store.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "xwires/dataset/query/query.h"
#include "xwires/dataset/store/dataset.h"
#include "xwires/dataset/store/fsck.h"
#include "xwires/dataset/store/search_log.h"

namespace xw::hpo {
namespace {

namespace fs = std::filesystem;
using internal::SearchStore;

class DriverStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (fs::temp_directory_path() /
            ("xw_driver_store_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name()))
               .string();
    fs::remove_all(dir_);
  }
  void TearDown() override {
    if (!getenv("KEEP")) fs::remove_all(dir_);
  }

  static DriverConfig Config() {
    auto c = ParseDriverConfigJson(R"({
        "arch": "mlp",
        "dimensions": [{"name": "lr", "low": 1e-4, "high": 0.1, "log": true},
                       {"name": "batch_size", "type": "integer", "low": 8, "high": 64}]})");
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return *c;
  }

  // A finished pair as the driver stores it (no weights needed here).
  static TrialRecord Pair(double acc_a, double acc_b) {
    TrialRecord t;
    t.arch = "mlp";
    t.data_spec = "synthetic";
    for (const char* p : {"torch", "tf"}) {
      ModelRecord m;
      m.profile = p;
      m.test_acc = std::string(p) == "torch" ? acc_a : acc_b;
      t.models.push_back(m);
    }
    t.divergence = std::fabs(acc_a - acc_b);
    t.extra_json = "{\"objectives\": {\"abs_acc_diff\": " + std::to_string(t.divergence) + "}}";
    return t;
  }

  std::string dir_;
};

TEST_F(DriverStoreTest, SearchLogRowLifeCycle) {
  auto ds = Dataset::Open(dir_, OpenMode::kCreate);
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  TrialRecord t;
  t.arch = "mlp";
  t.lr = 0.01;
  t.batch_size = 16;
  t.extra_json = R"({"search": {"subspace": 0, "point": [0.01, 16]}})";
  auto a = AddPendingTrial(**ds, t);
  auto b = AddPendingTrial(**ds, t);
  ASSERT_TRUE(a.ok() && b.ok());
  auto row = (*ds)->GetTrial(*a);
  ASSERT_TRUE(row.ok());
  EXPECT_EQ(row->status, "pending");
  EXPECT_EQ(row->lr, 0.01);
  EXPECT_TRUE(row->models.empty());
  EXPECT_TRUE(std::isnan(row->divergence));

  ASSERT_TRUE(MarkTrialFailed(**ds, *a, R"({"error": "boom"})").ok());
  EXPECT_EQ((*ds)->GetTrial(*a)->status, "failed");
  EXPECT_EQ((*ds)->GetTrial(*a)->extra_json, R"({"error": "boom"})");
  // Only pending rows change.
  EXPECT_EQ(MarkTrialFailed(**ds, *a, "{}").code(), Status::Code::kNotFound);
  EXPECT_EQ(DeletePendingTrial(**ds, *a).code(), Status::Code::kNotFound);
  ASSERT_TRUE(DeletePendingTrial(**ds, *b).ok());
  EXPECT_EQ((*ds)->GetTrial(*b).status().code(), Status::Code::kNotFound);

  // Bad rows are refused and nothing is written.
  TrialRecord bad = t;
  bad.models.push_back({});
  EXPECT_EQ(AddPendingTrial(**ds, bad).status().code(),
            Status::Code::kInvalidArgument);
  bad = t;
  bad.extra_json = "[1]";
  EXPECT_EQ(AddPendingTrial(**ds, bad).status().code(),
            Status::Code::kInvalidArgument);
  EXPECT_EQ(*(*ds)->Count(TrialQuery{}), 1);

  // The rows are consistent for fsck (rtree boxes present).
  auto report = Fsck(dir_, FsckOptions{});
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_TRUE(report->Clean()) << report->issues[0].kind;
}

TEST_F(DriverStoreTest, ResumeRemovesPendingRowsAFinishedTrialCompleted) {
  int64_t search_id = 0, p1 = 0, p2 = 0;
  {
    auto store = SearchStore::Create(dir_, Config());
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    search_id = (*store)->search_id();
    p1 = *(*store)->AddPending(1, {0.01, 40}, 1);
    p2 = *(*store)->AddPending(2, {0.001, 10}, 1);
    auto done = (*store)->AddDone(p1, 1, {0.01, 40}, Pair(0.5, 0.25));
    ASSERT_TRUE(done.ok()) << done.status().ToString();
  }
  {
    // A crash between AddTrial and the deletion of the pending row: the
    // finished row names p2 as the row it completes, and p2 is still there.
    auto ds = Dataset::Open(dir_, OpenMode::kReadWrite);
    TrialRecord t = Pair(0.5, 0.375);
    t.search_id = search_id;
    t.extra_json =
        internal::SearchExtraJson(2, {0.001, 10}, p2, "abs_acc_diff");
    ASSERT_TRUE((*ds)->AddTrial(t).ok());
    EXPECT_EQ((*ds)->GetTrial(p2)->status, "pending");
  }
  auto store = SearchStore::Resume(dir_, search_id);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  const auto& h = (*store)->history();
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(h[0].status, "done");
  EXPECT_EQ(h[0].objective, 0.25);
  EXPECT_EQ(h[0].pending_ref, p1);
  EXPECT_EQ(h[1].status, "done");
  EXPECT_EQ(h[1].pending_ref, p2);
  EXPECT_EQ(h[1].x, (std::vector<double>{0.001, 10}));
  auto ds = Dataset::Open(dir_, OpenMode::kReadOnly);
  EXPECT_EQ((*ds)->GetTrial(p2).status().code(), Status::Code::kNotFound);
  EXPECT_EQ(*(*ds)->Count(TrialQuery{}), 2);
}

TEST_F(DriverStoreTest, FailedAndPendingRowsSurviveResume) {
  int64_t search_id = 0;
  {
    auto store = SearchStore::Create(dir_, Config());
    ASSERT_TRUE(store.ok());
    search_id = (*store)->search_id();
    int64_t a = *(*store)->AddPending(0, {0.001, 8}, 1);
    ASSERT_TRUE((*store)->AddFailed(a, 0, {0.001, 8}, "out of memory").ok());
    (void)*(*store)->AddPending(3, {0.05, 60}, 2);
  }
  auto store = SearchStore::Resume(dir_, search_id);
  ASSERT_TRUE(store.ok());
  const auto& h = (*store)->history();
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(h[0].status, "failed");
  EXPECT_EQ(h[1].status, "pending");
  EXPECT_EQ(h[1].subspace, 3);
  auto ds = Dataset::Open(dir_, OpenMode::kReadOnly);
  auto failed = (*ds)->GetTrial(h[0].id);
  EXPECT_NE(failed->extra_json.find("out of memory"), std::string::npos);
  auto pending = (*ds)->GetTrial(h[1].id);
  EXPECT_EQ(pending->batch_size, 60);
  EXPECT_NE(pending->hparams_json.find("\"threads\":2"), std::string::npos);
}

TEST_F(DriverStoreTest, ResumeOfAMissingSearchIsNotFound) {
  ASSERT_TRUE(SearchStore::Create(dir_, Config()).ok());
  auto r = SearchStore::Resume(dir_, 99);
  EXPECT_EQ(r.status().code(), Status::Code::kNotFound);
  EXPECT_NE(r.status().message().find("99"), std::string::npos);
  EXPECT_EQ(SearchStore::Resume(dir_ + "/nope", 1).status().code(),
            Status::Code::kNotFound);
}

}  // namespace
}  // namespace xw::hpo
