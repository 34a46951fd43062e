// `xwires search` end to end on tiny searches: every trial recorded, objective
// invariants, kill -9 and resume without loss or duplicates, bad input leaving
// the dataset untouched, and MPI runs with fewer ranks than subspaces (rank 0
// gathering the results).
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
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

namespace xw {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using testutil::WaitExit;

const char* kBinary = XWIRES_BINARY_DIR "/xwires";

// 2 dimensions -> 4 subspaces; an mlp on a few hundred images: ~0.1-1 s a
// trial.
std::string TinyConfig(int trials_per_subspace, int64_t train_limit,
                       int max_epochs) {
  json c = {{"arch", "mlp"},
            {"data", {{"train_limit", train_limit}, {"test_limit", 100}}},
            {"dimensions",
             {{{"name", "lr"},
               {"type", "real"},
               {"low", 1e-4},
               {"high", 0.1},
               {"log", true}},
              {{"name", "epochs"},
               {"type", "integer"},
               {"low", 1},
               {"high", max_epochs}}}},
            {"train", {{"width", 0.125}, {"batch_size", 50}}},
            {"trials_per_subspace", trials_per_subspace},
            {"objective", "abs_acc_diff"},  // screened only (no replicas)
            {"budget", {{"max_seconds", 0}}}};
  return c.dump();
}

class SearchCliTest : public testutil::CommandTest {
 protected:
  std::string WriteConfig(const std::string& text,
                          const std::string& name = "config.json") const {
    std::ofstream(Path(name)) << text;
    return Path(name);
  }

  // The rows of search 1. While a search is starting, the dataset may not
  // exist yet: `must` = false then returns nothing instead of failing.
  std::vector<TrialRow> Trials(bool must = true) const {
    return testutil::SearchTrials(Path("ds"), must);
  }

