// Hostile-but-fair command lines: every argument is checked before any work
// (numbers without saturation or wrap-around, the store's own value rules,
// config JSON without duplicate keys or runaway nesting), and SIGINT/SIGTERM
// stop `search` and `train` cleanly: exit 130/143, the search marked
// "interrupted" with a shell-quoted resume command, nothing half-written.
// Each case checks the message, the exit code and the dataset's files.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "testing/cli_runner.h"
#include "testing/command_test.h"
#include "testing/file_tree.h"
#include "testing/search_rows.h"
#include "xwires/dataset/store/dataset.h"
#include "xwires/dataset/store/fsck.h"
#include "xwires/dataset/query/query.h"

namespace xw {
namespace {

namespace fs = std::filesystem;
using testutil::SearchTrials;
using testutil::WaitExit;

// A tiny mlp training: a fraction of a second.
const std::vector<std::string> kTinyTrain = {
    "train", "--arch", "mlp", "--width", "0.125", "--train-limit", "50",
    "--test-limit", "20", "--quiet"};

class CliHardeningTest : public testutil::CommandTest {
 protected:
  std::string Write(const std::string& name, const std::string& text) const {
    std::ofstream(Path(name)) << text;
    return Path(name);
  }
  // Spawn and Run start `xwires argv...`.
  pid_t Spawn(const std::vector<std::string>& argv) const { return SpawnXwires(argv); }
  int Run(const std::vector<std::string>& argv) const { return RunXwires(argv); }

  // A dataset holding one tiny trial.
  std::string MakeDataset(const std::string& name = "ds") const {
    std::vector<std::string> argv = kTinyTrain;
    argv.insert(argv.end(), {"--dataset", Path(name)});
    EXPECT_EQ(Run(argv), 0) << Read("stderr");
    return Path(name);
  }

  static void ExpectFsckClean(const std::string& dir) {
    auto report = Fsck(dir, FsckOptions{});
    ASSERT_TRUE(report.ok()) << report.status().ToString();
    EXPECT_TRUE(report->Clean());
    for (const FsckIssue& i : report->issues) ADD_FAILURE() << i.kind << ": " << i.detail;
  }

