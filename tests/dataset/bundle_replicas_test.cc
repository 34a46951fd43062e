// Replicas and their statistics in bundles (format 3), merges and fsck:
// they travel with their trials (ids remapped) and come back equal; a
// format-2 bundle of the previous release still reads; a replica file that
// was tampered with, a replica row pointing at a missing file and statistics
// that their replicas do not give are refused with the dataset unchanged;
// fsck finds and repairs statistics that their replicas do not give.
#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "bundle_test_util.h"
#include "dataset/store/model_file.h"
#include "dataset/store/sha256.h"
#include "replica_fixtures.h"
#include "testing/cli_runner.h"
#include "testing/file_tree.h"
#include "testing/temp_dir.h"
#include "xwires/dataset/bundle/bundle.h"
#include "xwires/dataset/store/fsck.h"
#include "xwires/dataset/store/replicas.h"

namespace xw {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using Entries = std::vector<std::pair<std::string, std::string>>;

using testutil::MakeReplica;
using testutil::ReplicaTrial;

constexpr int kK = 4;

// A comparable text of a trial's replicas and statistics (no ids, dates or
// file locations).
std::string Describe(const Dataset& ds, int64_t trial) {
  std::string out;
  auto reps = LoadReplicas(ds, trial, "", /*with_data=*/true);
  EXPECT_TRUE(reps.ok()) << reps.status().ToString();
  if (!reps.ok()) return "";
  for (const ReplicaRecord& r : *reps) {
    out += r.profile + "/" + r.family + "/" + std::to_string(r.replica) + " " + r.params_json +
           " " + std::to_string(r.test_acc) + " " + r.weights_sha256 + " " +
           std::to_string(r.has_weights) + " " +
           std::string(r.predictions.begin(), r.predictions.end()) + " " +
           std::to_string(r.curves.size()) + "\n";
    if (r.has_weights) {
      auto w = LoadReplicaWeights(ds, r);
      EXPECT_TRUE(w.ok()) << w.status().ToString();
    }
  }
  auto stats = LoadReplicaStats(ds, trial);
  EXPECT_TRUE(stats.ok());
  for (const ReplicaStatsRecord& s : *stats) {
    out += s.profile_a + "-" + s.profile_b + " " + s.family + " " + std::to_string(s.k_a) +
           std::to_string(s.k_b) + " " + PairStatisticsJson(s.stats) + "\n";
  }
  return out;
}

// Rewrites an archive with `entries`, recomputing the manifest's sizes and
// checksums of every file (a tamperer who knows the format).
void Rewrite(const std::string& path, Entries entries, bool fix_manifest) {
  if (fix_manifest) {
    json m = json::parse(entries[0].second);
    for (json& f : m["files"]) {
      for (const auto& [name, bytes] : entries) {
        if (f["path"] != name) continue;
        f["bytes"] = bytes.size();
        f["sha256"] = Sha256Hex(bytes);
      }
    }
    entries[0].second = m.dump(1);
  }
  std::vector<testutil::RawEntry> raw;
  for (const auto& [name, bytes] : entries) raw.push_back(testutil::File(name, bytes));
  testutil::WriteRawArchive(path, raw);
}

std::string& Entry(Entries& e, const std::string& name) {
  for (auto& [n, bytes] : e) {
    if (n == name) return bytes;
  }
  ADD_FAILURE() << "no entry " << name;
  static std::string none;
  return none;
}

class ReplicaBundleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(tmp_.path());
    a_ = Open("A");
    // Trial 1 has no replicas, trial 2 has them: ids differ once merged.
    ASSERT_TRUE(a_->AddTrial(ReplicaTrial(1)).ok());
    trial_ = *a_->AddTrial(ReplicaTrial(2));
    testutil::StoreReplicated(*a_, trial_, "ulp", 0, kK, /*weights_replica=*/1);
    bundle_ = (root_ / "r.tar.zst").string();
    auto c = CreateBundle(*a_, std::nullopt, {trial_}, bundle_);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
  }
  std::unique_ptr<Dataset> Open(const std::string& name) {
    auto d = Dataset::Open((root_ / name).string(), OpenMode::kCreate);
    EXPECT_TRUE(d.ok()) << d.status().ToString();
    return std::move(d).value();
  }
  // Imports `bundle` into a fresh dataset holding one unrelated trial;
  // expects the refusal to mention `message` and to change nothing.
  void ExpectRefused(const std::string& bundle, const std::string& message) {
    const std::string dir = (root_ / ("B" + std::to_string(++n_))).string();
    auto b = Open(fs::path(dir).filename().string());
    ASSERT_TRUE(b->AddTrial(ReplicaTrial(9)).ok());
    b.reset();
    const std::string before = testutil::HashTree(dir);
    b = Open(fs::path(dir).filename().string());
    auto v = VerifyBundle(bundle, BundleCheckers{});
    ASSERT_FALSE(v.ok());
    EXPECT_NE(v.status().message().find(message), std::string::npos) << v.status().ToString();
    auto r = ImportBundle(*b, bundle, BundleCheckers{});
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find(message), std::string::npos) << r.status().ToString();
    b.reset();
    EXPECT_EQ(testutil::HashTree(dir), before);
    auto cli = testutil::Xwires("bundle import " + dir + " " + bundle);
    EXPECT_EQ(cli.exit_code, 2) << cli.err;
    EXPECT_NE(cli.err.find(message), std::string::npos) << cli.err;
    EXPECT_EQ(testutil::HashTree(dir), before);
  }

  testutil::TempDir tmp_;
  fs::path root_;
  std::unique_ptr<Dataset> a_;
  int64_t trial_ = 0;
  std::string bundle_;
  int n_ = 0;
};

