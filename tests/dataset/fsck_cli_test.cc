// CLI error handling (bad expressions, corrupt files, newer schemas: clear
// error, exit 2, nothing changed), fsck detection/repair, and writers killed
// at random moments never leaving a row that points at a missing file.
#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "testing/cli_runner.h"
#include "testing/file_tree.h"
#include "testing/temp_dir.h"
#include "xwires/dataset/query/query.h"
#include "xwires/dataset/store/dataset.h"
#include "xwires/dataset/store/fsck.h"

namespace xw {
namespace {

namespace fs = std::filesystem;
using testutil::ShellQuote;
using testutil::Xwires;

TrialRecord WeightedTrial(int i) {
  TrialRecord t;
  t.arch = "simple_cnn";
  t.lr = 0.001 * (i + 1);
  t.batch_size = 32;
  t.epochs = 2;
  t.divergence = 0.01 * i;
  t.external_id = "t" + std::to_string(i);
  for (const char* p : {"torch", "tf"}) {
    ModelRecord m;
    m.profile = p;
    m.test_acc = p[1] == 'f' ? 0.5 + t.divergence : 0.5;
    Tensor w({8, 8}, static_cast<float>(i));
    m.weights.push_back({"fc.weight", w});
    m.curves = {{1, 1.0, 1.0, 0.5, 1.0, 0.5}};
    t.models.push_back(std::move(m));
  }
  return t;
}

class CliFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = tmp_.path() + "/ds";
    auto ds = Dataset::Open(dir_, OpenMode::kCreate).value();
    for (int i = 0; i < 3; ++i)
      ids_.push_back(ds->AddTrial(WeightedTrial(i)).value());
  }
  std::string Q() const { return ShellQuote(dir_); }
  // The bundle file of trial i (relative path).
  std::string FileOf(int i) {
    auto ds = Dataset::Open(dir_).value();
    return ds->GetTrial(ids_[i]).value().models[0].h5_file;
  }

  testutil::TempDir tmp_;
  std::string dir_;
  std::vector<int64_t> ids_;
};

TEST_F(CliFixture, BadExpressionsFailCleanlyAndChangeNothing) {
  std::string before = testutil::HashTree(dir_);
  struct Case {
    std::string args, message;
  };
  for (const Case& c : std::vector<Case>{
           {"query " + Q() + " --where 'lrr > 1'",
            "unknown field 'lrr' at position 1"},
           {"query " + Q() + " --where 'lr > > 1'",
            "expected a number for field 'lr' at position 6"},
           {"query " + Q() + " --where 'lr > 1 and (diff < 2'", "missing ')'"},
           {"query " + Q() + " --sort -bogus", "unknown field 'bogus'"},
           {"query " + Q() + " --format xml", "unknown format 'xml'"},
           {"query " + Q() + " --near 'lr=abc'",
            "near: value of 'lr' is not a number"},
           {"stats " + Q() + " --by color", "unknown grouping 'color'"},
           {"show " + Q() + " 999", "no trial with id 999"},
           {"query " + ShellQuote(tmp_.path() + "/nope"),
            "no such dataset directory"},
       }) {
    auto r = Xwires(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.args << "\n"
                                                        << r.err;
  }
  EXPECT_EQ(testutil::HashTree(dir_), before);
  EXPECT_FALSE(fs::exists(tmp_.path() + "/nope"));
}

TEST_F(CliFixture, ReadOnlyCommandsChangeNothing) {
  std::string before = testutil::HashTree(dir_);
  for (const std::string& args :
       {"query " + Q() + " --format json", "stats " + Q(), "top " + Q(),
        "export " + Q(), "export " + Q() + " --format json",
        "show " + Q() + " 1 --curves", "fsck " + Q() + " --verify"}) {
    auto r = Xwires(args);
    EXPECT_EQ(r.exit_code, 0) << args << "\n" << r.err;
  }
  EXPECT_EQ(testutil::HashTree(dir_), before);
}

TEST_F(CliFixture, CorruptDatabaseAndNewerSchemaAreRefused) {
  std::string db = dir_ + "/xwires.db";
  ASSERT_EQ(
      std::system(
          ("/usr/bin/python3 -c " +
           ShellQuote(
               "import sqlite3; c = sqlite3.connect('" + db +
               "'); c.execute(\"INSERT INTO schema_version VALUES (5, 'x', "
               "'future')\"); c.commit(); c.close()"))
              .c_str()),
      0);
  std::string before = testutil::HashTree(dir_);
  auto r = Xwires("stats " + Q());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(
      r.err.find("schema version 5 is newer than this xwires supports (4)"),
      std::string::npos)
      << r.err;
  EXPECT_EQ(Xwires("fsck " + Q() + " --repair").exit_code, 2);
  EXPECT_EQ(testutil::HashTree(dir_), before);

  std::ofstream(db, std::ios::trunc | std::ios::binary)
      << std::string(4096, 'x');
  before = testutil::HashTree(dir_);
  r = Xwires("query " + Q());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("xwires.db: not an SQLite database"), std::string::npos)
      << r.err;
  EXPECT_EQ(testutil::HashTree(dir_), before);
}