  // Runs `argv`, expects exit 2 with `needle` in the message.
  void ExpectRefused(const std::vector<std::string>& argv, const std::string& needle) const {
    std::string shown;
    for (const std::string& a : argv) shown += a + " ";
    EXPECT_EQ(Run(argv), 2) << shown << "\n" << Read("stderr");
    EXPECT_NE(Read("stderr").find(needle), std::string::npos)
        << shown << "\nwanted: " << needle << "\ngot: " << Read("stderr");
  }
};

TEST_F(CliHardeningTest, NumbersAreParsedWithoutSaturationOrWrapAround) {
  const std::string ds = MakeDataset();
  const auto before = testutil::Snapshot(ds);
  auto train = [&](std::vector<std::string> extra) {
    std::vector<std::string> argv = kTinyTrain;
    argv.insert(argv.end(), {"--dataset", ds});
    argv.insert(argv.end(), extra.begin(), extra.end());
    return argv;
  };
  ExpectRefused(train({"--batch-size", "99999999999999999999"}),
                "--batch-size: 99999999999999999999 does not fit a 64-bit integer");
  ExpectRefused(train({"--threads", "4294967296"}),
                "--threads: 4294967296 is out of range [-2147483648, 2147483647]");
  ExpectRefused(train({"--seed", "-1"}), "--seed: -1 is out of range [0, 9223372036854775807]");
  ExpectRefused(train({"--epochs", "0x10"}), "--epochs: '0x10' is not an integer");
  ExpectRefused(train({"--epochs", "1e3"}), "--epochs: '1e3' is not an integer");
  ExpectRefused({"query", ds, "--limit", "99999999999999999999"},
                "--limit: 99999999999999999999 is out of range [-1, 9223372036854775807]");
  ExpectRefused({"query", ds, "--offset", "-5"}, "--offset: -5 is out of range");
  ExpectRefused({"query", ds, "--limit", "ten"}, "--limit: 'ten' is not an integer");
  ExpectRefused({"search", "--dataset", ds, "--trials-per-subspace", "0"},
                "--trials-per-subspace: 0 is out of range [1, 2147483647]");
  ExpectRefused({"search", "--dataset", ds, "--seed", "-1"}, "--seed: -1 is out of range");
  ExpectRefused({"search", "--dataset", ds, "--jobs", "4294967296"},
                "--jobs: 4294967296 is out of range [0, 2147483647]");
  EXPECT_TRUE(testutil::Snapshot(ds) == before) << "the dataset's files changed";
  ExpectFsckClean(ds);
  // In range still works: the largest seed the store holds.
  std::vector<std::string> ok = train({"--seed", "9223372036854775807"});
  EXPECT_EQ(Run(ok), 0) << Read("stderr");
  EXPECT_EQ(Run({"query", ds, "--limit", "1", "--offset", "1", "--format", "csv"}), 0);
  EXPECT_NE(Read("stdout").find(",9223372036854775807,"), std::string::npos) << Read("stdout");
}

TEST_F(CliHardeningTest, SearchConfigWithDuplicateKeysOrDeepNestingIsRefused) {
  const std::string ds = Path("ds");
  ExpectRefused({"search", "--dataset", ds, "--config",
                 Write("dup.json", R"({"train": {"batch_size": 50, "batch_size": 5000}})")},
                "search config: duplicate key 'train.batch_size'");
  EXPECT_FALSE(fs::exists(ds));
  ExpectRefused({"search", "--dataset", ds, "--config",
                 Write("dup_top.json", R"({"arch": "mlp", "arch": "vgg16"})")},
                "search config: duplicate key 'arch'");
  std::string deep = R"({"train": )" + std::string(100000, '[') + std::string(100000, ']') + "}";
  ExpectRefused({"search", "--dataset", ds, "--config", Write("deep.json", deep)},
                "search config: nested deeper than 64 levels at 'train");
  EXPECT_FALSE(fs::exists(ds));
  // A profile file likewise.
  ExpectRefused({"train", "--arch", "mlp", "--profiles",
                 "torch," + Write("p.json", R"({"name": "a", "name": "b"})"), "--out",
                 Path("out")},
                "profile: duplicate key 'name'");
  EXPECT_FALSE(fs::exists(Path("out")));
}

TEST_F(CliHardeningTest, StatusesAreTheStoresOwn) {
  const std::string ds = MakeDataset();
  const auto before = testutil::Snapshot(ds);
  ExpectRefused({"query", ds, "--status", "bogus"},
                "unknown trial status 'bogus' (ok, diverged, failed, incomplete, pending)");
  ExpectRefused({"query", ds, "--status", "ok", "--status", "OK", "--count"},
                "unknown trial status 'OK'");
  EXPECT_TRUE(testutil::Snapshot(ds) == before) << "the dataset's files changed";
  EXPECT_EQ(Run({"query", ds, "--status", "ok", "--count"}), 0) << Read("stderr");
  EXPECT_EQ(Read("stdout"), "1\n");
}

TEST_F(CliHardeningTest, TrainingTheStoreWouldRefuseWritesNothing) {
  const std::string ds = MakeDataset();
  const auto before = testutil::Snapshot(ds);
  auto train = [&](std::vector<std::string> extra) {
    std::vector<std::string> argv = kTinyTrain;
    argv.insert(argv.end(), {"--dataset", ds, "--out", Path("out")});
    argv.insert(argv.end(), extra.begin(), extra.end());
    return argv;
  };
  // The store's rule (lr > 0) refuses it before training: no weights, no
  // metrics, no trial, and no sign of a training in the output.
  ExpectRefused(train({"--lr", "0"}), "trial: lr 0 is not a finite number > 0");
  EXPECT_EQ(Read("stdout"), "");
  EXPECT_FALSE(fs::exists(Path("out")));
  ExpectRefused(train({"--batch-size", "9007199254740993"}),
                "trial: batch_size 9007199254740993 is above 2^53");
  EXPECT_FALSE(fs::exists(Path("out")));
  // A profile whose name the store cannot hold.
  std::ifstream in(std::string(XWIRES_SOURCE_DIR) + "/trainers/profiles/torch.json");
  std::stringstream torch;
  torch << in.rdbuf();
  std::string text = torch.str();
  const size_t at = text.find("\"torch\"");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 7, "\"bad name/..\"");
  ExpectRefused(train({"--profiles", "torch," + Write("bad.json", text)}),
                "trial: model 'bad name/..': profile name must be 1-64 of [A-Za-z0-9_.-]");
  EXPECT_FALSE(fs::exists(Path("out")));
  EXPECT_TRUE(testutil::Snapshot(ds) == before) << "the dataset's files changed";
  ExpectFsckClean(ds);
}

TEST_F(CliHardeningTest, FiltersHaveLimits) {
  const std::string ds = MakeDataset();
  const auto before = testutil::Snapshot(ds);
  // 8,000 nested parentheses and 20,000 '!' crashed the parser (stack): deep
  // texts are refused for their nesting, longer ones for their size.
  ExpectRefused({"query", ds, "--where", std::string(8000, '(') + "lr > 0" + std::string(8000, ')')},
                "filter nested deeper than 64 levels at position");
  std::string nots;
  for (int i = 0; i < 3000; ++i) nots += "not ";
  ExpectRefused({"query", ds, "--where", nots + "lr > 0"},
                "filter nested deeper than 64 levels at position");
  ExpectRefused({"query", ds, "--where", std::string(10000, '!') + "lr > 0"},
                "filter nested deeper than 64 levels at position");
  // 1,200 'or' terms reached SQLite's expression depth limit (exit 1).
  std::string ors = "lr > 0";
  for (int i = 1; i < 1200; ++i) ors += " or lr > 0";
  ExpectRefused({"query", ds, "--where", ors}, "filter has more than 256 comparisons");
  ExpectRefused({"stats", ds, "--where", ors}, "filter has more than 256 comparisons");
  const std::string wide = "diff > 0 and " + std::string(20000, ' ') + "lr > 0";
  ExpectRefused({"query", ds, "--where", wide},
                "filter is " + std::to_string(wide.size()) +
                    " bytes long, more than the limit of 16384");
  ExpectRefused({"query", ds, "--where", std::string(20000, '!') + "lr > 0"},
                "filter is 20006 bytes long");
  // At the limits it still works.
  std::string deep = std::string(63, '(') + "lr > 0" + std::string(63, ')');
  std::string many = "lr > 0";
  for (int i = 1; i < 256; ++i) many += " or lr > 0";
  EXPECT_EQ(Run({"query", ds, "--count", "--where", deep}), 0) << Read("stderr");
  EXPECT_EQ(Read("stdout"), "1\n");
  EXPECT_EQ(Run({"query", ds, "--count", "--where", many}), 0) << Read("stderr");
  EXPECT_EQ(Read("stdout"), "1\n");
  EXPECT_TRUE(testutil::Snapshot(ds) == before) << "the dataset's files changed";
}

// 4 subspaces (lr x epochs) of `per` trials; an mlp on 600 images.
std::string SearchConfig(int per) {
  return R"({"arch": "mlp", "data": {"train_limit": 600, "test_limit": 100},
      "dimensions": [{"name": "lr", "low": 1e-4, "high": 0.1, "log": true},
                     {"name": "epochs", "type": "integer", "low": 1, "high": 3}],
      "train": {"width": 0.125, "batch_size": 50},
      "trials_per_subspace": )" +
         std::to_string(per) + R"(, "objective": "abs_acc_diff", "budget": {"max_seconds": 0}})";
}

