// A living dataset on hostile storage: an empty, truncated or corrupt
// xwires.db is refused by fsck and every writer (exit 2, nothing created
// beside the weight files), `fsck --repair` moves no file it cannot account
// for without --force, and a dataset on read-only storage (chattr +i, a
// read-only bind mount, chmod a-w for a non-root user) is fully readable by
// the CLI without a -wal or -shm file appearing. Each case checks the
// message, the exit code and that the dataset's files are byte-identical.
//
// The read-only cases use the real mechanisms where the container allows
// them (root with CAP_LINUX_IMMUTABLE / CAP_SYS_ADMIN, a `nobody` user) and
// are skipped, saying why, where it does not.
#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "testing/cli_runner.h"
#include "testing/file_tree.h"
#include "testing/temp_dir.h"
#include "xwires/dataset/store/dataset.h"
#include "xwires/dataset/query/query.h"
#include "xwires/dataset/store/fsck.h"

namespace xw {
namespace {

namespace fs = std::filesystem;
using testutil::HashTree;
using testutil::ShellQuote;
using testutil::Xwires;

TrialRecord SmallTrial(int i) {
  TrialRecord t;
  t.arch = "simple_cnn";
  t.lr = 0.001 * (i + 1);
  t.batch_size = 32;
  t.epochs = 1;
  t.divergence = 0.01 * i;
  t.external_id = "s" + std::to_string(i);
  for (const char* p : {"torch", "tf"}) {
    ModelRecord m;
    m.profile = p;
    m.test_acc = p[1] == 'f' ? 0.5 + t.divergence : 0.5;
    m.weights.push_back({"fc.weight", Tensor({4, 4}, static_cast<float>(i))});
    m.curves = {{1, 1.0, 1.0, 0.5, 1.0, 0.5}};
    t.models.push_back(std::move(m));
  }
  return t;
}

// A tiny `xwires train` into a dataset: a fraction of a second.
const char* kTinyTrain =
    "train --arch mlp --width 0.125 --train-limit 50 --test-limit 20 --quiet "
    "--dataset ";

class StorageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = tmp_.path() + "/ds";
    auto ds = Dataset::Open(dir_, OpenMode::kCreate).value();
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(ds->AddTrial(SmallTrial(i)).ok());
  }
  std::string Q() const { return ShellQuote(dir_); }
  std::string Db() const { return dir_ + "/xwires.db"; }

  // Runs `args`; expects exit 2 and `needle` in stderr.
  void ExpectRefused(const std::string& args, const std::string& needle) {
    auto r = Xwires(args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.out << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos)
        << args << "\nwanted: " << needle << "\ngot: " << r.err;
  }

  // Every writer and fsck refuse the dataset with `needle`, and change no
  // file of it.
  void ExpectEveryWriterRefuses(const std::string& needle) {
    const std::string before = HashTree(dir_);
    ExpectRefused("fsck " + Q(), needle);
    ExpectRefused("fsck " + Q() + " --repair", needle);
    ExpectRefused("fsck " + Q() + " --repair --force", needle);
    ExpectRefused(std::string(kTinyTrain) + Q(), needle);
    ExpectRefused("migrate " + Q(), needle);
    auto w = Dataset::Open(dir_, OpenMode::kCreate);
    EXPECT_EQ(w.status().code(), Status::Code::kCorruption) << w.status().ToString();
    EXPECT_EQ(HashTree(dir_), before);
    EXPECT_FALSE(fs::exists(dir_ + "/lost+found"));
  }

  testutil::TempDir tmp_;
  std::string dir_;
};