TEST_F(ReplicaBundleTest, ReplicasTravelInBundlesAndComeBackEqual) {
  auto v = VerifyBundle(bundle_, BundleCheckers{});
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(v->manifest.format_version, 3);
  EXPECT_EQ(v->replicas, 2 * kK);
  EXPECT_EQ(v->replica_stats, 1);
  const Entries entries = testutil::ReadArchiveEntries(bundle_);
  int files = 0;
  for (const auto& [name, bytes] : entries) files += name.rfind("replicas/", 0) == 0;
  EXPECT_EQ(files, 2 * kK);

  auto b = Open("B");
  ASSERT_TRUE(b->AddTrial(ReplicaTrial(9)).ok());
  ASSERT_TRUE(b->AddTrial(ReplicaTrial(10)).ok());
  auto r = ImportBundle(*b, bundle_, BundleCheckers{});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->added, 1);
  EXPECT_EQ(r->replicas_added, 2 * kK);
  EXPECT_EQ(r->replica_stats_added, 1);
  ASSERT_EQ(r->trial_ids.size(), 1u);
  EXPECT_EQ(r->trial_ids[0], 3);  // remapped: B already had trials 1 and 2
  const std::string want = Describe(*a_, trial_);
  EXPECT_NE(want.find("torch-tf ulp 44"), std::string::npos) << want;
  EXPECT_EQ(Describe(*b, r->trial_ids[0]), want);
  b.reset();
  auto f = Fsck((root_ / "B").string(), {});
  ASSERT_TRUE(f.ok());
  EXPECT_TRUE(f->Clean()) << (f->issues.empty() ? "" : f->issues[0].detail);

  // Again: the trial, its replicas and its statistics are all present.
  b = Open("B");
  r = ImportBundle(*b, bundle_, BundleCheckers{});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->added, 0);
  EXPECT_EQ(r->replicas_added, 0);
  EXPECT_EQ(r->replicas_skipped, 2 * kK);
  EXPECT_EQ(r->replica_stats_skipped, 1);
}

TEST_F(ReplicaBundleTest, ReplicasOfATrialAlreadyPresentAreAdded) {
  // B holds the trial without replicas (a bundle made before they were
  // trained): the import adds its replicas and statistics to that trial.
  auto b = Open("B");
  const int64_t stored = *b->AddTrial(ReplicaTrial(2));
  auto r = ImportBundle(*b, bundle_, BundleCheckers{});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->added, 0);
  EXPECT_EQ(r->replicas_added, 2 * kK);
  EXPECT_EQ(r->replica_stats_added, 1);
  EXPECT_EQ(Describe(*b, stored), Describe(*a_, trial_));
  b.reset();
  auto f = Fsck((root_ / "B").string(), {});
  ASSERT_TRUE(f.ok());
  EXPECT_TRUE(f->Clean());
}

TEST(ReplicaBundleFormat2, BundleOfThePreviousReleaseStillImports) {
  testutil::TempDir tmp;
  const std::string v2 =
      std::string(XWIRES_SOURCE_DIR) + "/tests/fixtures/format_v2/bundle_v2.tar.zst";
  auto v = VerifyBundle(v2, BundleCheckers{});
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(v->manifest.format_version, 2);
  EXPECT_EQ(v->replicas, 0);
  auto ds = Dataset::Open(tmp.path() + "/B", OpenMode::kCreate);
  ASSERT_TRUE(ds.ok());
  auto r = ImportBundle(**ds, v2, BundleCheckers{});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->added, 1);
  EXPECT_EQ(r->replicas_added, 0);
  const TrialRow t = *(*ds)->GetTrial(r->trial_ids[0]);
  EXPECT_EQ(t.arch, "simple_cnn");
  ASSERT_EQ(t.models.size(), 2u);
  EXPECT_DOUBLE_EQ(t.models[0].test_acc, 0.2);
  EXPECT_TRUE((*ds)->LoadWeights(t.models[0].id).ok());
}

