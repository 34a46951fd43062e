// A search has one writer, and a resumed search is the uninterrupted one:
// a second `--resume` of a running search is refused naming the holder
// (exit 2) and trains nothing, a lease left by a process killed with -9 is
// taken over, fsck flags two trials of one search at one point, and a
// gp_hedge search over 4 subspaces killed with -9 twice and resumed stores
// exactly the trials (points and divergences) of the uninterrupted run.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "testing/cli_runner.h"
#include "testing/command_test.h"
#include "testing/search_rows.h"
#include "xwires/dataset/query/query.h"
#include "xwires/dataset/store/dataset.h"
#include "xwires/dataset/store/fsck.h"

namespace xw {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using testutil::WaitExit;

// 2 dimensions -> 4 subspaces of gp_hedge optimisers, GP-guided from each
// subspace's third trial; a tiny mlp per trial (a fraction of a second).
// A large eta makes the portfolio all but pick its best arm, where equal
// gains (a portfolio lost on resume) pick any: a lost portfolio shows.
std::string HedgeConfig(int per_subspace, const std::string& objective = "abs_acc_diff") {
  json c = {{"arch", "mlp"},
            {"data", {{"train_limit", 400}, {"test_limit", 100}}},
            {"dimensions",
             {{{"name", "lr"}, {"type", "real"}, {"low", 1e-4}, {"high", 0.1}, {"log", true}},
              {{"name", "epochs"}, {"type", "integer"}, {"low", 1}, {"high", 3}}}},
            {"train", {{"width", 0.125}, {"batch_size", 50}}},
            {"acquisition", "gp_hedge"},
            {"objective", objective},
            {"eta", 1000},
            {"n_initial_points", 2},
            {"trials_per_subspace", per_subspace},
            {"budget", {{"max_seconds", 0}}}};
  return c.dump();
}

class SearchWriterTest : public testutil::CommandTest {
 protected:
  void SetUp() override { std::ofstream(Path("c.json")) << HedgeConfig(6); }

  // Starts `xwires args...` logging to `log`.out and `log`.err.
  pid_t Spawn(const std::vector<std::string>& args, const std::string& log) const {
    return SpawnXwires(args, log);
  }

