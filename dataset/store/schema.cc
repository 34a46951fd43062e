#include "schema.h"

#include <SQLiteCpp/SQLiteCpp.h>

#include <algorithm>
#include <map>
#include <vector>

#include "near_schema.h"
#include "sqlite_adapter.h"
#include "xwires/core/build_info.h"
#include "xwires/core/clock.h"
#include "xwires/dataset/store/dataset.h"

namespace xw::schema {

namespace {

// Migration 2, part 1: analysis results become dataset tables. Datasets
// whose analyses an earlier api module stored in its own tables
// (analysis_results, attribution_runs, analysis_schema_version, created on
// first use) keep them: the rows move to the new tables, results of trials
// that no longer exist are dropped with them. The CREATE ... IF NOT EXISTS
// of the old tables lets one list of statements serve both cases.
std::vector<std::string> AnalysisStatements() {
  return {
      R"sql(CREATE TABLE IF NOT EXISTS analysis_results (
              id INTEGER PRIMARY KEY, trial_id INTEGER NOT NULL,
              kind TEXT NOT NULL, created_at TEXT NOT NULL,
              toolkit TEXT NOT NULL, summary TEXT NOT NULL,
              result_json TEXT NOT NULL))sql",
      R"sql(CREATE TABLE IF NOT EXISTS attribution_runs (
              id INTEGER PRIMARY KEY, result_id INTEGER NOT NULL,
              knob TEXT NOT NULL, direction TEXT NOT NULL,
              profile TEXT NOT NULL, value_json TEXT NOT NULL,
              status TEXT NOT NULL, test_acc REAL, test_loss REAL,
              weights_sha256 TEXT NOT NULL))sql",
      R"sql(CREATE TABLE analyses (
              id INTEGER PRIMARY KEY,
              kind TEXT NOT NULL CHECK (kind IN ('compare', 'attribute', 'mi')),
              created_at TEXT NOT NULL,
              toolkit TEXT NOT NULL,
              summary TEXT NOT NULL,
              result_json TEXT NOT NULL))sql",
      R"sql(CREATE TABLE analysis_trials (
              analysis_id INTEGER NOT NULL REFERENCES analyses(id) ON DELETE CASCADE,
              trial_id INTEGER NOT NULL REFERENCES trials(id) ON DELETE CASCADE,
              PRIMARY KEY (analysis_id, trial_id)) WITHOUT ROWID)sql",
      "CREATE INDEX analysis_trials_trial ON analysis_trials (trial_id)",
      R"sql(CREATE TABLE analysis_runs (
              id INTEGER PRIMARY KEY,
              analysis_id INTEGER NOT NULL REFERENCES analyses(id) ON DELETE CASCADE,
              knob TEXT NOT NULL,
              direction TEXT NOT NULL CHECK (direction IN ('baseline', 'a_to_b', 'b_to_a')),
              profile TEXT NOT NULL,
              value_json TEXT NOT NULL,
              status TEXT NOT NULL,
              test_acc REAL, test_loss REAL,
              weights_sha256 TEXT NOT NULL))sql",
      "CREATE INDEX analysis_runs_analysis ON analysis_runs (analysis_id)",
      // An analysis describes exactly its trials: when one goes (fsck
      // --repair), the analysis goes with it rather than silently
      // describing fewer trials.
      R"sql(CREATE TRIGGER analyses_follow_trials BEFORE DELETE ON trials BEGIN
              DELETE FROM analyses WHERE id IN
                (SELECT analysis_id FROM analysis_trials WHERE trial_id = old.id);
            END)sql",
      "INSERT INTO analyses SELECT r.id, r.kind, r.created_at, r.toolkit, "
      "r.summary, r.result_json FROM analysis_results r WHERE r.kind IN "
      "('compare', 'attribute') AND r.trial_id IN (SELECT id FROM trials)",
      "INSERT INTO analysis_trials SELECT r.id, r.trial_id FROM "
      "analysis_results r WHERE r.id IN (SELECT id FROM analyses)",
      "INSERT INTO analysis_runs SELECT a.id, a.result_id, a.knob, "
      "a.direction, a.profile, a.value_json, a.status, a.test_acc, "
      "a.test_loss, a.weights_sha256 FROM attribution_runs a WHERE "
      "a.result_id IN (SELECT id FROM analyses) AND a.direction IN "
      "('baseline', 'a_to_b', 'b_to_a')",
      "DROP TABLE attribution_runs",
      "DROP TABLE analysis_results",
      "DROP TABLE IF EXISTS analysis_schema_version",
  };
}