  // Every finished row is a distinct (subspace, point), the rows are
  // numbered 1, 2, 3, ... (a finished trial keeps its pending row's id), and
  // each subspace holds `per_subspace` of them.
  static void CheckComplete(const std::vector<TrialRow>& rows, int subspaces,
                            int per_subspace) {
    std::set<std::string> points;
    std::map<int, int> per;
    int64_t expected_id = 0;
    for (const TrialRow& r : rows) {
      EXPECT_EQ(r.id, ++expected_id);
      EXPECT_TRUE(r.status == "ok" || r.status == "diverged")
          << "trial " << r.id << " " << r.status;
      EXPECT_EQ(r.models.size(), 2u);
      json s = json::parse(r.extra_json)["search"];
      EXPECT_TRUE(
          points.insert(s["subspace"].dump() + s["point"].dump()).second)
          << "duplicate point " << s.dump();
      EXPECT_FALSE(s.contains("pending_trial"));
      per[s["subspace"].get<int>()]++;
    }
    EXPECT_EQ(static_cast<int>(rows.size()), subspaces * per_subspace);
    EXPECT_EQ(static_cast<int>(per.size()), subspaces);
    for (const auto& [s, n] : per)
      EXPECT_EQ(n, per_subspace) << "subspace " << s;
  }
};

TEST_F(SearchCliTest, TinySearchRecordsEveryTrial) {
  const std::string config = WriteConfig(TinyConfig(3, 200, 1));
  ASSERT_EQ(Run({kBinary, "search", "--config", config, "--dataset", Path("ds"),
                 "--jobs", "2"}),
            0)
      << Read("stderr");
  CheckComplete(Trials(), 4, 3);
  EXPECT_NE(Read("stdout").find("most divergent pairs of search 1"),
            std::string::npos);
  EXPECT_NE(Read("stderr").find("[12/12]"), std::string::npos)
      << Read("stderr");
  auto ds = Dataset::Open(Path("ds"), OpenMode::kReadOnly);
  auto searches = (*ds)->Searches();
  ASSERT_EQ(searches->size(), 1u);
  EXPECT_EQ((*searches)[0].record.status, "done");
  EXPECT_EQ((*searches)[0].record.objective, "abs_acc_diff(torch,tf)");
}

TEST_F(SearchCliTest, DisagreementObjectiveBoundsTheAccuracyGap) {
  const std::string config = WriteConfig(TinyConfig(1, 200, 1));
  ASSERT_EQ(Run({kBinary, "search", "--config", config, "--dataset", Path("ds"),
                 "--objective", "disagreement", "--quiet", "--top", "0"}),
            0)
      << Read("stderr");
  const auto rows = Trials();
  ASSERT_EQ(rows.size(), 4u);
  for (const TrialRow& r : rows) {
    const json o = json::parse(r.extra_json)["objectives"];
    const double acc_gap =
        std::fabs(r.models[0].test_acc - r.models[1].test_acc);
    EXPECT_EQ(r.divergence, o["disagreement"].get<double>());
    EXPECT_DOUBLE_EQ(o["abs_acc_diff"].get<double>(), acc_gap);
    // |acc_A - acc_B| <= the fraction predicted differently, and <= the
    // largest per-class gap (it is a weighted mean of the class gaps).
    EXPECT_LE(acc_gap, o["disagreement"].get<double>() + 1e-12);
    EXPECT_LE(acc_gap, o["max_class_gap"].get<double>() + 1e-12);
    EXPECT_LE(o["disagreement"].get<double>(), 1.0);
  }
}

TEST_F(SearchCliTest, KillNineThenResumeLosesAndRepeatsNothing) {
  const std::string config = WriteConfig(TinyConfig(4, 600, 3));
  const pid_t pid = Spawn({kBinary, "search", "--config", config, "--dataset",
                           Path("ds"), "--jobs", "2"});
  // Kill once at least 3 trials are finished (pending rows then exist for
  // the 2 running ones).
  size_t finished = 0;
  for (int i = 0; i < 1200 && finished < 3; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    finished = 0;
    for (const TrialRow& r : Trials(false))
      finished += r.status == "ok" || r.status == "diverged";
  }
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  ASSERT_EQ(WaitExit(pid), 128 + SIGKILL);
  const auto before = Trials();
  ASSERT_LT(before.size(), 16u) << "the search finished before it was killed";
  int pending = 0;
  for (const TrialRow& r : before) pending += r.status == "pending";
  EXPECT_GE(pending, 1);

  ASSERT_EQ(Run({kBinary, "search", "--dataset", Path("ds"), "--resume", "1"}),
            0)
      << Read("stderr");
  EXPECT_NE(Read("stderr").find("interrupted (re-run)"), std::string::npos);
  const auto after = Trials();
  CheckComplete(after, 4, 4);
  // Every trial finished before the kill is still there, unchanged.
  std::map<int64_t, double> by_id;
  for (const TrialRow& r : after) by_id[r.id] = r.divergence;
  for (const TrialRow& r : before) {
    if (r.status == "pending") continue;
    ASSERT_TRUE(by_id.count(r.id)) << "trial " << r.id << " lost";
    EXPECT_EQ(by_id[r.id], r.divergence);
  }
  // A second resume has nothing left to do.
  ASSERT_EQ(Run({kBinary, "search", "--dataset", Path("ds"), "--resume", "1",
                 "--quiet"}),
            0);
  EXPECT_EQ(Trials().size(), 16u);
}

TEST_F(SearchCliTest, BadInputLeavesTheDatasetUntouched) {
  // No dataset is created for a bad config.
  std::string config = WriteConfig(R"({"train": {"widht": 2}})");
  EXPECT_EQ(
      Run({kBinary, "search", "--config", config, "--dataset", Path("ds")}), 2);
  EXPECT_NE(Read("stderr").find("train.widht"), std::string::npos)
      << Read("stderr");
  EXPECT_FALSE(fs::exists(Path("ds")));

  config = WriteConfig(TinyConfig(1, 100, 1));
  ASSERT_EQ(Run({kBinary, "search", "--config", config, "--dataset", Path("ds"),
                 "--quiet"}),
            0);
  const auto size = fs::file_size(Path("ds") + "/xwires.db");
  const auto rows = Trials().size();
  struct Case {
    std::vector<std::string> args;
    const char* needle;
  } cases[] = {
      {{"--resume", "7"}, "no search with id 7"},
      {{"--resume", "1", "--seed", "3"}, "--resume"},
      {{"--config", Path("missing.json")}, "missing.json"},
      {{"--config", WriteConfig(R"({"arch": "resnet9"})", "a.json")},
       "resnet9"},
      {{"--config",
        WriteConfig(R"({"profiles": ["torch", "nope"]})", "p.json")},
       "nope"},
      {{"--config",
        WriteConfig(R"({"data": "cifar10:/no/such/dir"})", "d.json")},
       "/no/such/dir"},
      {{"--jobs", "-1"}, "--jobs"},
  };
  for (const Case& k : cases) {
    std::vector<std::string> argv = {kBinary, "search", "--dataset",
                                     Path("ds")};
    argv.insert(argv.end(), k.args.begin(), k.args.end());
    EXPECT_EQ(Run(argv), 2) << k.args[0] << ": " << Read("stderr");
    EXPECT_NE(Read("stderr").find(k.needle), std::string::npos)
        << Read("stderr");
  }
  auto ds = Dataset::Open(Path("ds"), OpenMode::kReadOnly);
  EXPECT_EQ((*ds)->Searches()->size(), 1u);
  EXPECT_EQ(Trials().size(), rows);
  EXPECT_EQ(fs::file_size(Path("ds") + "/xwires.db"), size);
}

// mpirun as root needs --allow-run-as-root (CI runs as root).
std::vector<std::string> Mpirun(int ranks) {
  return {"mpirun",
          "-n",
          std::to_string(ranks),
          "--oversubscribe",
          "--allow-run-as-root",
          kBinary};
}

TEST_F(SearchCliTest, MpiRanksShareTheSubspacesAndRankZeroGathers) {
  const std::string config = WriteConfig(TinyConfig(2, 200, 1));
  auto run = [&](int ranks, std::vector<std::string> extra) {
    fs::remove_all(Path("ds"));
    std::vector<std::string> argv = Mpirun(ranks);
    for (const std::string& a : {std::string("search"), std::string("--config"),
                                 config, std::string("--dataset"), Path("ds"),
                                 std::string("--jobs"), std::string("1")}) {
      argv.push_back(a);
    }
    argv.insert(argv.end(), extra.begin(), extra.end());
    return Run(argv);
  };
  // 4 subspaces over 2 or 3 ranks: every rank takes one or more, none is
  // dropped, and all results reach rank 0's dataset.
  for (int ranks : {2, 3}) {
    ASSERT_EQ(run(ranks, {}), 0) << ranks << " ranks: " << Read("stderr");
    CheckComplete(Trials(), 4, 2);
    EXPECT_NE(Read("stderr").find(std::to_string(ranks) + " ranks"),
              std::string::npos);
  }
  // One subspace on 2 ranks: rank 1 has nothing to do and waits.
  ASSERT_EQ(run(2, {"--no-subspaces", "--trials-per-subspace", "3"}), 0)
      << Read("stderr");
  CheckComplete(Trials(), 1, 3);
}

}  // namespace
}  // namespace xw
