// replica_stats keyed by first_replica (schema version 4): a trial keeps a
// search's selection statistics (replicas 0..K-1) and its confirmation over
// fresh replicas of the same family (K..) side by side; the query fields
// read the confirmation's; fsck, bundles and merges keep both rows apart.
// A schema-3 dataset migrates in place: its rows keep their ids and take
// their first_replica from stats_json (or 0), the index and the cascade
// with the trial survive, fsck is clean.
#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "replica_fixtures.h"
#include "testing/temp_dir.h"
#include "xwires/dataset/bundle/bundle.h"
#include "xwires/dataset/query/query.h"
#include "xwires/dataset/store/fsck.h"
#include "xwires/dataset/store/replicas.h"

namespace xw {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

using testutil::ReplicaTrial;
using testutil::StoreReplicated;

// The statistics rows of a trial as comparable text (no ids or dates).
std::string Describe(const Dataset& ds, int64_t trial) {
  auto stats = LoadReplicaStats(ds, trial);
  EXPECT_TRUE(stats.ok()) << stats.status().ToString();
  std::string out;
  if (!stats.ok()) return out;
  for (const ReplicaStatsRecord& s : *stats) {
    out += s.family + "@" + std::to_string(s.first_replica) + " k" + std::to_string(s.k_a) +
           " " + PairStatisticsJson(s.stats) + "\n";
  }
  return out;
}

std::vector<int64_t> Ids(const Dataset& ds, const std::string& where) {
  TrialQuery q;
  q.where = where;
  auto rows = ds.Query(q);
  EXPECT_TRUE(rows.ok()) << where << ": " << rows.status().ToString();
  std::vector<int64_t> out;
  if (rows.ok()) {
    for (const TrialRow& r : *rows) out.push_back(r.id);
  }
  return out;
}

void ExpectClean(const std::string& dir) {
  auto f = Fsck(dir, {});
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_TRUE(f->Clean()) << f->issues[0].kind << ": " << f->issues[0].detail;
}

class ReplicaStatsKeyTest : public ::testing::Test {
 protected:
  std::unique_ptr<Dataset> Open(const std::string& name) {
    auto d = Dataset::Open(Dir(name), OpenMode::kCreate);
    EXPECT_TRUE(d.ok()) << d.status().ToString();
    return std::move(d).value();
  }
  std::string Dir(const std::string& name) const { return tmp_.path() + "/" + name; }

