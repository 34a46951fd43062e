// A dataset on a failing disk: an LD_PRELOAD library (tests/testing/
// eio_inject.c) makes the writes, reads or fsyncs of chosen files fail with
// EIO, as a dying device does. train, search, query, fsck and bundle create
// each stop with one message naming the file and the cause (exit 1), never
// crash, never take an unreadable file for a damaged one (nothing moved to
// lost+found), and leave the dataset consistent: fsck --verify is clean and
// a search resumed once the disk works again finishes with nothing lost or
// repeated.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "testing/cli_runner.h"
#include "testing/file_tree.h"
#include "testing/temp_dir.h"
#include "xwires/dataset/query/query.h"
#include "xwires/dataset/store/dataset.h"
#include "xwires/dataset/store/fsck.h"

namespace xw {
namespace {

namespace fs = std::filesystem;
using testutil::CommandResult;
using testutil::HashTree;
using testutil::ShellQuote;

const char* kTinyTrain =
    "train --arch mlp --width 0.125 --train-limit 50 --test-limit 20 --quiet "
    "--dataset ";

class IoErrorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = tmp_.Path("ds");
    auto r = testutil::Xwires(kTinyTrain + ShellQuote(dir_));
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }

  // Runs `xwires <args>` with `ops` ("write,fsync", "read") failing with EIO
  // on files whose path contains `path_text`, after `after` such calls.
  static CommandResult Failing(const std::string& path_text,
                               const std::string& ops, int after,
                               const std::string& args) {
    return testutil::Run("LD_PRELOAD=" + ShellQuote(XWIRES_EIO_INJECT) +
                         " XWIRES_EIO_PATH=" + ShellQuote(path_text) +
                         " XWIRES_EIO_OPS=" + ops +
                         " XWIRES_EIO_AFTER=" + std::to_string(after) + " " +
                         ShellQuote(testutil::XwiresBinary()) + " " + args);
  }

  // Exit 1 (a runtime failure), no crash, exactly one error line naming
  // `file` and `cause`, no HDF5 error stack.
  static void ExpectOneError(const CommandResult& r, const std::string& file,
                             const std::string& cause) {
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.err.find(file), std::string::npos)
        << "wanted " << file << " in\n"
        << r.err;
    EXPECT_NE(r.err.find(cause), std::string::npos)
        << "wanted " << cause << " in\n"
        << r.err;
    size_t lines = 0;
    for (size_t at = r.err.find("xwires: error:"); at != std::string::npos;
         at = r.err.find("xwires: error:", at + 1))
      ++lines;
    EXPECT_EQ(lines, 1u) << r.err;
    EXPECT_EQ(r.err.find("HDF5-DIAG"), std::string::npos) << r.err;
  }

  void ExpectFsckClean() const {
    auto report = Fsck(dir_, FsckOptions{false, true});
    ASSERT_TRUE(report.ok()) << report.status().ToString();
    EXPECT_TRUE(report->Clean());
    for (const FsckIssue& i : report->issues)
      ADD_FAILURE() << i.kind << ": " << i.detail;
  }

  std::string Q() const { return ShellQuote(dir_); }

  testutil::TempDir tmp_{"xwires-io-error"};
  std::string dir_;
};

TEST_F(IoErrorTest, TrainStoresNothingWhenAWriteFails) {
  const std::string before = HashTree(dir_);
  // The weights bundle cannot be written.
  ExpectOneError(Failing(dir_ + "/h5/", "write,fsync", 0, kTinyTrain + Q()),
                 dir_ + "/h5/", "Input/output error); nothing was stored");
  EXPECT_EQ(HashTree(dir_), before);
  // Its fsync fails.
  ExpectOneError(Failing(dir_ + "/h5/", "fsync", 0, kTinyTrain + Q()),
                 dir_ + "/h5/", "Input/output error); nothing was stored");
  EXPECT_EQ(HashTree(dir_), before);
  // The database's commit cannot be written: the bundle written before it
  // goes too.
  ExpectOneError(
      Failing(dir_ + "/xwires.db", "write,fsync", 0, kTinyTrain + Q()),
      dir_ + "/xwires.db", "disk I/O error");
  ExpectFsckClean();
  auto ds = Dataset::Open(dir_, OpenMode::kReadOnly).value();
  EXPECT_EQ(ds->Query(TrialQuery{}).value().size(), 1u);
  ds.reset();
  // The disk works again: the next run stores its trial.
  ASSERT_EQ(testutil::Xwires(kTinyTrain + Q()).exit_code, 0);
  ExpectFsckClean();
}

