// The two-stage search under mpirun: every rank trains replicas as soon as a
// round's selection is known, interleaved with the next proposals; rank 0
// stores them; the selection rule, the replica sets and the verdicts hold
// over the stored trials; a replica trained on another rank has the bits one
// process trains; kill -9 of rank 0 and a resumed MPI search complete the
// schedule with nothing lost or repeated.
#include <dirent.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <thread>

#include "driver_internal.h"
#include "two_stage_fixture.h"
#include "xwires/trainers/replica.h"

namespace xw {
namespace {

using namespace two_stage_test;  // NOLINT: the fixture's helpers

// 12 proposals in 3 rounds of 4 (one replicated per round), so that the
// first rounds close while most proposals are still to come.
class SearchTwoStageMpiTest : public TwoStageSearchFixture {
 protected:
  void SetUp() override {
    TwoStageSearchFixture::SetUp();
    json c = json::parse(TwoStageConfig());
    c["schedule"]["round"] = 4;
    std::ofstream(Path("config.json")) << c.dump();
  }
  std::vector<std::string> Mpi(int ranks, const std::string& ds,
                               bool resume = false) const {
    std::vector<std::string> argv = {"mpirun",
                                     "-n",
                                     std::to_string(ranks),
                                     "--oversubscribe",
                                     "--allow-run-as-root",
                                     kBinary,
                                     "search",
                                     "--dataset",
                                     Path(ds),
                                     "--jobs",
                                     "1",
                                     "--threads",
                                     "1"};
    if (resume) {
      argv.insert(argv.end(), {"--resume", "1"});
    } else {
      argv.insert(argv.end(), {"--config", Path("config.json")});
    }
    return argv;
  }
  // The schedule's invariants over the stored trials: the top of each
  // round replicated with seed replicas 0..4 a side and nothing else, the
  // best by LCB confirmed with 5..8, fsck clean.
  void ExpectCompleteSchedule(const std::string& ds) const {
    const std::vector<Trial> trials = Load(Path(ds));
    ASSERT_EQ(trials.size(), 12u);
    std::set<int64_t> replicated;
    int confirmed = 0;
    for (const Trial& t : trials) {
      if (t.replicas.empty()) continue;
      replicated.insert(t.row.id);
      std::map<std::string, std::multiset<int64_t>> seed;
      for (const ReplicaRecord& r : t.replicas)
        seed[r.profile].insert(r.replica);
      const bool confirm = t.stats.size() == 2;
      confirmed += confirm;
      std::multiset<int64_t> want = {0, 1, 2, 3, 4};
      if (confirm) want.insert({5, 6, 7, 8});
      EXPECT_EQ(seed["torch"], want) << "trial " << t.row.id;
      EXPECT_EQ(seed["tf"], want) << "trial " << t.row.id;
    }
    EXPECT_EQ(replicated, ExpectedSelection(trials, 4));
    EXPECT_EQ(confirmed, 1);
    EXPECT_EQ(Run({kBinary, "fsck", Path(ds)}), 0) << Read("stdout");
  }
};

TEST_F(SearchTwoStageMpiTest, RanksInterleaveReplicasWithScreening) {
  ASSERT_EQ(Run(Mpi(3, "ds")), 0) << Read("stderr");
  const std::string err = Read("stderr");
  ExpectCompleteSchedule("ds");
  // Ranks 1 and 2 trained replicas (the progress names the rank), and the
  // first round's replicas were stored before the screening ended.
  EXPECT_NE(err.find(" (rank 1)\n"), std::string::npos) << err;
  EXPECT_NE(err.find(" (rank 2)\n"), std::string::npos) << err;
  const size_t first_replica = err.find("\nreplicate trial ");
  const size_t last_trial = err.find("[12/12]");
  ASSERT_NE(first_replica, std::string::npos) << err;
  ASSERT_NE(last_trial, std::string::npos) << err;
  EXPECT_LT(first_replica, last_trial) << err;
  // Every replica of the confirmed trial has the bits one process trains.
  auto config = hpo::ParseDriverConfigJson(Read("config.json"));
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  auto ctx = hpo::internal::PrepareTrials(*config);
  ASSERT_TRUE(ctx.ok()) << ctx.status().ToString();
  for (const Trial& t : Load(Path("ds"))) {
    if (t.stats.size() != 2) continue;
    const std::vector<double> x =
        json::parse(t.row.extra_json)["search"]["point"]
            .get<std::vector<double>>();
    const TrainOptions o = hpo::internal::TrialTrainOptions(ctx->config, x, 1);
    for (const ReplicaRecord& r : t.replicas) {
      if (r.replica == 0) continue;
      const int m = r.profile == ctx->profiles[0].name ? 0 : 1;
      auto local = TrainReplica(ctx->profiles[m], ctx->data, o, r.replica,
                                PerturbFamily::kSeed);
      ASSERT_TRUE(local.ok()) << local.status().ToString();
      EXPECT_EQ(local->train.record.weights_sha256, r.weights_sha256)
          << r.profile << " replica " << r.replica;
      EXPECT_EQ(local->train.record.test_acc, r.test_acc);
    }
  }
}

// The process of rank 0 (OMPI_COMM_WORLD_RANK=0) among `parent`'s children.
pid_t RankZero(pid_t parent) {
  DIR* d = opendir("/proc");
  if (d == nullptr) return -1;
  pid_t found = -1;
  while (dirent* e = readdir(d)) {
    const pid_t pid = static_cast<pid_t>(std::atoi(e->d_name));
    if (pid <= 0) continue;
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string comm, state;
    int p = 0, ppid = 0;
    if (!(stat >> p >> comm >> state >> ppid) || ppid != parent) continue;
    std::ifstream env("/proc/" + std::to_string(pid) + "/environ");
    std::stringstream ss;
    ss << env.rdbuf();
    if (ss.str().find(std::string("OMPI_COMM_WORLD_RANK=0") + '\0') !=
        std::string::npos) {
      found = pid;
    }
  }
  closedir(d);
  return found;
}

TEST_F(SearchTwoStageMpiTest, KillOfRankZeroAndResumeCompleteTheSchedule) {
  const pid_t mpirun = Spawn(Mpi(2, "ds"));
  // Kill rank 0 (the writer) once replicas are being stored.
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (CountReplicas(Path("ds")) < 4 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const pid_t rank0 = RankZero(mpirun);
  ASSERT_GT(rank0, 0);
  ASSERT_EQ(kill(rank0, SIGKILL), 0);
  EXPECT_NE(WaitExit(mpirun), 0);  // mpirun ends the job
  const int64_t before = CountReplicas(Path("ds"));
  // A whole schedule stores 3 x 10 selection and 8 confirmation replicas.
  ASSERT_LT(before, 38) << "the search finished before the kill";
  ASSERT_EQ(Run(Mpi(2, "ds", /*resume=*/true)), 0) << Read("stderr");
  ExpectCompleteSchedule("ds");
}

}  // namespace
}  // namespace xw