// Migration 4: replica_stats rebuilt with first_replica in its UNIQUE key
// (SQLite cannot change a table's constraints in place): a new table, the
// rows copied with their ids, the old table dropped (nothing references it;
// its index goes with it), the new one renamed and the index made again.
// The foreign key to trials (ON DELETE CASCADE) is declared as before. A
// stats_json that is not JSON, or whose first_replica is not a non-negative
// integer, gives 0 (fsck then reports the row if its replicas disagree).
std::vector<std::string> ReplicaStatsFirstReplicaStatements() {
  return {
      R"sql(CREATE TABLE replica_stats_v4 (
              id INTEGER PRIMARY KEY,
              trial_id INTEGER NOT NULL REFERENCES trials(id) ON DELETE CASCADE,
              profile_a TEXT NOT NULL, profile_b TEXT NOT NULL,
              family TEXT NOT NULL,
              first_replica INTEGER NOT NULL DEFAULT 0 CHECK (first_replica >= 0),
              k_a INTEGER NOT NULL, k_b INTEGER NOT NULL,
              num_classes INTEGER NOT NULL,
              verdict TEXT NOT NULL CHECK (verdict IN ('significant',
                  'collapse_driven', 'within_noise', 'insufficient')),
              p_value REAL, mean_diff REAL, diff_lcb REAL, noise_sd REAL,
              noise_floor REAL,
              stats_json TEXT NOT NULL,
              test_labels BLOB NOT NULL,
              created_at TEXT NOT NULL,
              UNIQUE (trial_id, profile_a, profile_b, family, first_replica)))sql",
      R"sql(INSERT INTO replica_stats_v4 (id, trial_id, profile_a, profile_b, family,
              first_replica, k_a, k_b, num_classes, verdict, p_value, mean_diff,
              diff_lcb, noise_sd, noise_floor, stats_json, test_labels, created_at)
            SELECT id, trial_id, profile_a, profile_b, family,
              CASE WHEN json_valid(stats_json) THEN
                CASE WHEN json_type(stats_json, '$.first_replica') = 'integer' AND
                          json_extract(stats_json, '$.first_replica') >= 0
                     THEN json_extract(stats_json, '$.first_replica') ELSE 0 END
              ELSE 0 END,
              k_a, k_b, num_classes, verdict, p_value, mean_diff, diff_lcb,
              noise_sd, noise_floor, stats_json, test_labels, created_at
            FROM replica_stats ORDER BY id)sql",
      "DROP TABLE replica_stats",
      "ALTER TABLE replica_stats_v4 RENAME TO replica_stats",
      "CREATE INDEX replica_stats_trial ON replica_stats (trial_id, id)",
  };
}

