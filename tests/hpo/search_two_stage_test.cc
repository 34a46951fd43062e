// `xwires search` with objective significant_diff end to end on tiny mlp
// searches: the two-stage schedule replicates exactly the top share of every
// round with seed replicas 0..4 and confirms the final top pair with fresh
// seed replicas 5..8, which took no part in the selection; kill -9 and
// --resume give the same trials, replicas and verdicts as an uninterrupted
// run; under MPI rank 0 replicates after the screening; bad schedule options
// are refused before anything is written.
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
#include "xwires/core/significance.h"
#include "xwires/dataset/query/query.h"
#include "xwires/dataset/store/dataset.h"
#include "xwires/dataset/store/replicas.h"
#include "xwires/hpo/schedule.h"

namespace xw {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using testutil::WaitExit;

const char* kBinary = XWIRES_BINARY_DIR "/xwires";

// 4 subspaces x 3 trials = 12 proposals in 2 rounds of 6; the top 20% of a
// round is 1 trial; the best replicated one is confirmed. EI (no gp_hedge
// portfolio) and one job keep the proposals a function of the stored trials.
std::string TwoStageConfig() {
  json c = {{"arch", "mlp"},
            {"data", {{"train_limit", 200}, {"test_limit", 100}}},
            {"dimensions",
             {{{"name", "lr"}, {"type", "real"}, {"low", 1e-3}, {"high", 0.1}, {"log", true}},
              {{"name", "epochs"}, {"type", "integer"}, {"low", 1}, {"high", 2}}}},
            {"train", {{"width", 0.125}, {"batch_size", 50}}},
            {"trials_per_subspace", 3},
            {"acquisition", "EI"},
            {"objective", "significant_diff"},
            {"schedule", {{"round", 6}, {"confirm_top", 1}, {"confirm_replicas", 4}}},
            {"budget", {{"max_seconds", 0}}}};
  return c.dump();
}

class SearchTwoStageTest : public testutil::CommandTest {
 protected:
  void SetUp() override { std::ofstream(Path("config.json")) << TwoStageConfig(); }