  std::vector<TrialRow> Trials(const std::string& ds, bool must = true) const {
    return testutil::SearchTrials(Path(ds), must);
  }
  size_t Finished(const std::string& ds) const {
    size_t n = 0;
    for (const TrialRow& r : Trials(ds, false)) n += r.status == "ok" || r.status == "diverged";
    return n;
  }
  // Waits until `ds` holds at least n finished trials of search 1.
  void WaitFinished(const std::string& ds, size_t n) const {
    for (int i = 0; i < 2400 && Finished(ds) < n; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  // The finished trials in the order they were proposed (a finished trial
  // keeps its pending row's id): subspace, point and divergence, bit for bit.
  std::vector<std::string> Sequence(const std::string& ds) const {
    std::map<int64_t, std::string> by_ask;
    for (const TrialRow& r : Trials(ds)) {
      EXPECT_TRUE(r.status == "ok" || r.status == "diverged") << r.id << " " << r.status;
      const json s = json::parse(r.extra_json)["search"];
      char div[40];
      std::snprintf(div, sizeof div, "%a", r.divergence);
      by_ask[r.id] =
          s["subspace"].dump() + " " + s["point"].dump() + " " + div;
    }
    std::vector<std::string> out;
    for (const auto& [ask, text] : by_ask) out.push_back(text);
    return out;
  }
  static void ExpectFsckClean(const std::string& ds) {
    auto r = Fsck(ds, FsckOptions{});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    for (const FsckIssue& i : r->issues) ADD_FAILURE() << i.kind << ": " << i.detail;
  }
};

TEST_F(SearchWriterTest, SecondWriterIsRefusedAndADeadOnesLeaseIsTakenOver) {
  const std::string ds = Path("ds");
  // The default two-stage search: its replicas keep the first writer busy
  // while the second tries to resume.
  std::ofstream(Path("c2.json")) << HedgeConfig(6, "significant_diff");
  const pid_t first = Spawn({"search", "--config", Path("c2.json"), "--dataset", ds, "--jobs",
                             "1", "--threads", "1", "--quiet"},
                            "first");
  WaitFinished("ds", 1);
  const size_t rows_before = Trials("ds").size();
  // A concurrent resume of the running search: refused, nothing trained.
  const pid_t second = Spawn({"search", "--dataset", ds, "--resume", "1", "--quiet"}, "second");
  EXPECT_EQ(WaitExit(second), 2) << Read("second.err");
  const std::string err = Read("second.err");
  EXPECT_NE(err.find("xwires: error: " + ds + ": search 1 is being written by another process "
                     "(pid " + std::to_string(first) + " on host "),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("a search has one writer"), std::string::npos) << err;
  // Nothing of the second's is stored: the first's trials keep growing from
  // rows_before, and every point below is stored once (a second writer would
  // have retrained the first's pending point).
  EXPECT_GE(Trials("ds").size(), rows_before);

  // The holder dies with -9 mid-search; its lease is taken over.
  WaitFinished("ds", 3);
  ASSERT_EQ(kill(first, SIGKILL), 0);
  ASSERT_EQ(WaitExit(first), 128 + SIGKILL);
  ASSERT_LT(Finished("ds"), 24u) << "the search finished before it was killed";
  const pid_t third = Spawn({"search", "--dataset", ds, "--resume", "1", "--quiet"}, "third");
  EXPECT_EQ(WaitExit(third), 0) << Read("third.err");
  const auto rows = Trials("ds");
  EXPECT_EQ(rows.size(), 24u);
  std::set<std::string> points;
  for (const TrialRow& r : rows) {
    const json s = json::parse(r.extra_json)["search"];
    EXPECT_TRUE(points.insert(s["subspace"].dump() + s["point"].dump()).second) << s.dump();
  }
  ExpectFsckClean(ds);

  // fsck flags a trial stored twice for one point (as two writers would).
  {
    SQLite::Database db(ds + "/xwires.db", SQLite::OPEN_READWRITE);
    db.exec(
        "INSERT INTO trials (created_at, arch, data_spec, status, lr, adam_eps, beta1, beta2, "
        "weight_decay, batch_size, epochs, seed, divergence, hparams_json, extra_json, "
        "search_id, provenance_id, external_id) SELECT created_at, arch, data_spec, 'failed', "
        "lr, adam_eps, beta1, beta2, weight_decay, batch_size, epochs, seed, NULL, "
        "hparams_json, extra_json, search_id, provenance_id, external_id FROM trials WHERE "
        "id = " + std::to_string(rows[4].id));
  }
  auto r = Fsck(ds, FsckOptions{});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  bool found = false;
  for (const FsckIssue& i : r->issues) {
    if (i.kind != "duplicate-point") continue;
    found = true;
    EXPECT_NE(i.detail.find("search 1: trials " + std::to_string(rows[4].id) + " and "),
              std::string::npos)
        << i.detail;
    EXPECT_NE(i.detail.find("(two writers ran the search)"), std::string::npos) << i.detail;
  }
  EXPECT_TRUE(found);
  EXPECT_FALSE(r->Clean());
}

// The gp_hedge portfolio (gains and last proposals of every subspace) is
// stored with each trial, so kills at two moments (one with a trial
// pending) and resumes give the uninterrupted run's trials bit for bit.
TEST_F(SearchWriterTest, KilledAndResumedHedgeSearchIsTheUninterruptedRun) {
  const std::vector<std::string> common = {"--jobs", "1", "--threads", "1", "--quiet",
                                           "--top", "0"};
  std::vector<std::string> argv = {"search", "--config", Path("c.json"), "--dataset",
                                   Path("whole")};
  argv.insert(argv.end(), common.begin(), common.end());
  ASSERT_EQ(WaitExit(Spawn(argv, "whole")), 0) << Read("whole.err");
  const std::vector<std::string> whole = Sequence("whole");
  ASSERT_EQ(whole.size(), 24u);

  argv[4] = Path("cut");
  pid_t pid = Spawn(argv, "cut1");
  WaitFinished("cut", 10);  // every subspace GP-guided by now
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  ASSERT_EQ(WaitExit(pid), 128 + SIGKILL);
  ASSERT_LT(Finished("cut"), 16u) << "the search got too far before it was killed";
  std::vector<std::string> resume = {"search", "--dataset", Path("cut"), "--resume", "1"};
  resume.insert(resume.end(), common.begin(), common.end());
  pid = Spawn(resume, "cut2");
  WaitFinished("cut", Finished("cut") + 3);
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  ASSERT_EQ(WaitExit(pid), 128 + SIGKILL);
  ASSERT_LT(Finished("cut"), 22u) << "the search got too far before the second kill";
  ASSERT_EQ(WaitExit(Spawn(resume, "cut3")), 0) << Read("cut3.err");

  const std::vector<std::string> cut = Sequence("cut");
  ASSERT_EQ(cut.size(), whole.size());
  for (size_t i = 0; i < whole.size(); ++i)
    EXPECT_EQ(cut[i], whole[i]) << "trial " << i << " of 24 differs";
  ExpectFsckClean(Path("cut"));
}

}  // namespace
}  // namespace xw