// Statements of migration v (index v-1). Never edit a released migration:
// append a new one and bump kDatasetSchemaVersion.
const std::vector<std::vector<std::string>>& Migrations() {
  static const std::vector<std::vector<std::string>> m = {
      {
          R"sql(CREATE TABLE provenance (
                  id INTEGER PRIMARY KEY,
                  description TEXT NOT NULL UNIQUE,
                  created_at TEXT NOT NULL))sql",
          R"sql(CREATE TABLE searches (
                  id INTEGER PRIMARY KEY,
                  created_at TEXT NOT NULL,
                  config_json TEXT NOT NULL,
                  space_json TEXT NOT NULL,
                  objective TEXT NOT NULL,
                  status TEXT NOT NULL))sql",
          R"sql(CREATE TABLE profiles (
                  id INTEGER PRIMARY KEY,
                  name TEXT NOT NULL,
                  json TEXT NOT NULL,
                  external INTEGER NOT NULL,
                  UNIQUE (name, json, external)))sql",
          R"sql(CREATE TABLE trials (
                  id INTEGER PRIMARY KEY,
                  created_at TEXT NOT NULL,
                  arch TEXT NOT NULL,
                  data_spec TEXT NOT NULL,
                  status TEXT NOT NULL,
                  lr REAL, adam_eps REAL, beta1 REAL, beta2 REAL, weight_decay REAL,
                  batch_size INTEGER, epochs INTEGER, seed INTEGER,
                  divergence REAL,
                  hparams_json TEXT NOT NULL,
                  extra_json TEXT NOT NULL,
                  search_id INTEGER REFERENCES searches(id),
                  provenance_id INTEGER NOT NULL REFERENCES provenance(id),
                  external_id TEXT NOT NULL))sql",
          R"sql(CREATE TABLE models (
                  id INTEGER PRIMARY KEY,
                  trial_id INTEGER NOT NULL REFERENCES trials(id) ON DELETE CASCADE,
                  idx INTEGER NOT NULL,
                  profile TEXT NOT NULL,
                  profile_id INTEGER NOT NULL REFERENCES profiles(id),
                  status TEXT NOT NULL,
                  train_acc REAL, test_acc REAL, train_loss REAL, test_loss REAL,
                  n_epochs INTEGER NOT NULL,
                  has_weights INTEGER NOT NULL,
                  h5_file TEXT, h5_group TEXT,
                  weights_sha256 TEXT NOT NULL,
                  param_count INTEGER NOT NULL,
                  wall_time_s REAL,
                  fingerprint_json TEXT NOT NULL,
                  isa TEXT NOT NULL, compiler TEXT NOT NULL, threads INTEGER NOT NULL,
                  UNIQUE (trial_id, profile)))sql",
          // Divergent trials are what users look for, and divergence is
          // long-tailed: a query with a divergence threshold scans this
          // index from the threshold (or from the top, for --sort -diff)
          // and tests the searched hyperparameters inside the index
          // without touching the table. (An R*Tree over the same five
          // dimensions cost ~14 us per insert, over half the insert budget.)
          "CREATE INDEX trials_divergence ON trials (divergence, lr, "
          "batch_size, adam_eps, epochs)",
          "CREATE INDEX trials_arch ON trials (arch, divergence)",
          "CREATE INDEX trials_search ON trials (search_id) WHERE search_id IS "
          "NOT NULL",
          "CREATE INDEX trials_external ON trials (external_id) WHERE "
          "external_id != ''",
          "CREATE INDEX models_file ON models (h5_file) WHERE h5_file IS NOT "
          "NULL",
      },
      [] {
        std::vector<std::string> v = AnalysisStatements();
        for (std::string& s : near::NearIndexStatements())
          v.push_back(std::move(s));
        return v;
      }(),
      // Migration 3: replicas and their statistics (replicas.h,
      // docs/significance.md). Both follow their trial.
      {
          R"sql(CREATE TABLE replicas (
                  id INTEGER PRIMARY KEY,
                  trial_id INTEGER NOT NULL REFERENCES trials(id) ON DELETE CASCADE,
                  profile TEXT NOT NULL,
                  family TEXT NOT NULL CHECK (family IN ('ulp', 'seed', 'order')),
                  replica INTEGER NOT NULL CHECK (replica >= 0),
                  params_json TEXT NOT NULL,
                  status TEXT NOT NULL CHECK (status IN ('ok', 'diverged')),
                  test_acc REAL, test_loss REAL,
                  first_nonfinite_step INTEGER,
                  n_epochs INTEGER NOT NULL,
                  n_examples INTEGER NOT NULL,
                  has_weights INTEGER NOT NULL,
                  weights_sha256 TEXT NOT NULL,
                  h5_file TEXT NOT NULL, h5_group TEXT NOT NULL,
                  wall_time_s REAL,
                  fingerprint_json TEXT NOT NULL,
                  created_at TEXT NOT NULL,
                  UNIQUE (trial_id, profile, family, replica)))sql",
          "CREATE INDEX replicas_file ON replicas (h5_file)",
          R"sql(CREATE TABLE replica_stats (
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
                  UNIQUE (trial_id, profile_a, profile_b, family)))sql",
          "CREATE INDEX replica_stats_trial ON replica_stats (trial_id, id)",
      },
      // Migration 4 -- replica_stats.first_replica. A trial may carry two
      // statistics rows of one family and profile pair: a search's selection
      // over replicas 0..K-1 and its confirmation over the fresh replicas
      // K..K+Kc-1 (hpo/schedule.h). The first replica counted becomes a
      // column and part of the row's key; rows of version 3 take it from
      // their stats_json ("first_replica", written when not 0) or 0.
      ReplicaStatsFirstReplicaStatements(),
  };
  return m;
}

}  // namespace

