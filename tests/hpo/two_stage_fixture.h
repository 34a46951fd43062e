// The fixture and helpers of the two-stage search's end-to-end tests
// (search_two_stage_test.cc: one process; search_two_stage_mpi_test.cc:
// mpirun): a tiny mlp search config, spawning the CLI, and the trials of a
// search with their replicas and statistics.
#ifndef XWIRES_TESTS_HPO_TWO_STAGE_FIXTURE_H_
#define XWIRES_TESTS_HPO_TWO_STAGE_FIXTURE_H_

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "testing/cli_runner.h"
#include "testing/command_test.h"
#include "testing/search_rows.h"
#include "xwires/dataset/query/query.h"
#include "xwires/dataset/store/dataset.h"
#include "xwires/dataset/store/replicas.h"
#include "xwires/hpo/schedule.h"

namespace xw::two_stage_test {

namespace fs = std::filesystem;
using json = nlohmann::json;

inline const char* kBinary = XWIRES_BINARY_DIR "/xwires";

// 4 subspaces x 3 trials = 12 proposals in 2 rounds of 6; the top 20% of a
// round is 1 trial; the best replicated one is confirmed. EI (no gp_hedge
// portfolio) and one job keep the proposals a function of the stored trials.
inline std::string TwoStageConfig() {
  json c = {
      {"arch", "mlp"},
      {"data", {{"train_limit", 200}, {"test_limit", 100}}},
      {"dimensions",
       {{{"name", "lr"},
         {"type", "real"},
         {"low", 1e-3},
         {"high", 0.1},
         {"log", true}},
        {{"name", "epochs"}, {"type", "integer"}, {"low", 1}, {"high", 2}}}},
      {"train", {{"width", 0.125}, {"batch_size", 50}}},
      {"trials_per_subspace", 3},
      {"acquisition", "EI"},
      {"objective", "significant_diff"},
      {"schedule", {{"round", 6}, {"confirm_top", 1}, {"confirm_replicas", 4}}},
      {"budget", {{"max_seconds", 0}}}};
  return c.dump();
}

// The scratch directory, Spawn/Run/Read come from testutil::CommandTest.
class TwoStageSearchFixture : public testutil::CommandTest {
 protected:
  void SetUp() override {
    std::ofstream(Path("config.json")) << TwoStageConfig();
  }

  static int WaitExit(pid_t pid) { return testutil::WaitExit(pid); }
  std::vector<std::string> Search(const std::string& ds, int jobs = 1) const {
    return {kBinary,     "search",
            "--config",  Path("config.json"),
            "--dataset", Path(ds),
            "--jobs",    std::to_string(jobs),
            "--threads", std::to_string(jobs),
            "--quiet"};
  }
};

struct Trial {
  TrialRow row;
  int64_t proposal = 0;  // its proposal number (the pending row's id)
  std::string point;     // subspace and point
  std::vector<ReplicaRecord> replicas;
  std::vector<ReplicaStatsRecord> stats;
};

inline std::vector<Trial> Load(const std::string& dir) {
  auto ds = Dataset::Open(dir, OpenMode::kReadOnly);
  EXPECT_TRUE(ds.ok()) << ds.status().ToString();
  std::vector<Trial> out;
  for (const TrialRow& r : testutil::SearchTrials(dir)) {
    Trial t;
    t.row = r;
    const json s = json::parse(r.extra_json)["search"];
    // A finished trial keeps its pending row's id (older searches name it
    // in "pending_trial"): its proposal number.
    t.proposal =
        s.contains("pending_trial") ? s["pending_trial"].get<int64_t>() : r.id;
    t.point = s["subspace"].dump() + s["point"].dump();
    t.replicas = LoadReplicas(**ds, r.id, "", /*with_data=*/false).value();
    t.stats = LoadReplicaStats(**ds, r.id).value();
    out.push_back(std::move(t));
  }
  return out;
}

inline int64_t CountReplicas(const std::string& dir) {
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

// The trials the schedule must have replicated, recomputed from the rows:
// proposals in rounds of `round` by proposal number, the best raw |diff| of
// each round (ties: the earlier proposal); one per round (top share 20% of
// a round of 6).
inline std::set<int64_t> ExpectedSelection(const std::vector<Trial>& trials,
                                           size_t round) {
  std::vector<hpo::Proposal> proposals;
  for (const Trial& t : trials)
    proposals.push_back({t.proposal, t.row.id, true, t.row.divergence});
  std::sort(proposals.begin(), proposals.end(),
            [](const auto& a, const auto& b) { return a.order < b.order; });
  std::set<int64_t> expected;
  for (size_t start = 0; start < proposals.size(); start += round) {
    const hpo::Proposal* best = &proposals[start];
    for (size_t i = start; i < std::min(proposals.size(), start + round); ++i) {
      if (proposals[i].divergence > best->divergence) best = &proposals[i];
    }
    expected.insert(best->trial_id);
  }
  return expected;
}

}  // namespace xw::two_stage_test

#endif  // XWIRES_TESTS_HPO_TWO_STAGE_FIXTURE_H_