TEST_F(StorageTest, ZeroLengthDatabaseIsRefusedNotRecreated) {
  std::ofstream(Db(), std::ios::trunc);
  ExpectEveryWriterRefuses("xwires.db: empty (zero-length) database file");
  ExpectRefused("query " + Q(), "empty (zero-length)");
  // Python's writer open refuses it too.
  const std::string before = HashTree(dir_);
  auto py = testutil::Run(
      "PYTHONPATH=" XWIRES_BINARY_DIR "/python /usr/bin/python3 -c " +
      ShellQuote("import sys, xwires\ntry:\n    xwires.open(sys.argv[1], mode='w')\n"
                 "except xwires.CorruptionError as e:\n    print(e)\n") +
      " " + Q());
  EXPECT_EQ(py.exit_code, 0) << py.err;
  EXPECT_NE(py.out.find("xwires.db: empty (zero-length) database file"), std::string::npos)
      << py.out << py.err;
  EXPECT_EQ(HashTree(dir_), before);
}

TEST_F(StorageTest, TruncatedDatabaseIsRefused) {
  const auto size = fs::file_size(Db());
  ASSERT_GT(size, 8192u);
  fs::resize_file(Db(), size / 2);
  ExpectEveryWriterRefuses("xwires.db: truncated");
}