Result<int> ReadVersion(SQLite::Database& db, const std::string& what) {
  int version = 0;
  Status s = sql::Guarded(what, [&]() -> Status {
    int tables = db.execAndGet("SELECT count(*) FROM sqlite_master").getInt();
    if (tables == 0) return Status::OK();
    if (!db.tableExists("schema_version")) {
      return Status::Corruption(
          what + ": not an xwires dataset (no schema_version table)");
    }
    SQLite::Statement st(db, "SELECT max(version) FROM schema_version");
    if (!st.executeStep() || st.getColumn(0).isNull()) {
      return Status::Corruption(what + ": schema_version table is empty");
    }
    version = st.getColumn(0).getInt();
    return Status::OK();
  });
  if (!s.ok()) return s;
  return version;
}

Status CheckReadable(int version, const std::string& what) {
  if (version > kDatasetSchemaVersion) {
    return Status::NotSupported(
        what + ": dataset schema version " + std::to_string(version) +
        " is newer than this xwires supports (" +
        std::to_string(kDatasetSchemaVersion) + "); upgrade xwires");
  }
  if (version < 1) return Status::Corruption(what + ": dataset has no schema");
  if (version < kDatasetSchemaVersion) {
    return Status::FailedPrecondition(
        what + ": dataset schema version " + std::to_string(version) +
        " needs migrating to " + std::to_string(kDatasetSchemaVersion) +
        "; run `xwires migrate` on the dataset (or any command that writes "
        "to it)");
  }
  return Status::OK();
}

Status Migrate(SQLite::Database& db, const std::string& what) {
  return sql::Guarded(what, [&]() -> Status {
    SQLite::Transaction tx(db, SQLite::TransactionBehavior::IMMEDIATE);
    XW_ASSIGN_OR_RETURN(int version, ReadVersion(db, what));
    if (version > kDatasetSchemaVersion) return CheckReadable(version, what);
    if (version == kDatasetSchemaVersion)
      return Status::OK();  // tx rolls back: nothing to do
    if (version == 0) {
      db.exec(R"sql(CREATE TABLE schema_version (
                      version INTEGER NOT NULL,
                      applied_at TEXT NOT NULL,
                      toolkit TEXT NOT NULL))sql");
    }
    const auto& migrations = Migrations();
    for (int v = version + 1; v <= kDatasetSchemaVersion; ++v) {
      for (const std::string& stmt : migrations[v - 1]) db.exec(stmt);
      SQLite::Statement ins(db, "INSERT INTO schema_version VALUES (?, ?, ?)");
      ins.bind(1, v);
      ins.bind(2, UtcNow());
      ins.bind(3, "xwires " + GetBuildInfo().toolkit_version);
      ins.exec();
    }
    tx.commit();
    return Status::OK();
  });
}