TEST_F(ReplicaBundleTest, TamperedReplicaFileIsRefused) {
  Entries e = testutil::ReadArchiveEntries(bundle_);
  std::string& file = Entry(e, "replicas/0/2.h5");
  file[file.size() / 2] ^= 0x5a;
  const std::string evil = (root_ / "evil.tar.zst").string();
  Rewrite(evil, e, /*fix_manifest=*/false);
  ExpectRefused(evil, "replicas/0/2.h5");

  // The manifest fixed too, but the file's predictions changed: a valid
  // replica file whose predictions the statistics were not computed on.
  e = testutil::ReadArchiveEntries(bundle_);
  const fs::path work = root_ / "work.h5";
  // Files are numbered in row order (profile, family, replica): torch
  // replica 2 is replicas/0/2.h5. Its first prediction flips between right
  // and wrong, which moves the measured floor.
  ReplicaRecord x = MakeReplica(0, "torch", "ulp", 2);
  x.predictions[0] = x.predictions[0] == 0 ? 1 : 0;
  BundleModel bm{"replica", nullptr, &x.curves, {}, &x.predictions};
  ASSERT_TRUE(WriteBundle(work.string(), {bm}).ok());
  json reps = json::parse(Entry(e, "replicas.json"));
  EXPECT_EQ(reps["replicas"][2]["file"], "replicas/0/2.h5");
  EXPECT_EQ(reps["replicas"][2]["profile"], "torch");
  EXPECT_EQ(reps["replicas"][2]["replica"], 2);
  Entry(e, "replicas/0/2.h5") = testutil::ReadFileBytes(work.string());
  Rewrite(evil, e, /*fix_manifest=*/true);
  ExpectRefused(evil, "its replicas give");
}

TEST_F(ReplicaBundleTest, StatisticsTheirReplicasDoNotGiveAreRefused) {
  Entries e = testutil::ReadArchiveEntries(bundle_);
  json reps = json::parse(Entry(e, "replicas.json"));
  const double p = reps["statistics"][0]["result"]["permutation_p"].get<double>();
  reps["statistics"][0]["result"]["permutation_p"] = p / 2;
  Entry(e, "replicas.json") = reps.dump();
  const std::string evil = (root_ / "evil.tar.zst").string();
  Rewrite(evil, e, /*fix_manifest=*/true);
  ExpectRefused(evil, "statistics[0] (trial 0): torch vs tf (ulp): the stored permutation_p is");

  e = testutil::ReadArchiveEntries(bundle_);
  reps = json::parse(Entry(e, "replicas.json"));
  json& verdict = reps["statistics"][0]["result"]["verdict"];
  verdict = verdict == "significant" ? "within_noise" : "significant";
  Entry(e, "replicas.json") = reps.dump();
  Rewrite(evil, e, /*fix_manifest=*/true);
  ExpectRefused(evil, "the stored verdict is");
}

TEST_F(ReplicaBundleTest, ReplicaRowPointingAtAMissingFileIsRefused) {
  Entries e = testutil::ReadArchiveEntries(bundle_);
  json reps = json::parse(Entry(e, "replicas.json"));
  reps["replicas"][3]["file"] = "replicas/0/99.h5";
  Entry(e, "replicas.json") = reps.dump();
  const std::string evil = (root_ / "evil.tar.zst").string();
  Rewrite(evil, e, /*fix_manifest=*/true);
  ExpectRefused(evil, "'replicas/0/99.h5' is not listed in manifest.json");

  // The file dropped from the archive and the manifest, the row kept.
  e = testutil::ReadArchiveEntries(bundle_);
  const std::string gone = json::parse(Entry(e, "replicas.json"))["replicas"][3]["file"];
  json m = json::parse(e[0].second);
  json files = json::array();
  for (const json& f : m["files"]) {
    if (f["path"] != gone) files.push_back(f);
  }
  m["files"] = files;
  e[0].second = m.dump();
  std::erase_if(e, [&](const auto& x) { return x.first == gone; });
  Rewrite(evil, e, /*fix_manifest=*/false);
  ExpectRefused(evil, "'" + gone + "' is not listed in manifest.json");
}

