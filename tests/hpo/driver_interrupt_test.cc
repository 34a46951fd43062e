// DriverOptions::should_stop: a search stopped by its caller ends Cancelled
// with its running trials left pending and status "interrupted"; a resume
// re-trains them and completes the budget, losing and repeating nothing.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <utility>

#include "testing/search_rows.h"
#include "testing/temp_dir.h"
#include "xwires/dataset/query/query.h"
#include "xwires/dataset/store/dataset.h"
#include "xwires/hpo/search_driver.h"

namespace xw::hpo {
namespace {

namespace fs = std::filesystem;

// 4 subspaces (lr x epochs) of 2 trials; an mlp on 200 images.
DriverConfig TinyConfig() {
  auto c = ParseDriverConfigJson(R"({
      "arch": "mlp", "data": {"train_limit": 200, "test_limit": 100},
      "dimensions": [{"name": "lr", "low": 1e-4, "high": 0.1, "log": true},
                     {"name": "epochs", "type": "integer", "low": 1, "high": 2}],
      "train": {"width": 0.125, "batch_size": 50},
      "trials_per_subspace": 2, "budget": {"max_seconds": 0}})");
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return *c;
}

std::string SearchStatus(const std::string& dir) {
  auto ds = Dataset::Open(dir, OpenMode::kReadOnly);
  auto searches = (*ds)->Searches();
  return searches.ok() && searches->size() == 1 ? (*searches)[0].record.status : "?";
}

TEST(DriverInterruptTest, StopLeavesPendingRowsAndResumeFinishes) {
  testutil::TempDir tmp("xw_driver_interrupt");
  const std::string dir = tmp.Path("ds");
  DriverOptions o;
  o.dataset_dir = dir;
  o.jobs = 2;
  o.threads = 2;
  int ended = 0, polls_after_stop = 0;
  o.on_progress = [&](const SearchProgress& p) { ended += p.trial_id != 0; };
  o.should_stop = [&] {
    polls_after_stop += ended >= 1;
    return ended >= 1;
  };
  auto cluster = LocalCluster();
  auto stopped = RunSearch(TinyConfig(), o, *cluster);
  ASSERT_FALSE(stopped.ok());
  EXPECT_EQ(stopped.status().code(), Status::Code::kCancelled) << stopped.status().ToString();
  EXPECT_NE(stopped.status().message().find("search 1 was interrupted"), std::string::npos);
  EXPECT_GE(polls_after_stop, 1);
  EXPECT_EQ(SearchStatus(dir), "interrupted");
  std::set<int64_t> done_before;
  int pending = 0;
  for (const TrialRow& r : testutil::SearchTrials(dir)) {
    if (r.status == "pending") ++pending;
    if (r.status == "ok" || r.status == "diverged") done_before.insert(r.id);
    EXPECT_NE(r.status, "failed") << "trial " << r.id;
  }
  EXPECT_GE(done_before.size(), 1u);
  EXPECT_LT(done_before.size() + pending, 8u);  // it stopped early

  o.should_stop = nullptr;
  o.resume_id = 1;
  auto resumed = RunSearch(TinyConfig(), o, *cluster);
  ASSERT_TRUE(resumed.ok()) << resumed.status().ToString();
  EXPECT_EQ(resumed->status, "done");
  EXPECT_EQ(resumed->finished, 8);
  EXPECT_EQ(resumed->failed, 0);
  EXPECT_EQ(SearchStatus(dir), "done");
  std::set<std::pair<double, int64_t>> points;
  std::set<int64_t> ids;
  for (const TrialRow& r : testutil::SearchTrials(dir)) {
    EXPECT_TRUE(r.status == "ok" || r.status == "diverged") << r.id << " " << r.status;
    points.insert({r.lr, r.epochs.value_or(-1)});
    ids.insert(r.id);
  }
  EXPECT_EQ(points.size(), 8u);  // nothing repeated
  for (int64_t id : done_before) EXPECT_TRUE(ids.count(id)) << id;  // nothing lost
}

}  // namespace
}  // namespace xw::hpo