Status QuickCheck(SQLite::Database& db, const std::string& what) {
  std::string found;
  try {
    SQLite::Statement st(db, "PRAGMA quick_check(5)");
    while (st.executeStep()) {
      std::string msg = st.getColumn(0).getString();
      if (msg == "ok") continue;
      found += (found.empty() ? "" : "; ") + msg;
    }
  } catch (const std::exception& e) {
    found = e.what();  // a page SQLite cannot even walk
  }
  if (found.empty()) return Status::OK();
  return Status::Corruption(what + ": database is corrupt (quick_check: " +
                            found +
                            "); nothing was written; run `xwires fsck` and "
                            "restore xwires.db from a copy");
}

namespace {

// name -> (type, columns) of every table and index of `db` and the name of
// every trigger (user objects only), as the reference and the stored schema
// are compared.
using Shape = std::map<std::string, std::pair<std::string, std::vector<std::string>>>;

Shape SchemaShape(SQLite::Database& db) {
  Shape out;
  SQLite::Statement st(db,
                       "SELECT type, name FROM sqlite_master WHERE name NOT "
                       "LIKE 'sqlite_%' ORDER BY name");
  while (st.executeStep()) {
    const std::string type = st.getColumn(0).getString();
    const std::string name = st.getColumn(1).getString();
    std::vector<std::string> cols;
    if (type == "table" || type == "index") {
      SQLite::Statement c(db, std::string("SELECT name FROM pragma_") +
                                  (type == "table" ? "table_info" : "index_info") +
                                  "(?)");
      c.bind(1, name);
      while (c.executeStep()) cols.push_back(sql::GetText(c.getColumn(0)));
    }
    out[name] = {type, std::move(cols)};
  }
  return out;
}

std::string Join(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

}  // namespace

Status CheckTables(SQLite::Database& db, const std::string& what) {
  static const Shape* reference = [] {
    SQLite::Database mem(":memory:", SQLite::OPEN_READWRITE);
    auto* m = new Shape();
    if (Migrate(mem, ":memory:").ok()) *m = SchemaShape(mem);
    return m;
  }();
  return sql::Guarded(what, [&]() -> Status {
    const Shape stored = SchemaShape(db);
    const std::string bad = what + ": the stored schema is corrupt: ";
    for (const auto& [name, want] : *reference) {
      auto it = stored.find(name);
      if (it == stored.end())
        return Status::Corruption(bad + want.first + " " + name + " is missing");
      const auto& have = it->second;
      if (have.first != want.first) {
        return Status::Corruption(bad + name + " is a " + have.first +
                                  ", not a " + want.first);
      }
      if (have.second == want.second) continue;
      std::vector<std::string> missing, unexpected;
      for (const std::string& c : want.second) {
        if (std::find(have.second.begin(), have.second.end(), c) == have.second.end())
          missing.push_back(c);
      }
      for (const std::string& c : have.second) {
        if (std::find(want.second.begin(), want.second.end(), c) == want.second.end())
          unexpected.push_back(c);
      }
      std::string detail = want.first + " " + name;
      if (!missing.empty()) detail += " lacks column(s) " + Join(missing);
      if (!unexpected.empty())
        detail += (missing.empty() ? " has" : " and has") +
                  std::string(" unknown column(s) ") + Join(unexpected);
      if (missing.empty() && unexpected.empty()) detail += " has its columns out of order";
      return Status::Corruption(bad + detail + " (schema version " +
                                std::to_string(kDatasetSchemaVersion) + ")");
    }
    return Status::OK();
  });
}

}  // namespace xw::schema