TEST_F(ReplicaBundleTest, MergeCarriesReplicasWithRemappedIds) {
  auto m = Open("M");
  for (int s : {7, 8}) ASSERT_TRUE(m->AddTrial(ReplicaTrial(s)).ok());
  auto r = MergeDatasets(*m, *a_);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->added, 2);
  EXPECT_EQ(r->replicas_added, 2 * kK);
  EXPECT_EQ(r->replica_stats_added, 1);
  ASSERT_EQ(r->trial_ids.size(), 2u);
  EXPECT_EQ(r->trial_ids[1], 4);  // trial 2 of A is trial 4 of M
  EXPECT_EQ(Describe(*m, 4), Describe(*a_, trial_));
  EXPECT_EQ(Describe(*m, 3), "");
  m.reset();
  auto f = Fsck((root_ / "M").string(), {});
  ASSERT_TRUE(f.ok());
  EXPECT_TRUE(f->Clean()) << (f->issues.empty() ? "" : f->issues[0].detail);
  // Merging again adds nothing.
  m = Open("M");
  r = MergeDatasets(*m, *a_);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->replicas_added, 0);
  EXPECT_EQ(r->replicas_skipped, 2 * kK);
}

TEST_F(ReplicaBundleTest, FsckRecomputesStatisticsTheirReplicasDoNotGive) {
  const std::string dir = (root_ / "A").string();
  const std::string want = Describe(*a_, trial_);
  a_.reset();
  // A p-value edited by hand: the verdict may stay, the number does not.
  {
    SQLite::Database db(dir + "/xwires.db", SQLite::OPEN_READWRITE);
    db.exec("UPDATE replica_stats SET stats_json = "
            "json_set(stats_json, '$.permutation_p', 0.5)");
  }
  auto f = Fsck(dir, {});
  ASSERT_TRUE(f.ok());
  ASSERT_EQ(f->issues.size(), 1u);
  EXPECT_EQ(f->issues[0].kind, "invalid-verdict");
  EXPECT_NE(f->issues[0].detail.find("the stored permutation_p is 0.5"), std::string::npos)
      << f->issues[0].detail;
  // Merge and bundle refuse to spread it; the target stays unchanged.
  {
    auto src = Dataset::Open(dir, OpenMode::kReadOnly);
    auto m = Open("M");
    const std::string before = testutil::HashTree((root_ / "M").string());
    auto r = MergeDatasets(*m, **src);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("permutation_p"), std::string::npos);
    EXPECT_EQ(testutil::HashTree((root_ / "M").string()), before);
    auto c = CreateBundle(**src, std::nullopt, {trial_}, (root_ / "x.tar.zst").string());
    ASSERT_FALSE(c.ok());
    EXPECT_FALSE(fs::exists(root_ / "x.tar.zst"));
  }
  auto cli = testutil::Xwires("fsck " + dir + " --repair");
  EXPECT_EQ(cli.exit_code, 0) << cli.out << cli.err;
  f = Fsck(dir, {});
  ASSERT_TRUE(f.ok());
  EXPECT_TRUE(f->Clean());
  auto back = Dataset::Open(dir, OpenMode::kReadOnly);
  EXPECT_EQ(Describe(**back, trial_), want);
}

TEST_F(ReplicaBundleTest, FsckFindsReplicaRowsWithoutFilesAndFilesWithoutRows) {
  const std::string dir = (root_ / "A").string();
  auto reps = LoadReplicas(*a_, trial_);
  ASSERT_TRUE(reps.ok());
  a_.reset();
  fs::remove(dir + "/" + (*reps)[0].h5_file);
  fs::copy_file(dir + "/" + (*reps)[1].h5_file, dir + "/h5/replica-stray.h5");
  auto f = Fsck(dir, {});
  ASSERT_TRUE(f.ok());
  std::set<std::string> kinds;
  for (const FsckIssue& i : f->issues) kinds.insert(i.kind);
  EXPECT_EQ(kinds, (std::set<std::string>{"replica-file", "orphan-file"}));
  FsckOptions o;
  o.repair = true;
  f = Fsck(dir, o);
  ASSERT_TRUE(f.ok());
  EXPECT_TRUE(f->Clean());
  f = Fsck(dir, {});
  ASSERT_TRUE(f.ok());
  EXPECT_TRUE(f->Clean()) << f->issues[0].kind << ": " << f->issues[0].detail;
  auto back = Dataset::Open(dir, OpenMode::kReadOnly);
  EXPECT_EQ(LoadReplicas(**back, trial_)->size(), 2u * kK - 1);
  EXPECT_TRUE(LoadReplicaStats(**back, trial_)->empty());  // its replica is gone
}

}  // namespace
}  // namespace xw