  testutil::TempDir tmp_;
};

TEST_F(ReplicaStatsKeyTest, SelectionAndConfirmationOfOneFamilyAreTwoRows) {
  auto a = Open("A");
  const int64_t trial = *a->AddTrial(ReplicaTrial(2));
  // The confirmation (seed replicas 4..8) is stored first, so the selection
  // (0..3) has the higher id; the confirmation still gives the verdict.
  StoreReplicated(*a, trial, "seed", 4, 5);
  StoreReplicated(*a, trial, "seed", 0, 4);
  auto stats = LoadReplicaStats(*a, trial);
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  ASSERT_EQ(stats->size(), 2u);
  EXPECT_EQ((*stats)[0].first_replica, 0);
  EXPECT_EQ((*stats)[1].first_replica, 4);
  EXPECT_GT((*stats)[0].id, (*stats)[1].id);
  // Exact permutation p of fully separated sides: 2/70 over 4 + 4, 2/252
  // over 5 + 5. The query fields read the confirmation's row.
  EXPECT_NEAR((*stats)[0].stats.permutation_p, 2.0 / 70, 1e-12);
  EXPECT_NEAR((*stats)[1].stats.permutation_p, 2.0 / 252, 1e-12);
  EXPECT_EQ(Ids(*a, "p_value < 0.01"), std::vector<int64_t>{trial});
  EXPECT_TRUE(Ids(*a, "p_value > 0.02").empty());
  EXPECT_EQ(Ids(*a, "diff_lcb = " + json((*stats)[1].stats.lcb).dump()),
            std::vector<int64_t>{trial});
  // Storing one again replaces that row only.
  StoreReplicated(*a, trial, "seed", 0, 4);
  EXPECT_EQ(LoadReplicaStats(*a, trial)->size(), 2u);
  const std::string want = Describe(*a, trial);
  a.reset();
  ExpectClean(Dir("A"));

  // A bundle and a merge carry both rows; a second import skips both.
  a = Open("A");
  const std::string bundle = Dir("r.tar.zst");
  ASSERT_TRUE(CreateBundle(*a, std::nullopt, {trial}, bundle).ok());
  auto b = Open("B");
  auto r = ImportBundle(*b, bundle, BundleCheckers{});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->replica_stats_added, 2);
  EXPECT_EQ(Describe(*b, r->trial_ids[0]), want);
  r = ImportBundle(*b, bundle, BundleCheckers{});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->replica_stats_added, 0);
  EXPECT_EQ(r->replica_stats_skipped, 2);
  auto m = Open("M");
  ASSERT_TRUE(m->AddTrial(ReplicaTrial(7)).ok());
  r = MergeDatasets(*m, *a);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->replica_stats_added, 2);
  EXPECT_EQ(Describe(*m, r->trial_ids[0]), want);
  b.reset();
  m.reset();
  ExpectClean(Dir("B"));
  ExpectClean(Dir("M"));

  // fsck finds the confirmation's edited p-value and repairs that row only.
  a.reset();
  {
    SQLite::Database db(Dir("A") + "/xwires.db", SQLite::OPEN_READWRITE);
    db.exec("UPDATE replica_stats SET stats_json = json_set(stats_json, "
            "'$.permutation_p', 0.5) WHERE first_replica = 4");
  }
  auto f = Fsck(Dir("A"), {});
  ASSERT_TRUE(f.ok());
  ASSERT_EQ(f->issues.size(), 1u);
  EXPECT_EQ(f->issues[0].kind, "invalid-verdict");
  FsckOptions repair;
  repair.repair = true;
  ASSERT_TRUE(Fsck(Dir("A"), repair).ok());
  ExpectClean(Dir("A"));
  a = Open("A");
  EXPECT_EQ(Describe(*a, trial), want);
}

// The replica_stats table exactly as schema version 3 created it.
constexpr const char* kReplicaStatsV3 = R"sql(CREATE TABLE replica_stats (
    id INTEGER PRIMARY KEY,
    trial_id INTEGER NOT NULL REFERENCES trials(id) ON DELETE CASCADE,
    profile_a TEXT NOT NULL, profile_b TEXT NOT NULL,
    family TEXT NOT NULL,
    k_a INTEGER NOT NULL, k_b INTEGER NOT NULL,
    num_classes INTEGER NOT NULL,
    verdict TEXT NOT NULL CHECK (verdict IN ('significant',
        'collapse_driven', 'within_noise', 'insufficient')),
    p_value REAL, mean_diff REAL, diff_lcb REAL, noise_sd REAL,
    noise_floor REAL,
    stats_json TEXT NOT NULL,
    test_labels BLOB NOT NULL,
    created_at TEXT NOT NULL,
    UNIQUE (trial_id, profile_a, profile_b, family)))sql";

// Takes a dataset back to schema version 3: replica_stats in its version-3
// form with the same rows (stats_json as stored: "first_replica" only when
// not 0), version 4 unrecorded.
void DowngradeToSchema3(const std::string& dir) {
  SQLite::Database db(dir + "/xwires.db", SQLite::OPEN_READWRITE);
  SQLite::Transaction tx(db);
  db.exec("ALTER TABLE replica_stats RENAME TO replica_stats_v4");
  db.exec("DROP INDEX replica_stats_trial");
  db.exec(kReplicaStatsV3);
  db.exec(
      "INSERT INTO replica_stats SELECT id, trial_id, profile_a, profile_b, family, k_a, k_b, "
      "num_classes, verdict, p_value, mean_diff, diff_lcb, noise_sd, noise_floor, stats_json, "
      "test_labels, created_at FROM replica_stats_v4");
  db.exec("DROP TABLE replica_stats_v4");
  db.exec("CREATE INDEX replica_stats_trial ON replica_stats (trial_id, id)");
  db.exec("DELETE FROM schema_version WHERE version = 4");
  tx.commit();
}