// SQLite's own damage detection: a b-tree page of the trials table
// overwritten with garbage. fsck lists the integrity errors (exit 2) and its
// repair changes nothing; every writer refuses with quick_check's finding.
TEST_F(StorageTest, CorruptPageIsRefusedByWritersAndRepairChangesNothing) {
  int64_t page_size = 0, root = 0;
  {
    // immutable: this look creates no -wal/-shm of its own.
    SQLite::Database db("file:" + Db() + "?immutable=1",
                        SQLite::OPEN_READONLY | SQLite::OPEN_URI);
    page_size = db.execAndGet("PRAGMA page_size").getInt64();
    root = db.execAndGet("SELECT rootpage FROM sqlite_master WHERE name = 'trials'")
               .getInt64();
  }
  ASSERT_GT(root, 1);
  {
    std::fstream f(Db(), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp((root - 1) * page_size);
    const std::string junk(64, '\x7f');
    f.write(junk.data(), junk.size());
  }
  const std::string before = HashTree(dir_);
  auto check = Xwires("fsck " + Q());
  EXPECT_EQ(check.exit_code, 2) << check.out << check.err;
  EXPECT_NE(check.out.find("sqlite-integrity"), std::string::npos) << check.out;
  EXPECT_NE(check.err.find("xwires.db fails SQLite's integrity_check"), std::string::npos)
      << check.err;
  ExpectRefused(std::string(kTinyTrain) + Q(), "xwires.db: database is corrupt (quick_check:");
  ExpectRefused("fsck " + Q() + " --repair", "xwires.db: database is corrupt (quick_check:");
  EXPECT_EQ(HashTree(dir_), before);
}

// A schema text corrupted into another valid one (a column renamed in the
// file's bytes) is reported as corruption, not as a later "no such column".
TEST_F(StorageTest, CorruptSchemaTextIsReportedAsCorruption) {
  std::string bytes;
  {
    std::ifstream in(Db(), std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    bytes = ss.str();
  }
  const size_t at = bytes.find("fingerprint_json TEXT NOT NULL,\n                  isa");
  ASSERT_NE(at, std::string::npos);
  bytes[at + 15] = 'X';  // fingerprint_jsoX
  std::ofstream(Db(), std::ios::binary | std::ios::trunc) << bytes;
  const std::string before = HashTree(dir_);
  for (const char* cmd : {"query ", "show ", "stats ", "fsck "}) {
    std::string args = cmd + Q() + (std::string(cmd) == "show " ? " 1" : "");
    ExpectRefused(args,
                  "xwires.db: the stored schema is corrupt: table models lacks column(s) "
                  "fingerprint_json and has unknown column(s) fingerprint_jsoX (schema version");
    auto r = Xwires(args);
    EXPECT_EQ(r.err.find("no such column"), std::string::npos) << r.err;
  }
  ExpectRefused(std::string(kTinyTrain) + Q(), "the stored schema is corrupt");
  EXPECT_EQ(HashTree(dir_), before);
}

// More orphan files than crashed writers leave are listed and kept: moved
// only with --force, each named with where it went; a repair whose move
// fails reports the problem as unrepaired (exit 2), never success.
TEST_F(StorageTest, RepairMovesUnaccountedOrphansOnlyWithForce) {
  std::string bundle;
  {
    auto ds = Dataset::Open(dir_).value();
    bundle = ds->GetTrial(1).value().models[0].h5_file;
  }
  fs::create_directories(dir_ + "/h5/zz");
  const int n = kMaxAccountedOrphans + 2;
  for (int i = 0; i < n; ++i)
    fs::copy_file(dir_ + "/" + bundle, dir_ + "/h5/zz/orphan" + std::to_string(i) + ".h5");
  std::string before = HashTree(dir_);
  auto r = Xwires("fsck " + Q() + " --repair");
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.out.find("orphan-file: h5/zz/orphan0.h5: no model row points at it (not "
                       "moved: 6 orphan files are more than crashed writers leave; "
                       "`fsck --repair --force` moves them to lost+found/)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.err.find("6 problem(s) found that cannot be repaired"), std::string::npos)
      << r.err;
  EXPECT_EQ(HashTree(dir_), before);

  // lost+found is a file: no move can succeed, and the repair says so.
  std::ofstream(dir_ + "/lost+found") << "in the way";
  r = Xwires("fsck " + Q() + " --repair --force");
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.out.find("cannot move to lost+found"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("[repaired]"), std::string::npos) << r.out;
  fs::remove(dir_ + "/lost+found");

  r = Xwires("fsck " + Q() + " --repair --force");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  for (int i = 0; i < n; ++i) {
    const std::string name = "orphan" + std::to_string(i) + ".h5";
    EXPECT_NE(r.out.find("h5/zz/" + name + ": no model row points at it; moved to "
                         "lost+found/" + name + " [repaired]"),
              std::string::npos)
        << r.out;
    EXPECT_TRUE(fs::exists(dir_ + "/lost+found/" + name));
  }
  EXPECT_EQ(Xwires("fsck " + Q() + " --verify").exit_code, 0);
  ExpectRefused("fsck " + Q() + " --force", "--force needs --repair");
}

// ---- read-only storage ------------------------------------------------

// What a reader does on read-only storage: query, show, stats, fsck and a
// report written elsewhere all succeed, the dataset's files stay
// byte-identical and no -wal/-shm appears; a writer is refused naming the
// cause.
void ExpectFullyReadable(const std::string& dir, const std::string& out_dir,
                         const std::string& as_user, const std::string& writer_cause) {
  const std::string before = HashTree(dir);
  const std::string q = ShellQuote(dir);
  for (const std::string& args :
       {"query " + q, "query " + q + " --where 'lr > 0.0015' --format json", "show " + q + " 2",
        "stats " + q, "fsck " + q, "fsck " + q + " --verify", "top " + q,
        "report " + q + " -o " + ShellQuote(out_dir + "/r.html")}) {
    auto r = testutil::Run(as_user + ShellQuote(XWIRES_BINARY_DIR "/xwires") + " " + args);
    EXPECT_EQ(r.exit_code, 0) << args << "\n" << r.err;
  }
  EXPECT_TRUE(fs::exists(out_dir + "/r.html"));
  auto w = testutil::Run(as_user + ShellQuote(XWIRES_BINARY_DIR "/xwires") + " " +
                         kTinyTrain + q);
  EXPECT_NE(w.exit_code, 0);
  EXPECT_NE(w.err.find("xwires.db: cannot write (" + writer_cause + ")"), std::string::npos)
      << w.err;
  EXPECT_EQ(w.err.find("unable to open database file"), std::string::npos) << w.err;
  EXPECT_EQ(HashTree(dir), before);
  EXPECT_FALSE(fs::exists(dir + "/xwires.db-wal"));
  EXPECT_FALSE(fs::exists(dir + "/xwires.db-shm"));
}

TEST_F(StorageTest, ImmutableFilesAreFullyReadable) {
  const std::string flags = "chattr -R +i " + Q() + " 2>/dev/null";
  if (std::system(flags.c_str()) != 0) {
    GTEST_SKIP() << "chattr +i is not possible here (no CAP_LINUX_IMMUTABLE or a "
                    "file system without the flag)";
  }
  fs::create_directories(tmp_.path() + "/out");
  ExpectFullyReadable(dir_, tmp_.path() + "/out", "", "Operation not permitted");
  // The dataset in Python, as the CLI reads it.
  auto py = testutil::Run(
      "PYTHONPATH=" XWIRES_BINARY_DIR "/python /usr/bin/python3 -c " +
      ShellQuote("import sys, xwires\nds = xwires.open(sys.argv[1])\n"
                 "print(len(ds.query()), ds.count('lr > 0.0015'))") +
      " " + Q());
  EXPECT_EQ(py.exit_code, 0) << py.err;
  EXPECT_EQ(py.out, "3 2\n");
  ASSERT_EQ(std::system(("chattr -R -i " + Q()).c_str()), 0);
}

TEST_F(StorageTest, ReadOnlyBindMountIsFullyReadable) {
  const std::string ro = tmp_.path() + "/ro";
  fs::create_directories(ro);
  const std::string mount = "mount --bind " + Q() + " " + ShellQuote(ro) +
                            " 2>/dev/null && mount -o remount,bind,ro " + ShellQuote(ro);
  if (std::system(mount.c_str()) != 0) {
    std::system(("umount " + ShellQuote(ro) + " 2>/dev/null").c_str());
    GTEST_SKIP() << "no read-only bind mount here (needs CAP_SYS_ADMIN)";
  }
  fs::create_directories(tmp_.path() + "/out");
  ExpectFullyReadable(ro, tmp_.path() + "/out", "", "Read-only file system");
  EXPECT_EQ(std::system(("umount " + ShellQuote(ro)).c_str()), 0);
}

// chmod -R a-w, read by a user who is not root (root's writes ignore the
// mode bits): as published on a shared file server.
TEST_F(StorageTest, WriteProtectedDatasetIsFullyReadableByAnotherUser) {
  if (std::system("command -v setpriv >/dev/null && id nobody >/dev/null 2>&1") != 0 ||
      ::geteuid() != 0) {
    GTEST_SKIP() << "needs root, setpriv and a `nobody` user";
  }
  const std::string as_nobody = "setpriv --reuid=nobody --regid=nogroup --clear-groups ";
  // nobody must reach the dataset (and the binary) at all.
  if (testutil::Run(as_nobody + "test -r " + ShellQuote(Db()) + " -a -x " +
                    ShellQuote(XWIRES_BINARY_DIR "/xwires"))
          .exit_code != 0) {
    fs::permissions(tmp_.path(), fs::perms::others_exec | fs::perms::others_read,
                    fs::perm_options::add);
  }
  ASSERT_EQ(std::system(("chmod -R a-w,a+rX " + Q()).c_str()), 0);
  const std::string out = tmp_.path() + "/out";
  fs::create_directories(out);
  fs::permissions(out, fs::perms::all, fs::perm_options::add);
  ExpectFullyReadable(dir_, out, as_nobody, "Permission denied");
  ASSERT_EQ(std::system(("chmod -R u+w " + Q()).c_str()), 0);
}

// ---- a full disk ---------------------------------------------------------

// A dataset on a small tmpfs that is then filled to the last byte.
class FullDiskTest : public ::testing::Test {
 protected:
  void SetUp() override {
    mnt_ = tmp_.path() + "/mnt";
    fs::create_directories(mnt_);
    if (std::system(("mount -t tmpfs -o size=16m tmpfs " + ShellQuote(mnt_) +
                     " 2>/dev/null").c_str()) != 0) {
      GTEST_SKIP() << "cannot mount a tmpfs here (needs CAP_SYS_ADMIN)";
    }
    mounted_ = true;
    dir_ = mnt_ + "/ds";
    auto r = Xwires(std::string(kTinyTrain) + ShellQuote(dir_));
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  void TearDown() override {
    if (mounted_) std::system(("umount " + ShellQuote(mnt_)).c_str());
  }
  // Fills what is left of the tmpfs.
  void Fill() {
    auto r = testutil::Run("dd if=/dev/zero of=" + ShellQuote(mnt_ + "/filler") +
                           " bs=4k 2>/dev/null; sync");
    (void)r;
  }
  void Unfill() { fs::remove(mnt_ + "/filler"); }

  // No crash, no raw HDF5 error stack, one message naming the cause.
  static void ExpectCleanFailure(const testutil::CommandResult& r, const std::string& file,
                                 const std::string& what) {
    EXPECT_EQ(r.exit_code, 1) << what << "\n" << r.err;
    EXPECT_EQ(r.err.find("HDF5-DIAG"), std::string::npos) << what << "\n" << r.err;
    EXPECT_EQ(r.err.find("18446744073709551615"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(file), std::string::npos) << what << "\n" << r.err;
    const bool cause = r.err.find("No space left on device") != std::string::npos ||
                       r.err.find("the disk is full") != std::string::npos;
    EXPECT_TRUE(cause) << what << "\n" << r.err;
  }

  testutil::TempDir tmp_;
  std::string mnt_, dir_;
  bool mounted_ = false;
};

TEST_F(FullDiskTest, WritersFailWithOneMessageAndTheDatasetStaysIntact) {
  const std::string q = ShellQuote(dir_);
  const std::string before = HashTree(dir_);
  fs::copy(dir_, tmp_.path() + "/src", fs::copy_options::recursive);
  Fill();
  // Weights bigger than what is left: the HDF5 bundle is what fails.
  const std::string big =
      "train --arch mlp --width 1 --train-limit 50 --test-limit 20 --quiet ";
  ExpectCleanFailure(Xwires(big + "--dataset " + q), dir_ + "/", "train --dataset");
  ExpectCleanFailure(Xwires(big + "--out " + ShellQuote(mnt_ + "/out")), mnt_ + "/out/",
                     "train --out");
  auto py = testutil::Run(
      "PYTHONPATH=" XWIRES_BINARY_DIR "/python /usr/bin/python3 -c " +
      ShellQuote("import sys, xwires\ntry:\n    xwires.train('mlp', width=1, train_limit=50, "
                 "test_limit=20, dataset=sys.argv[1])\nexcept xwires.Error as e:\n"
                 "    print(type(e).__name__, e, file=sys.stderr)\n    sys.exit(1)\n") +
      " " + q);
  ExpectCleanFailure(py, dir_ + "/", "python train");
  EXPECT_NE(py.err.find("InputOutputError"), std::string::npos) << py.err;
  // A bundle of a dataset on another disk, written to the full one.
  ExpectCleanFailure(Xwires("bundle create " + ShellQuote(tmp_.path() + "/src") +
                            " --trials 1 -o " +
                            ShellQuote(mnt_ + "/b.tar.zst")),
                     mnt_ + "/b.tar.zst", "bundle create");
  EXPECT_FALSE(fs::exists(mnt_ + "/b.tar.zst.partial"));
  // Nothing half-written: the dataset's files are as before, no temp file
  // (SQLite may leave its empty -wal/-shm files: they are not data).
  // No process has the database open now, so the -shm index can go; a
  // -wal holding pages would be data and is kept (the hash then differs).
  if (fs::exists(dir_ + "/xwires.db-wal") && fs::file_size(dir_ + "/xwires.db-wal") == 0)
    fs::remove(dir_ + "/xwires.db-wal");
  fs::remove(dir_ + "/xwires.db-shm");
  EXPECT_EQ(HashTree(dir_), before);
  Unfill();
  auto check = Fsck(dir_, FsckOptions{false, true});
  ASSERT_TRUE(check.ok()) << check.status().ToString();
  EXPECT_TRUE(check->Clean());
  for (const FsckIssue& i : check->issues) ADD_FAILURE() << i.kind << ": " << i.detail;
}

// Readers on a full disk: every read-only command and Python's read mode
// succeed and leave no file (SQLite's -wal/-shm included), though the -shm a
// WAL reader normally maps has no room: while open, a reader has no -shm
// (its wal-index is in memory) and only SQLite's empty -wal, removed when
// it closes.
TEST_F(FullDiskTest, ReadersSucceedAndCreateNothing) {
  Fill();
  const std::string before = HashTree(dir_);
  const std::string q = ShellQuote(dir_);
  for (const std::string& args :
       {"query " + q, "query " + q + " --where 'lr > 0.0005' --format json", "stats " + q,
        "show " + q + " 1", "fsck " + q, "fsck " + q + " --verify", "top " + q}) {
    auto r = Xwires(args);
    EXPECT_EQ(r.exit_code, 0) << args << "\n" << r.err;
    EXPECT_FALSE(fs::exists(dir_ + "/xwires.db-wal")) << args;
    EXPECT_FALSE(fs::exists(dir_ + "/xwires.db-shm")) << args;
    if (args.rfind("show", 0) == 0) {
      EXPECT_NE(r.out.find("torch"), std::string::npos) << r.out;
    }
    if (args.rfind("fsck", 0) == 0) {
      EXPECT_NE(r.out.find("0 problem(s)"), std::string::npos) << r.out;
    }
  }
  auto py = testutil::Run(
      "PYTHONPATH=" XWIRES_BINARY_DIR "/python /usr/bin/python3 -c " +
      ShellQuote("import os, sys, xwires\nds = xwires.open(sys.argv[1])\n"
                 "print(len(ds.query()), ds.count('lr > 0.0005'),\n"
                 "      os.path.exists(sys.argv[1] + '/xwires.db-shm'))") +
      " " + q);
  EXPECT_EQ(py.exit_code, 0) << py.err;
  EXPECT_EQ(py.out, "1 1 False\n");
  EXPECT_EQ(HashTree(dir_), before);
  EXPECT_FALSE(fs::exists(dir_ + "/xwires.db-wal"));
  EXPECT_FALSE(fs::exists(dir_ + "/xwires.db-shm"));
}

// A search that meets a full disk stops with the cause; once there is
// room, --resume finishes it with nothing lost or repeated.
TEST_F(FullDiskTest, SearchResumesAfterTheDiskHadRoomAgain) {
  std::ofstream(tmp_.path() + "/c.json")
      << R"({"arch": "mlp", "data": {"train_limit": 100, "test_limit": 20},
           "dimensions": [{"name": "lr", "low": 1e-4, "high": 0.1, "log": true}],
           "train": {"width": 0.125, "batch_size": 50, "store_weights": true},
           "no_subspaces": true, "trials_per_subspace": 2, "objective": "abs_acc_diff",
           "budget": {"max_seconds": 0}})";
  const std::string q = ShellQuote(dir_);
  auto r = Xwires("search --config " + ShellQuote(tmp_.path() + "/c.json") + " --dataset " + q +
                  " --max-trials 1 --quiet --top 0");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Fill();
  r = Xwires("search --dataset " + q + " --resume 1 --quiet --top 0");
  ExpectCleanFailure(r, "xwires.db", "search --resume on a full disk");
  Unfill();
  // The first run stored its budget (--max-trials 1); the resume raises it.
  r = Xwires("search --dataset " + q + " --resume 1 --max-trials 2 --quiet --top 0");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto ds = Dataset::Open(dir_).value();
  TrialQuery all;
  all.where = "search_id = 1";
  auto rows = ds->Query(all).value();
  EXPECT_EQ(rows.size(), 2u);
  for (const TrialRow& t : rows) EXPECT_TRUE(t.status == "ok" || t.status == "diverged");
  auto check = Fsck(dir_, FsckOptions{false, true});
  ASSERT_TRUE(check.ok()) << check.status().ToString();
  for (const FsckIssue& i : check->issues) ADD_FAILURE() << i.kind << ": " << i.detail;
}

}  // namespace
}  // namespace xw