TEST_F(CliFixture, TruncatedHdf5IsReportedByShowAndFsck) {
  std::string rel = FileOf(1);
  fs::resize_file(dir_ + "/" + rel, fs::file_size(dir_ + "/" + rel) / 3);
  std::string before = testutil::HashTree(dir_);
  auto r = Xwires("show " + Q() + " " + std::to_string(ids_[1]) + " --curves");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(rel), std::string::npos) << r.err;
  auto f = Xwires("fsck " + Q());
  EXPECT_EQ(f.exit_code, 2);
  EXPECT_NE(f.out.find("damaged-file: " + rel), std::string::npos) << f.out;
  EXPECT_EQ(testutil::HashTree(dir_), before);
  auto fix = Xwires("fsck " + Q() + " --repair");
  EXPECT_EQ(fix.exit_code, 0) << fix.out << fix.err;
  EXPECT_TRUE(
      fs::exists(dir_ + "/lost+found/" + fs::path(rel).filename().string()));
  EXPECT_EQ(Xwires("fsck " + Q()).exit_code, 0);
  auto ds = Dataset::Open(dir_).value();
  EXPECT_EQ(ds->Count({}).value(), 2);
}

TEST_F(CliFixture, FsckFindsAndRepairsOrphansTempFilesAndMissingFiles) {
  std::string missing = FileOf(0);
  fs::remove(dir_ + "/" + missing);
  fs::create_directories(dir_ + "/h5/zz");
  fs::copy_file(dir_ + "/" + FileOf(2), dir_ + "/h5/zz/orphan.h5");
  std::ofstream(dir_ + "/h5/zz/x.h5.tmp-99-0") << "partial";
  std::string before = testutil::HashTree(dir_);
  auto r = Xwires("fsck " + Q());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("missing-file: " + missing), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("orphan-file: h5/zz/orphan.h5"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("temp-file: h5/zz/x.h5.tmp-99-0"), std::string::npos)
      << r.out;
  EXPECT_NE(r.err.find("3 problem(s) found; run with --repair"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(testutil::HashTree(dir_),
            before);  // checking alone changes nothing

  auto fix = Xwires("fsck " + Q() + " --repair");
  EXPECT_EQ(fix.exit_code, 0) << fix.out << fix.err;
  EXPECT_EQ(Xwires("fsck " + Q() + " --verify").exit_code, 0);
  EXPECT_TRUE(fs::exists(dir_ + "/lost+found/orphan.h5"));
  EXPECT_FALSE(fs::exists(dir_ + "/h5/zz/x.h5.tmp-99-0"));
  auto ds = Dataset::Open(dir_).value();
  EXPECT_EQ(ds->Count({}).value(), 2);
  EXPECT_EQ(ds->GetTrial(ids_[0]).status().code(), Status::Code::kNotFound);
}

// A value planted with SQL (as a hand edit or an older writer would leave
// it) breaks the store's rules: fsck reports every such trial, by id, field
// and value, and changes nothing.
TEST_F(CliFixture, FsckReportsRowsThatBreakTheValueRules) {
  {
    SQLite::Database db(dir_ + "/xwires.db", SQLite::OPEN_READWRITE);
    db.exec("UPDATE models SET test_acc = 2.5 WHERE trial_id = " + std::to_string(ids_[0]) +
            " AND profile = 'tf'");
    db.exec("UPDATE trials SET lr = -1 WHERE id = " + std::to_string(ids_[2]));
  }
  const std::string before = testutil::HashTree(dir_);
  auto r = Xwires("fsck " + Q());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("invalid-value"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("model 'tf': test_acc 2.5 is not an accuracy in [0, 1]"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("lr -1 is not a finite number > 0"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("2 problem(s) found"), std::string::npos) << r.err;
  EXPECT_EQ(testutil::HashTree(dir_), before);
}

// A hand-edited dataset cannot smuggle an impossible value into another by
// merge: the store's gate rejects the call, naming the value, and the target
// stays byte-identical.
TEST_F(CliFixture, MergeFromAHandEditedDatasetIsRejected) {
  const std::string target = tmp_.path() + "/target";
  ASSERT_TRUE(Dataset::Open(target, OpenMode::kCreate).ok());
  {
    SQLite::Database db(dir_ + "/xwires.db", SQLite::OPEN_READWRITE);
    db.exec("UPDATE trials SET adam_eps = -1e-8 WHERE id = " + std::to_string(ids_[1]));
  }
  const std::string before = testutil::HashTree(target);
  auto r = Xwires("merge " + ShellQuote(target) + " " + Q());
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("adam_eps -1e-08 is not a finite number > 0"), std::string::npos)
      << r.err;
  EXPECT_EQ(testutil::HashTree(target), before);
}

// A writer is SIGKILLed at a random moment of adding trials; whatever the
// moment, no row may point at a missing or partial file, and fsck --repair
// leaves a consistent dataset whose every weight set loads.
TEST(KilledWriter, NeverLeavesRowsPointingAtMissingFiles) {
  testutil::TempDir tmp;
  std::string dir = tmp.path() + "/ds";
  Dataset::Open(dir, OpenMode::kCreate).value();
  auto stored = [&] { return Dataset::Open(dir).value()->Count({}).value(); };
  // Four rounds; more (each waiting longer) while none has committed a trial
  // yet, as on a loaded machine whose fsyncs take tens of milliseconds.
  for (int round = 0; round < 4 || (round < 16 && stored() == 0); ++round) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      auto ds = Dataset::Open(dir, OpenMode::kReadWrite);
      if (!ds.ok()) _exit(10);
      // Values the store accepts (accuracies in [0, 1]) in every round;
      // unique names.
      for (int i = 0;; ++i) {
        TrialRecord t = WeightedTrial(i % 40);
        t.external_id = "t" + std::to_string(round * 1000 + i);
        (void)(*ds)->AddTrial(t);
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(40 + 37 * round));
    kill(pid, SIGKILL);
    testutil::WaitExit(pid);
    auto check = Fsck(dir, {});
    ASSERT_TRUE(check.ok()) << check.status().ToString();
    for (const FsckIssue& i : check->issues) {
      EXPECT_TRUE(i.kind == "orphan-file" || i.kind == "temp-file")
          << "round " << round << ": " << i.kind << " " << i.path << " "
          << i.detail;
    }
    auto fixed = Fsck(dir, {/*repair=*/true, /*verify_weights=*/true});
    ASSERT_TRUE(fixed.ok());
    EXPECT_TRUE(fixed->Clean());
  }
  auto ds = Dataset::Open(dir).value();
  auto rows = ds->Query({}).value();
  EXPECT_GT(rows.size(), 0u);
  for (const auto& r : rows) {
    for (const auto& m : r.models)
      EXPECT_TRUE(ds->LoadWeights(m.id).ok()) << r.id;
  }
}

}  // namespace
}  // namespace xw