TEST_F(ReplicaStatsKeyTest, SchemaThreeStatisticsMigrateWithTheirFirstReplica) {
  auto a = Open("A");
  const int64_t trial = *a->AddTrial(ReplicaTrial(2));
  const int64_t other = *a->AddTrial(ReplicaTrial(3));
  // A search of version 3: ulp selection over 0..3 (no first_replica in
  // stats_json), seed confirmation over 1..4 ("first_replica": 1).
  StoreReplicated(*a, trial, "ulp", 0, 4);
  StoreReplicated(*a, trial, "seed", 1, 4);
  StoreReplicated(*a, other, "ulp", 0, 4);
  const std::string want = Describe(*a, trial);
  a.reset();
  DowngradeToSchema3(Dir("A"));
  std::vector<std::pair<int64_t, std::string>> rows;
  {
    SQLite::Database db(Dir("A") + "/xwires.db");
    SQLite::Statement st(db, "SELECT id, stats_json FROM replica_stats ORDER BY id");
    while (st.executeStep()) rows.push_back({st.getColumn(0).getInt64(), st.getColumn(1)});
  }
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(json::parse(rows[0].second).count("first_replica"), 0u);
  EXPECT_EQ(json::parse(rows[1].second)["first_replica"], 1);

  auto ro = Dataset::Open(Dir("A"), OpenMode::kReadOnly);
  ASSERT_FALSE(ro.ok());
  EXPECT_NE(ro.status().message().find("schema version 3 needs migrating to 4"),
            std::string::npos)
      << ro.status().ToString();
  a = Open("A");  // a writer migrates
  EXPECT_EQ(a->schema_version(), 4);
  EXPECT_EQ(Describe(*a, trial), want);
  a.reset();
  {
    SQLite::Database db(Dir("A") + "/xwires.db", SQLite::OPEN_READWRITE);
    SQLite::Statement st(db,
                         "SELECT id, stats_json, first_replica FROM replica_stats ORDER BY id");
    size_t i = 0;
    for (; st.executeStep(); ++i) {
      ASSERT_LT(i, rows.size());
      EXPECT_EQ(st.getColumn(0).getInt64(), rows[i].first);  // same ids
      EXPECT_EQ(st.getColumn(1).getString(), rows[i].second);  // JSON untouched
      EXPECT_EQ(st.getColumn(2).getInt64(), i == 1 ? 1 : 0);
    }
    EXPECT_EQ(i, rows.size());
    EXPECT_EQ(db.execAndGet("SELECT count(*) FROM sqlite_master WHERE type = 'index' AND "
                            "name = 'replica_stats_trial'")
                  .getInt(),
              1);
  }
  ExpectClean(Dir("A"));
  // Deleting a trial still deletes its statistics (foreign keys on, as
  // every writer opens the database).
  {
    SQLite::Database db(Dir("A") + "/xwires.db", SQLite::OPEN_READWRITE);
    db.exec("PRAGMA foreign_keys = ON");
    db.exec("DELETE FROM replicas WHERE trial_id = " + std::to_string(other));
    db.exec("DELETE FROM trials WHERE id = " + std::to_string(other));
    EXPECT_EQ(db.execAndGet("SELECT count(*) FROM replica_stats WHERE trial_id = " +
                            std::to_string(other))
                  .getInt(),
              0);
    EXPECT_EQ(db.execAndGet("SELECT count(*) FROM replica_stats").getInt(), 2);
  }
  // The migrated trial takes a confirmation of the same family as well.
  a = Open("A");
  StoreReplicated(*a, trial, "seed", 5, 4);
  EXPECT_EQ(LoadReplicaStats(*a, trial)->size(), 3u);
}

}  // namespace
}  // namespace xw
