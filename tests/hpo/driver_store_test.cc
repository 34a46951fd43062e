// The dataset side of a search: pending/failed rows
// (xwires/dataset/store/search_log.h) and SearchStore's resume reconciliation.
#include "driver_store.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "testing/temp_dir.h"
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

  testutil::TempDir tmp_{"xw_driver_store"};
  std::string dir_ = tmp_.Path("ds");
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

TEST_F(DriverStoreTest, AFinishedTrialKeepsItsPendingRowsId) {
  auto store = SearchStore::Create(dir_, Config());
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  const int64_t a = *(*store)->AddPending(1, {0.01, 40}, 1);
  const int64_t b = *(*store)->AddPending(2, {0.001, 10}, 1);
  const int64_t c = *(*store)->AddPending(0, {0.05, 20}, 1);
  EXPECT_EQ(std::vector<int64_t>({a, b, c}), std::vector<int64_t>({1, 2, 3}));
  // Finishing out of order changes no id.
  auto done_b = (*store)->AddDone(b, 2, {0.001, 10}, Pair(0.5, 0.375));
  ASSERT_TRUE(done_b.ok()) << done_b.status().ToString();
  EXPECT_EQ(*done_b, b);
  EXPECT_EQ(*(*store)->AddDone(a, 1, {0.01, 40}, Pair(0.5, 0.25)), a);
  ASSERT_TRUE((*store)->AddFailed(c, 0, {0.05, 20}, "boom").ok());
  // A row that is no longer pending cannot be completed again.
  EXPECT_EQ((*store)->AddDone(a, 1, {0.01, 40}, Pair(0.5, 0.25)).status().code(),
            Status::Code::kNotFound);
  const int64_t d = *(*store)->AddPending(3, {0.02, 30}, 1);
  EXPECT_EQ(d, 4);
  store->reset();

  auto ds = Dataset::Open(dir_, OpenMode::kReadOnly);
  ASSERT_TRUE(ds.ok());
  auto rows = (*ds)->Query(TrialQuery{});
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 4u);
  const char* status[] = {"ok", "ok", "failed", "pending"};
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ((*rows)[i].id, static_cast<int64_t>(i + 1));
    EXPECT_EQ((*rows)[i].status, status[i]);
  }
  EXPECT_EQ((*rows)[0].models.size(), 2u);
  EXPECT_EQ((*rows)[1].divergence, 0.125);
  ds->reset();
  auto report = Fsck(dir_, FsckOptions{});
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_TRUE(report->Clean()) << report->issues[0].kind;
}

TEST_F(DriverStoreTest, ResumeTellsFinishedTrialsInTheOrderTheyFinished) {
  int64_t search_id = 0, a = 0, b = 0, c = 0;
  {
    auto store = SearchStore::Create(dir_, Config());
    ASSERT_TRUE(store.ok());
    search_id = (*store)->search_id();
    a = *(*store)->AddPending(1, {0.01, 40}, 1);
    b = *(*store)->AddPending(2, {0.001, 10}, 1);
    c = *(*store)->AddPending(0, {0.05, 20}, 1);
    ASSERT_TRUE((*store)->AddDone(c, 0, {0.05, 20}, Pair(0.5, 0.5)).ok());
    ASSERT_TRUE((*store)->AddDone(a, 1, {0.01, 40}, Pair(0.5, 0.25)).ok());
  }
  {
    auto store = SearchStore::Resume(dir_, search_id);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    const auto& h = (*store)->history();
    ASSERT_EQ(h.size(), 3u);
    // Done rows in finishing order (c, then a), the pending one in place.
    EXPECT_EQ(h[0].id, c);
    EXPECT_EQ(h[0].finished, 0);
    EXPECT_EQ(h[1].id, b);
    EXPECT_EQ(h[1].status, "pending");
    EXPECT_EQ(h[2].id, a);
    EXPECT_EQ(h[2].finished, 1);
    // The resumed search finishes b as its third trial, under b's id.
    EXPECT_EQ(*(*store)->AddDone(b, 2, {0.001, 10}, Pair(0.5, 0.375)), b);
  }
  auto store = SearchStore::Resume(dir_, search_id);
  ASSERT_TRUE(store.ok());
  const auto& h = (*store)->history();
  ASSERT_EQ(h.size(), 3u);
  EXPECT_EQ(h[2].id, b);
  EXPECT_EQ(h[2].finished, 2);
}

TEST_F(DriverStoreTest, ResumeRemovesPendingRowsAFinishedTrialCompleted) {
  // Datasets written before finished trials took their pending row's id:
  // the finished row named its pending row, which was deleted after it.
  int64_t search_id = 0, p1 = 0, p2 = 0;
  {
    auto store = SearchStore::Create(dir_, Config());
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    search_id = (*store)->search_id();
    p1 = *(*store)->AddPending(1, {0.01, 40}, 1);
    p2 = *(*store)->AddPending(2, {0.001, 10}, 1);
  }
  {
    auto ds = Dataset::Open(dir_, OpenMode::kReadWrite);
    auto legacy_done = [&](int64_t pending, int subspace, std::vector<double> x, double b) {
      TrialRecord t = Pair(0.5, b);
      t.search_id = search_id;
      t.extra_json = internal::SearchExtraJson(subspace, x, pending, "abs_acc_diff");
      return (*ds)->AddTrial(t);
    };
    // p1 finished the old way: a new row naming it, then p1 deleted.
    ASSERT_TRUE(legacy_done(p1, 1, {0.01, 40}, 0.25).ok());
    ASSERT_TRUE(DeletePendingTrial(**ds, p1).ok());
    // A crash between the old way's two writes: the finished row names p2
    // as the row it completes, and p2 is still there.
    ASSERT_TRUE(legacy_done(p2, 2, {0.001, 10}, 0.375).ok());
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