  std::vector<std::string> Search(const std::string& ds, int jobs = 1) const {
    return {kBinary, "search", "--config", Path("config.json"), "--dataset", Path(ds),
            "--jobs", std::to_string(jobs), "--threads", std::to_string(jobs), "--quiet"};
  }
};

struct Trial {
  TrialRow row;
  int64_t proposal = 0;  // its proposal number (the pending row's id)
  std::string point;     // subspace and point
  std::vector<ReplicaRecord> replicas;
  std::vector<ReplicaStatsRecord> stats;
};

std::vector<Trial> Load(const std::string& dir) {
  auto ds = Dataset::Open(dir, OpenMode::kReadOnly);
  EXPECT_TRUE(ds.ok()) << ds.status().ToString();
  std::vector<Trial> out;
  for (const TrialRow& r : testutil::SearchTrials(dir)) {
    Trial t;
    t.row = r;
    const json s = json::parse(r.extra_json)["search"];
    // A finished trial keeps its pending row's id (older searches name it
    // in "pending_trial"): its proposal number.
    t.proposal = s.contains("pending_trial") ? s["pending_trial"].get<int64_t>() : r.id;
    t.point = s["subspace"].dump() + s["point"].dump();
    t.replicas = LoadReplicas(**ds, r.id, "", /*with_data=*/false).value();
    t.stats = LoadReplicaStats(**ds, r.id).value();
    out.push_back(std::move(t));
  }
  return out;
}

int64_t CountReplicas(const std::string& dir) {
  auto ds = Dataset::Open(dir, OpenMode::kReadOnly);
  if (!ds.ok()) return 0;
  TrialQuery q;
  q.where = "search_id = 1";
  auto rows = (*ds)->Query(q);
  if (!rows.ok()) return 0;
  int64_t n = 0;
  for (const TrialRow& r : *rows) {
    auto reps = LoadReplicas(**ds, r.id);
    if (reps.ok()) n += static_cast<int64_t>(reps->size());
  }
  return n;
}

TEST_F(SearchTwoStageTest, ReplicatesTheTopShareOfEachRoundAndConfirmsWithFreshReplicas) {
  // Two jobs: replicas and proposals share the workers.
  ASSERT_EQ(Run(Search("ds", 2)), 0) << Read("stderr");
  const std::vector<Trial> trials = Load(Path("ds"));
  ASSERT_EQ(trials.size(), 12u);
  // The expected selection, recomputed from the rows: rounds of 6 proposals
  // by pending id, the best raw |diff| of each (ties: earlier proposal).
  std::vector<hpo::Proposal> proposals;
  for (const Trial& t : trials) {
    proposals.push_back({t.proposal, t.row.id, true, t.row.divergence});
  }
  std::sort(proposals.begin(), proposals.end(),
            [](const auto& a, const auto& b) { return a.order < b.order; });
  std::set<int64_t> expected;
  for (size_t start = 0; start < 12; start += 6) {
    const hpo::Proposal* best = &proposals[start];
    for (size_t i = start; i < start + 6; ++i) {
      if (proposals[i].divergence > best->divergence) best = &proposals[i];
    }
    expected.insert(best->trial_id);
  }
  std::set<int64_t> replicated;
  std::vector<hpo::Replicated> selection;
  for (const Trial& t : trials) {
    if (t.replicas.empty()) {
      EXPECT_TRUE(t.stats.empty());
      continue;
    }
    replicated.insert(t.row.id);
    // Selection: seed replicas 0..4 of both profiles (the best trial also
    // has its confirmation's 5..8), one statistics row over 0..4.
    std::map<std::string, std::set<int64_t>> seed;
    for (const ReplicaRecord& r : t.replicas) {
      EXPECT_EQ(r.family, "seed");
      if (r.replica < 5) seed[r.profile].insert(r.replica);
    }
    EXPECT_EQ(seed["torch"], (std::set<int64_t>{0, 1, 2, 3, 4})) << "trial " << t.row.id;
    EXPECT_EQ(seed["tf"], (std::set<int64_t>{0, 1, 2, 3, 4}));
    ASSERT_GE(t.stats.size(), 1u);
    const ReplicaStatsRecord& sel = t.stats.front();
    EXPECT_EQ(sel.family, "seed");
    EXPECT_EQ(sel.k_a, 5);
    EXPECT_EQ(sel.first_replica, 0);
    // Replica 0 is the screened trial itself.
    for (const ReplicaRecord& r : t.replicas) {
      if (r.replica == 0) {
        EXPECT_EQ(r.test_acc, t.row.Model(r.profile)->test_acc);
      }
    }
    // The stored objective is LCB = max(0, |mean diff| - t(0.975, df) SE)
    // over the stored replica accuracies.
    double mean[2] = {0, 0};
    for (const ReplicaRecord& r : t.replicas) {
      if (r.replica < 5) mean[r.profile == "torch" ? 0 : 1] += r.test_acc / 5;
    }
    EXPECT_NEAR(sel.stats.mean_diff, mean[0] - mean[1], 1e-12);
    const double want =
        std::max(0.0, std::fabs(mean[0] - mean[1]) -
                          stats::StudentQuantile(sel.stats.welch_df, 0.975) *
                              std::sqrt(sel.stats.se2));
    EXPECT_NEAR(sel.stats.lcb, want, 1e-12);
    selection.push_back({t.row.id, sel.stats.lcb, sel.stats.permutation_p});
  }
  EXPECT_EQ(replicated, expected);
  // The best by LCB is confirmed by seed replicas 5..8 a side, fresh ones:
  // none of the selection's 0..4 (replica 0 = the screened trial) among
  // them. Its two statistics rows stand side by side (schema version 4).
  // (Ties of LCB, e.g. two at 0, go to the lower p, then the lower id.)
  const std::vector<int64_t> top = hpo::SelectForConfirmation(selection, 1);
  ASSERT_EQ(top.size(), 1u);
  const int64_t best = top[0];
  for (const Trial& t : trials) {
    std::map<std::string, std::set<int64_t>> fresh;
    for (const ReplicaRecord& r : t.replicas) {
      if (r.replica >= 5) fresh[r.profile].insert(r.replica);
    }
    if (t.row.id != best) {
      EXPECT_TRUE(fresh.empty()) << "trial " << t.row.id;
      EXPECT_LE(t.stats.size(), 1u);
      continue;
    }
    EXPECT_EQ(fresh["torch"], (std::set<int64_t>{5, 6, 7, 8}));
    EXPECT_EQ(fresh["tf"], (std::set<int64_t>{5, 6, 7, 8}));
    ASSERT_EQ(t.stats.size(), 2u);
    EXPECT_EQ(t.stats.front().first_replica, 0);
    EXPECT_EQ(t.stats.back().family, "seed");
    EXPECT_EQ(t.stats.back().first_replica, 5);
    EXPECT_EQ(t.stats.back().k_a, 4);
    // The confirmation's mean difference is over replicas 5..8 only.
    double mean[2] = {0, 0};
    for (const ReplicaRecord& r : t.replicas) {
      if (r.replica >= 5) mean[r.profile == "torch" ? 0 : 1] += r.test_acc / 4;
    }
    EXPECT_NEAR(t.stats.back().stats.mean_diff, mean[0] - mean[1], 1e-12);
  }
  const std::string out = Read("stdout");
  EXPECT_NE(out.find("verdict"), std::string::npos) << out;
  EXPECT_NE(out.find("confirmed"), std::string::npos) << out;
  EXPECT_NE(out.find("verdicts: "), std::string::npos) << out;
  EXPECT_NE(out.find("Benjamini-Hochberg at q = 0.10"), std::string::npos) << out;
  // fsck recomputes every verdict from its replicas, the confirmation's
  // from replicas 5..8.
  EXPECT_EQ(Run({kBinary, "fsck", Path("ds")}), 0) << Read("stdout") << Read("stderr");
}

TEST_F(SearchTwoStageTest, KillAndResumeGiveTheSameTrialsAndVerdicts) {
  ASSERT_EQ(Run(Search("whole")), 0) << Read("stderr");
  const pid_t pid = Spawn(Search("killed"));
  // Kill once the replication has begun (replica 0 of the first selected
  // trial comes from its stored models, then replicas 1.. train).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (CountReplicas(Path("killed")) < 5 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  ASSERT_EQ(WaitExit(pid), 128 + SIGKILL);
  const int64_t before = CountReplicas(Path("killed"));
  ASSERT_LT(before, CountReplicas(Path("whole"))) << "the search finished before the kill";
  ASSERT_EQ(Run({kBinary, "search", "--dataset", Path("killed"), "--resume", "1", "--jobs",
                 "1", "--threads", "1", "--quiet"}),
            0)
      << Read("stderr");
  // Same points, same raw divergences, same replicas (family, profile, r,
  // accuracy) and the same verdicts, trial by trial.
  auto key = [](const std::vector<Trial>& ts) {
    std::map<std::string, std::string> m;
    for (const Trial& t : ts) {
      std::ostringstream s;
      s.precision(17);
      s << t.row.divergence << ";";
      for (const ReplicaRecord& r : t.replicas) {
        s << r.family << "/" << r.profile << "/" << r.replica << "=" << r.test_acc << " ";
      }
      for (const ReplicaStatsRecord& r : t.stats) {
        s << "| " << r.family << "@" << r.first_replica << " "
          << stats::VerdictName(r.stats.verdict) << " "
          << r.stats.lcb << " " << r.stats.permutation_p;
      }
      m[t.point] = s.str();
    }
    return m;
  };
  const auto whole = key(Load(Path("whole")));
  const auto resumed = key(Load(Path("killed")));
  EXPECT_EQ(whole.size(), 12u);
  EXPECT_EQ(resumed, whole);
  EXPECT_EQ(Run({kBinary, "fsck", Path("killed")}), 0) << Read("stdout");
}

// Under MPI the ranks screen and rank 0 trains the replicas afterwards: the
// same selection rule, every verdict in the dataset, fsck clean.
TEST_F(SearchTwoStageTest, MpiRanksScreenAndRankZeroReplicates) {
  ASSERT_EQ(Run({"mpirun", "-n", "2", "--oversubscribe", "--allow-run-as-root", kBinary,
                 "search", "--config", Path("config.json"), "--dataset", Path("ds"), "--jobs",
                 "1", "--threads", "1", "--quiet"}),
            0)
      << Read("stderr");
  const std::vector<Trial> trials = Load(Path("ds"));
  ASSERT_EQ(trials.size(), 12u);
  int replicated = 0, confirmed = 0;
  for (const Trial& t : trials) {
    if (t.stats.empty()) continue;
    ++replicated;
    confirmed += t.stats.back().family == "seed" && t.stats.back().first_replica == 5;
  }
  EXPECT_EQ(replicated, 2);  // one of each round of 6
  EXPECT_EQ(confirmed, 1);
  EXPECT_NE(Read("stdout").find("verdicts: "), std::string::npos) << Read("stdout");
  EXPECT_EQ(Run({kBinary, "fsck", Path("ds")}), 0) << Read("stdout");
}

TEST_F(SearchTwoStageTest, BadScheduleOptionsAreRefusedAndWriteNothing) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--replicas", "3"}, "schedule.replicas: 3 is too few"},
      {{"--confirm-replicas", "2"}, "cannot reach p < 0.05"},
      {{"--top-share", "0"}, "schedule.top_share: must be in (0, 1]"},
      {{"--top-share", "1.5"}, "schedule.top_share: must be in (0, 1]"},
      {{"--round", "0"}, "schedule.round"},
      {{"--schedule", "two_stage", "--objective", "abs_acc_diff"},
       "two_stage needs the objective significant_diff"},
  };
  for (const auto& [flags, message] : cases) {
    std::vector<std::string> argv = {kBinary, "search", "--dataset", Path("ds"), "--quiet"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    EXPECT_EQ(Run(argv), 2) << flags[0];
    EXPECT_NE(Read("stderr").find(message), std::string::npos)
        << flags[0] << ": " << Read("stderr");
    EXPECT_FALSE(fs::exists(Path("ds"))) << flags[0] << " wrote the dataset";
  }
}

}  // namespace
}  // namespace xw