std::string SearchStatus(const std::string& ds) {
  auto d = Dataset::Open(ds, OpenMode::kReadOnly);
  if (!d.ok()) return "?";
  auto searches = (*d)->Searches();
  return searches.ok() && searches->size() == 1 ? (*searches)[0].record.status : "?";
}

// Starts a search on `ds` and sends `sig` once it has finished a trial.
int StopSearch(const std::string& ds, int sig, pid_t pid) {
  size_t finished = 0;
  for (int i = 0; i < 1200 && finished < 1; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    finished = 0;
    for (const TrialRow& r : SearchTrials(ds, false))
      finished += r.status == "ok" || r.status == "diverged";
  }
  EXPECT_EQ(kill(pid, sig), 0);
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST_F(CliHardeningTest, SigintStopsTheSearchResumablyWithAQuotedHint) {
  // A dataset path with a space and a quote: the hint must survive a shell.
  const std::string ds = Path("my 'ds'");
  const std::string config = Write("c.json", SearchConfig(4));
  const pid_t pid = Spawn({"search", "--config", config, "--dataset", ds, "--jobs", "2"});
  EXPECT_EQ(StopSearch(ds, SIGINT, pid), 130) << Read("stderr");
  const std::string err = Read("stderr");
  EXPECT_NE(err.find("xwires: SIGINT: search 1 was interrupted"), std::string::npos) << err;
  const std::string quoted = "'" + Path("my '\\''ds'\\''") + "'";
  EXPECT_NE(err.find("continue with: xwires search --dataset " + quoted + " --resume 1"),
            std::string::npos)
      << err << "\nwanted " << quoted;
  EXPECT_EQ(SearchStatus(ds), "interrupted");
  const auto before = SearchTrials(ds, true);
  ASSERT_LT(before.size(), 16u) << "the search finished before the signal";
  ExpectFsckClean(ds);

  // The printed command, run by a shell, finishes the search.
  const size_t at = err.find("continue with: ") + 15;
  const std::string command = err.substr(at, err.find('\n', at) - at);
  const std::string shell =
      std::string(XWIRES_BINARY_DIR) + "/" + command + " --quiet >/dev/null 2>&1";
  EXPECT_EQ(std::system(shell.c_str()), 0) << shell;
  EXPECT_EQ(SearchStatus(ds), "done");
  std::set<int64_t> ids;
  for (const TrialRow& r : SearchTrials(ds, true)) {
    EXPECT_TRUE(r.status == "ok" || r.status == "diverged") << r.id << " " << r.status;
    ids.insert(r.id);
  }
  EXPECT_EQ(ids.size(), 16u);
  ExpectFsckClean(ds);
}

TEST_F(CliHardeningTest, SigtermStopsTheSearchWithExit143) {
  const std::string ds = Path("ds");
  const pid_t pid =
      Spawn({"search", "--config", Write("c.json", SearchConfig(4)), "--dataset", ds});
  EXPECT_EQ(StopSearch(ds, SIGTERM, pid), 143) << Read("stderr");
  EXPECT_NE(Read("stderr").find("xwires: SIGTERM: search 1 was interrupted"),
            std::string::npos)
      << Read("stderr");
  EXPECT_NE(Read("stderr").find("continue with: xwires search --dataset " + ds + " --resume 1"),
            std::string::npos)
      << Read("stderr");
  EXPECT_EQ(SearchStatus(ds), "interrupted");
  ExpectFsckClean(ds);
}

TEST_F(CliHardeningTest, SigtermDuringTrainingWritesNothing) {
  const std::string ds = MakeDataset();
  const auto before = testutil::Snapshot(ds);
  // Long enough to be caught mid-training: many small batches.
  const pid_t pid = Spawn({"train", "--arch", "mlp", "--width", "0.125", "--train-limit",
                           "2000", "--batch-size", "1", "--epochs", "50", "--dataset", ds,
                           "--out", Path("out"), "--quiet"});
  // The output directory appears once every input is accepted, just before
  // training starts (the handlers are in place by then).
  for (int i = 0; i < 1200 && !fs::exists(Path("out")); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ASSERT_EQ(kill(pid, SIGTERM), 0);
  EXPECT_EQ(WaitExit(pid), 143) << Read("stderr");
  const std::string err = Read("stderr");
  EXPECT_EQ(err.rfind("xwires: SIGTERM: profile torch: training was stopped", 0), 0u) << err;
  EXPECT_NE(err.find("; nothing was written"), std::string::npos) << err;
  EXPECT_TRUE(testutil::Snapshot(ds) == before) << "the dataset's files changed";
  EXPECT_TRUE(!fs::exists(Path("out")) || fs::is_empty(Path("out")));
}

}  // namespace
}  // namespace xw