// Reads that fail are I/O errors, never "empty", "not an HDF5 file" or a
// damaged file that fsck --repair would move away.
TEST_F(IoErrorTest, ReadErrorsAreReportedAsSuchAndRepairMovesNothing) {
  const std::string before = HashTree(dir_);
  ExpectOneError(Failing(dir_ + "/xwires.db", "read", 0, "query " + Q()),
                 dir_ + "/xwires.db", "cannot read (Input/output error)");
  ExpectOneError(Failing(dir_ + "/xwires.db", "read", 3, "query " + Q()),
                 dir_ + "/xwires.db", "disk I/O error");
  for (const std::string& fsck :
       {"fsck " + Q() + " --verify", "fsck " + Q() + " --repair"}) {
    ExpectOneError(Failing(dir_ + "/h5/", "read", 0, fsck), dir_ + "/h5/",
                   "cannot read (Input/output error)");
  }
  EXPECT_FALSE(fs::exists(dir_ + "/lost+found"));
  EXPECT_EQ(HashTree(dir_), before);
  ExpectFsckClean();
}

TEST_F(IoErrorTest, BundleCreateLeavesNoPartialArchive) {
  const std::string before = HashTree(dir_);
  const std::string out = tmp_.Path("b.tar.zst");
  const std::string create =
      "bundle create " + Q() + " --trials 1 -o " + ShellQuote(out);
  ExpectOneError(Failing(dir_ + "/h5/", "read", 0, create), dir_ + "/h5/",
                 "cannot read (Input/output error)");
  EXPECT_FALSE(fs::exists(out));
  EXPECT_FALSE(fs::exists(out + ".partial"));
  ExpectOneError(Failing(out, "write", 0, create), out, "Input/output error");
  EXPECT_FALSE(fs::exists(out));
  EXPECT_FALSE(fs::exists(out + ".partial"));
  EXPECT_EQ(HashTree(dir_), before);
}

// A search whose second weights bundle meets EIO stops with the cause; once
// the disk works, --resume stores the missing trials, each point once.
TEST_F(IoErrorTest, SearchStopsAndResumesWithNothingLostOrRepeated) {
  std::ofstream(tmp_.Path("c.json"))
      << R"({"arch": "mlp", "data": {"train_limit": 100, "test_limit": 20},
           "dimensions": [{"name": "lr", "low": 1e-4, "high": 0.1, "log": true}],
           "train": {"width": 0.125, "batch_size": 50, "store_weights": true},
           "no_subspaces": true, "trials_per_subspace": 3, "objective": "abs_acc_diff",
           "budget": {"max_seconds": 0}})";
  const std::string search = "search --config " +
                             ShellQuote(tmp_.Path("c.json")) + " --dataset " +
                             Q() + " --jobs 1 --quiet --top 0";
  ExpectOneError(Failing(dir_ + "/h5/", "write", 1, search), dir_ + "/h5/",
                 "Input/output error");
  ExpectFsckClean();
  auto r = testutil::Xwires("search --dataset " + Q() +
                            " --resume 1 --quiet --top 0");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto ds = Dataset::Open(dir_, OpenMode::kReadOnly).value();
  TrialQuery q;
  q.where = "search_id = 1";
  const std::vector<TrialRow> rows = ds->Query(q).value();
  ASSERT_EQ(rows.size(), 3u);
  std::set<double> lrs;
  for (const TrialRow& t : rows) {
    EXPECT_TRUE(t.status == "ok" || t.status == "diverged") << t.status;
    lrs.insert(t.lr);
  }
  EXPECT_EQ(lrs.size(), 3u);
  ds.reset();
  ExpectFsckClean();
}

}  // namespace
}  // namespace xw
