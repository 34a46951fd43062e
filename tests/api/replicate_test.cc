// `xwires replicate` end to end: bad input changes nothing; a run killed
// with SIGKILL and resumed stores the same replicas and verdicts as an
// uninterrupted one, and fsck finds nothing; an injected systematic effect
// (Adam's eps placement at eps 0.5) is called significant.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "testing/cli_runner.h"
#include "testing/file_tree.h"
#include "testing/temp_dir.h"
#include "xwires/dataset/store/dataset.h"
#include "xwires/dataset/store/replicas.h"

namespace xw {
namespace {

namespace fs = std::filesystem;

using CliRun = testutil::CommandResult;  // stdout and stderr merged in `out`
using testutil::Snapshot;

CliRun Sh(const std::string& cmd) { return testutil::RunMerged(cmd); }
CliRun Xwires(const std::string& args) { return testutil::XwiresMerged(args); }
std::string Bin() { return testutil::XwiresBinary(); }

const char* kTiny =
    "--arch mlp --width 0.125 --epochs 1 --batch-size 32 --train-limit 128 --test-limit 100 "
    "--threads 1 --quiet";

// A dataset with trials 1 (torch, tf) and 2 (torch, reference).
std::string MakeDataset(const testutil::TempDir& tmp) {
  const std::string ds = tmp.Path("ds");
  EXPECT_EQ(Xwires(std::string("train ") + kTiny + " --profiles torch,tf --lr 0.01 --dataset " + ds)
                .exit_code,
            0);
  EXPECT_EQ(Xwires(std::string("train ") + kTiny +
                   " --profiles torch,reference --lr 0.02 --seed 3 --dataset " + ds)
                .exit_code,
            0);
  return ds;
}

TEST(ReplicateTest, BadInputIsRefusedAndWritesNothing) {
  testutil::TempDir tmp("xwires-replicate-bad");
  const std::string ds = MakeDataset(tmp);
  const auto before = Snapshot(ds);
  struct Case {
    std::string args, message;
  };
  const Case cases[] = {
      {"1 --replicas 3", "p < 0.05"},
      {"1 --perturb bits", "unknown perturbation family 'bits'"},
      {"2 --perturb order", "profile 'reference'"},
      {"99", "trial 99 is not in"},
      {"--where 'lr >>> 3'", "--where"},
      {"--where 'colour = 3'", "colour"},
      {"1 --top 2", "one way"},
      {"--top 0", "one way"},
  };
  for (const Case& c : cases) {
    const CliRun r = Xwires("replicate " + ds + " " + c.args + " --threads 1");
    EXPECT_EQ(r.exit_code, 2) << c.args << ": " << r.out;
    EXPECT_NE(r.out.find(c.message), std::string::npos) << c.args << ": " << r.out;
    EXPECT_EQ(Snapshot(ds), before) << c.args << " changed the dataset";
  }
}

struct Stored {
  std::vector<std::string> replicas;  // profile/family/r sha acc
  std::vector<std::string> stats;     // pair verdict p
};

Stored ReadBack(const std::string& dir) {
  Stored s;
  auto ds = Dataset::Open(dir, OpenMode::kReadOnly);
  EXPECT_TRUE(ds.ok()) << ds.status().ToString();
  if (!ds.ok()) return s;
  for (int64_t trial : {1, 2}) {
    auto rs = LoadReplicas(**ds, trial, "", /*with_data=*/true);
    EXPECT_TRUE(rs.ok()) << rs.status().ToString();
    for (const ReplicaRecord& r : *rs) {
      std::string pred(r.predictions.begin(), r.predictions.end());
      s.replicas.push_back(std::to_string(trial) + " " + r.profile + "/" + r.family + "/" +
                           std::to_string(r.replica) + " " + r.weights_sha256 + " " +
                           std::to_string(r.test_acc) + " " + r.params_json + " " +
                           std::to_string(std::hash<std::string>()(pred)));
    }
  }
  auto st = LoadReplicaStats(**ds);
  EXPECT_TRUE(st.ok());
  for (const ReplicaStatsRecord& x : *st) {
    s.stats.push_back(std::to_string(x.trial_id) + " " + x.profile_a + "-" + x.profile_b + " " +
                      stats::VerdictName(x.stats.verdict) + " " +
                      PairStatisticsJson(x.stats));
  }
  return s;
}

TEST(ReplicateTest, KilledRunResumesToTheSameReplicasAndVerdicts) {
  testutil::TempDir tmp("xwires-replicate-resume");
  const std::string a = MakeDataset(tmp);
  const std::string b = fs::path(a).parent_path().string() + "/copy";
  fs::copy(a, b, fs::copy_options::recursive);
  const std::string args = " 1,2 --replicas 4 --jobs 2 --threads 2";
  const CliRun whole = Xwires("replicate " + a + args);
  ASSERT_EQ(whole.exit_code, 0) << whole.out;
  EXPECT_NE(whole.out.find("16 replicas trained"), std::string::npos) << whole.out;

  // Killed once the first replica is stored (progress lines are printed
  // after each store), then resumed. The first, not a later one: the tiny
  // replicas take tens of milliseconds each, so a later threshold left the
  // run time to finish before the kill on a loaded machine.
  const std::string log = fs::path(a).parent_path().string() + "/progress.log";
  const CliRun killed = Sh("(" + Bin() + " replicate " + b + args + " > " + log +
                           " 2>&1 & pid=$!; for i in $(seq 1 600); do "
                           "n=$(grep -c '^replica ' " + log + " || true); "
                           "[ \"$n\" -ge 1 ] && break; sleep 0.01; done; kill -9 $pid; "
                           "wait $pid; echo killed $?)");
  EXPECT_NE(killed.out.find("killed 137"), std::string::npos) << killed.out;
  const CliRun resumed = Xwires("replicate " + b + args);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out;
  EXPECT_NE(resumed.out.find("already stored"), std::string::npos) << resumed.out;
  EXPECT_EQ(resumed.out.find(" 0 already stored"), std::string::npos) << resumed.out;
  EXPECT_EQ(resumed.out.find("16 replicas trained"), std::string::npos) << resumed.out;

  const Stored x = ReadBack(a), y = ReadBack(b);
  EXPECT_EQ(x.replicas.size(), 16u);
  EXPECT_EQ(x.stats.size(), 2u);
  EXPECT_EQ(x.replicas, y.replicas);
  EXPECT_EQ(x.stats, y.stats);
  const CliRun fsck = Xwires("fsck " + b);
  EXPECT_EQ(fsck.exit_code, 0) << fsck.out;
  // Running it again trains nothing and changes no verdict.
  const CliRun again = Xwires("replicate " + a + args);
  EXPECT_NE(again.out.find("0 replicas trained, 16 already stored"), std::string::npos)
      << again.out;
  EXPECT_EQ(ReadBack(a).stats, x.stats);
}

// `ulp` replicas of a one-epoch run repeat one another (every replica of a
// side has the same accuracy): the pair is insufficient, the guard's reason
// is stored with the statistics and printed, and fsck, which recomputes the
// verdict through the same function, finds the dataset consistent.
TEST(ReplicateTest, UlpReplicasThatDidNotSpreadAreInsufficientWithTheReason) {
  testutil::TempDir tmp("xwires-replicate-ulp");
  const std::string ds = MakeDataset(tmp);
  const CliRun r = Xwires("replicate " + ds + " 1 --replicas 4 --perturb ulp --jobs 2 --threads 2");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("ulp family"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("trial 1 torch vs tf: insufficient: ulp/order replicas did not spread"),
            std::string::npos)
      << r.out;
  auto st = LoadReplicaStats(**Dataset::Open(ds, OpenMode::kReadOnly), 1);
  ASSERT_TRUE(st.ok());
  ASSERT_EQ(st->size(), 1u);
  EXPECT_EQ(st->front().family, "ulp");
  EXPECT_EQ(st->front().stats.verdict, stats::Verdict::kInsufficient);
  EXPECT_NE(st->front().stats.verdict_reason.find("did not spread"), std::string::npos);
  const CliRun fsck = Xwires("fsck " + ds);
  EXPECT_EQ(fsck.exit_code, 0) << fsck.out;
  EXPECT_NE(fsck.out.find("0 problem(s)"), std::string::npos) << fsck.out;
}

// Trained replicas travel: a bundle replays them bit for bit (torch and tf
// are exact-order profiles), and a merge carries them (fsck clean after).
TEST(ReplicateTest, ReplicasReplayFromABundleAndMergeIntoAnotherDataset) {
  testutil::TempDir tmp("xwires-replicate-travel");
  const std::string ds = MakeDataset(tmp);
  const std::string root = fs::path(ds).parent_path().string();
  ASSERT_EQ(Xwires("replicate " + ds + " 1 --replicas 4 --threads 1 --quiet").exit_code, 0);
  ASSERT_EQ(Xwires("bundle create " + ds + " --trials 1,2 -o " + root + "/b.tar.zst").exit_code, 0);
  const CliRun v = Xwires("bundle verify " + root +
                          "/b.tar.zst --replay 2 --replay-replicas -1 --threads 1");
  ASSERT_EQ(v.exit_code, 0) << v.out;
  // 2 + 2 models, and the 3 + 3 replicas r >= 1 of trial 1.
  size_t passed = 0;
  for (size_t at = v.out.find("bitwise check passed"); at != std::string::npos;
       at = v.out.find("bitwise check passed", at + 1)) {
    ++passed;
  }
  EXPECT_EQ(passed, 10u) << v.out;
  EXPECT_NE(v.out.find("8 replicas, 1 replica statistics"), std::string::npos) << v.out;
  EXPECT_NE(v.out.find("replay: 10 models re-trained, 0 failed (6 of them replicas)"),
            std::string::npos)
      << v.out;
  const std::string m = root + "/merged";
  ASSERT_EQ(Xwires("train " + std::string(kTiny) + " --profiles torch --dataset " + m).exit_code, 0);
  const CliRun merged = Xwires("merge " + m + " " + ds);
  ASSERT_EQ(merged.exit_code, 0) << merged.out;
  EXPECT_NE(merged.out.find("replicas: added 8, skipped 0 already present; statistics: added 1"),
            std::string::npos)
      << merged.out;
  const CliRun fsck = Xwires("fsck " + m);
  EXPECT_EQ(fsck.exit_code, 0) << fsck.out;
  auto st = LoadReplicaStats(**Dataset::Open(m, OpenMode::kReadOnly));
  ASSERT_TRUE(st.ok());
  ASSERT_EQ(st->size(), 1u);
  EXPECT_EQ(st->front().trial_id, 2);  // trial 1 of ds is trial 2 here
}

// mpirun as root needs --allow-run-as-root (CI runs as root), as the
// search's MPI test does.
TEST(ReplicateTest, MpiRanksShareTheReplicasAndRankZeroStoresThem) {
  testutil::TempDir tmp("xwires-replicate-mpi");
  const std::string a = MakeDataset(tmp);
  const std::string b = fs::path(a).parent_path().string() + "/copy";
  fs::copy(a, b, fs::copy_options::recursive);
  const std::string args = " 1,2 --replicas 4 --threads 2";
  const CliRun alone = Xwires("replicate " + a + args + " --jobs 2");
  ASSERT_EQ(alone.exit_code, 0) << alone.out;
  const CliRun mpi = Sh("mpirun -n 2 --oversubscribe --allow-run-as-root " + Bin() +
                        " replicate " + b + args + " --jobs 1");
  ASSERT_EQ(mpi.exit_code, 0) << mpi.out;
  EXPECT_NE(mpi.out.find("16 replicas trained, 0 already stored"), std::string::npos) << mpi.out;
  // Both ranks trained some of them (rank 0 stored every one).
  EXPECT_NE(mpi.out.find("(rank 0)"), std::string::npos) << mpi.out;
  EXPECT_NE(mpi.out.find("(rank 1)"), std::string::npos) << mpi.out;
  const Stored x = ReadBack(a), y = ReadBack(b);
  EXPECT_EQ(x.replicas.size(), 16u);
  EXPECT_EQ(x.replicas, y.replicas);
  EXPECT_EQ(x.stats, y.stats);
  EXPECT_EQ(Xwires("fsck " + b).exit_code, 0);
  // Bad input under MPI: rank 0's error, exit code 2, nothing written.
  const auto before = Snapshot(b);
  const CliRun bad = Sh("mpirun -n 2 --oversubscribe --allow-run-as-root " + Bin() +
                        " replicate " + b + " 99 --threads 2");
  EXPECT_NE(bad.exit_code, 0) << bad.out;
  EXPECT_NE(bad.out.find("trial 99 is not in"), std::string::npos) << bad.out;
  EXPECT_EQ(Snapshot(b), before);
}

// The A/A calibration (40 trials, seed and ulp replicas) is
// replicate_calibration_test.cc.
TEST(ReplicateTest, EpsPlacementAtEpsHalfIsSignificant) {
  // torch against a copy whose only change is Adam's eps placement (Keras'
  // eps-hat): a systematic effect, not noise.
  testutil::TempDir tmp("xwires-replicate-inject");
  const std::string dir = tmp.path();
  const std::string ds = dir + "/ds";
  std::ifstream in(std::string(XWIRES_SOURCE_DIR) + "/trainers/profiles/torch.json");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  auto swap = [&](const std::string& from, const std::string& to) {
    const size_t at = text.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
  };
  swap("\"name\": \"torch\"", "\"name\": \"torch_epshat\"");
  swap("\"variant\": \"torch\"", "\"variant\": \"keras\"");
  std::ofstream(dir + "/torch_epshat.json") << text;
  // At lr 0.1 both sides learn above chance + 3 standard errors on 1000 test
  // images (torch 0.25, the copy about 0.15 on 2026-11-28), so no replica
  // counts as collapsed and the verdict rests on the accuracy gap.
  ASSERT_EQ(Xwires("train --arch mlp --width 0.25 --epochs 3 --batch-size 32 --train-limit 1000 "
                   "--test-limit 1000 --threads 2 --quiet --lr 0.1 --adam-eps 0.5 --profiles "
                   "torch," + dir + "/torch_epshat.json --dataset " + ds)
                .exit_code,
            0);
  // No --perturb: the default family, `seed` (fresh training seeds, the
  // data unchanged), is the one the A/A calibration passes; the effect must
  // stand out against the draw-to-draw noise it measures.
  const CliRun r = Xwires("replicate " + ds + " 1 --replicas 5 --jobs 2 --threads 2 --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("seed family"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("significant"), std::string::npos) << r.out;
  auto st = LoadReplicaStats(**Dataset::Open(ds, OpenMode::kReadOnly), 1);
  ASSERT_TRUE(st.ok());
  ASSERT_EQ(st->size(), 1u);
  EXPECT_EQ(st->front().family, "seed");
  EXPECT_EQ(st->front().stats.verdict, stats::Verdict::kSignificant) << r.out;
  auto reps = LoadReplicas(**Dataset::Open(ds, OpenMode::kReadOnly), 1);
  ASSERT_TRUE(reps.ok());
  ASSERT_EQ(reps->size(), 10u);
  for (const ReplicaRecord& x : *reps) EXPECT_EQ(x.family, "seed") << x.params_json;
}

}  // namespace
}  // namespace xw
