// SQLite access of the analysis tables (the api module's one SQLite adapter;
// SQLiteCpp objects are RAII). See analysis_store.h for the tables.
#include "xwires/api/analysis_store.h"

#include <SQLiteCpp/SQLiteCpp.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cmath>
#include <memory>
#include <nlohmann/json.hpp>

#include "xwires/core/build_info.h"
#include "xwires/core/clock.h"

namespace xw {
namespace {

constexpr int kBusyTimeoutMs = 60000;

const char* const kCreateStatements[] = {
    R"sql(CREATE TABLE IF NOT EXISTS analysis_schema_version (
            version INTEGER NOT NULL, applied_at TEXT NOT NULL))sql",
    R"sql(CREATE TABLE IF NOT EXISTS analysis_results (
            id INTEGER PRIMARY KEY,
            trial_id INTEGER NOT NULL REFERENCES trials(id) ON DELETE CASCADE,
            kind TEXT NOT NULL CHECK (kind IN ('compare', 'attribute')),
            created_at TEXT NOT NULL,
            toolkit TEXT NOT NULL,
            summary TEXT NOT NULL,
            result_json TEXT NOT NULL))sql",
    R"sql(CREATE TABLE IF NOT EXISTS attribution_runs (
            id INTEGER PRIMARY KEY,
            result_id INTEGER NOT NULL REFERENCES analysis_results(id) ON DELETE CASCADE,
            knob TEXT NOT NULL,
            direction TEXT NOT NULL CHECK (direction IN ('baseline', 'a_to_b', 'b_to_a')),
            profile TEXT NOT NULL,
            value_json TEXT NOT NULL,
            status TEXT NOT NULL,
            test_acc REAL, test_loss REAL,
            weights_sha256 TEXT NOT NULL))sql",
    "CREATE INDEX IF NOT EXISTS analysis_results_trial ON analysis_results "
    "(trial_id, kind)",
    "CREATE INDEX IF NOT EXISTS attribution_runs_result ON attribution_runs "
    "(result_id)",
};

template <typename Fn>
Status Guarded(const std::string& what, Fn&& fn) {
  try {
    return fn();
  } catch (const SQLite::Exception& e) {
    if (e.getErrorCode() == SQLITE_CONSTRAINT)
      return Status::InvalidArgument(what + ": " + e.what());
    if (e.getErrorCode() == SQLITE_NOTADB ||
        e.getErrorCode() == SQLITE_CORRUPT) {
      return Status::Corruption(what + ": " + e.what());
    }
    return Status::IOError(what + ": " + e.what());
  } catch (const std::exception& e) {
    return Status::Internal(what + ": " + e.what());
  }
}

// A second connection to the dataset's database. Read-only connections set
// query_only (and open the file read-only when it is not writable), like the
// dataset module's own, so reading never changes a file.
Result<std::unique_ptr<SQLite::Database>> Connect(const Dataset& ds,
                                                  bool write) {
  const std::string path = ds.dir() + "/xwires.db";
  std::unique_ptr<SQLite::Database> db;
  XW_RETURN_IF_ERROR(Guarded(path, [&]() -> Status {
    int flags = SQLite::OPEN_READWRITE;
    if (!write && ::access(path.c_str(), W_OK) != 0)
      flags = SQLite::OPEN_READONLY;
    db = std::make_unique<SQLite::Database>(path, flags, kBusyTimeoutMs);
    if (write) {
      db->exec("PRAGMA foreign_keys = ON");
      db->exec("PRAGMA synchronous = FULL");
    } else {
      db->exec("PRAGMA query_only = ON");
    }
    return Status::OK();
  }));
  return db;
}

Status EnsureTables(SQLite::Database& db) {
  for (const char* stmt : kCreateStatements) db.exec(stmt);
  if (db.execAndGet("SELECT count(*) FROM analysis_schema_version").getInt() ==
      0) {
    SQLite::Statement ins(db,
                          "INSERT INTO analysis_schema_version VALUES (?, ?)");
    ins.bind(1, kAnalysisSchemaVersion);
    ins.bind(2, UtcNow());
    ins.exec();
  }
  const int version =
      db.execAndGet("SELECT max(version) FROM analysis_schema_version")
          .getInt();
  if (version > kAnalysisSchemaVersion) {
    return Status::NotSupported("analysis tables of version " +
                                std::to_string(version) +
                                " are newer than this xwires supports (" +
                                std::to_string(kAnalysisSchemaVersion) + ")");
  }
  return Status::OK();
}

void BindReal(SQLite::Statement& st, int i, double v) {
  if (std::isfinite(v)) {
    st.bind(i, v);
  } else {
    st.bind(i);  // NULL: unknown or non-finite
  }
}

double GetReal(const SQLite::Column& c) {
  return c.isNull() ? kUnknown : c.getDouble();
}

}  // namespace

Result<int64_t> StoreAnalysisResult(Dataset& ds, const AnalysisResultRow& row) {
  const std::string what = ds.dir() + "/xwires.db";
  if (ds.read_only()) {
    return Status::FailedPrecondition(
        ds.dir() + ": dataset is open read-only; cannot store " + row.kind +
        " results");
  }
  if (row.kind != "compare" && row.kind != "attribute") {
    return Status::InvalidArgument("analysis result kind '" + row.kind +
                                   "' (expected compare or attribute)");
  }
  if (!nlohmann::json::accept(row.result_json)) {
    return Status::InvalidArgument("analysis result_json is not valid JSON");
  }
  XW_RETURN_IF_ERROR(ds.GetTrial(row.trial_id).status());
  XW_ASSIGN_OR_RETURN(auto db, Connect(ds, /*write=*/true));
  int64_t id = 0;
  XW_RETURN_IF_ERROR(Guarded(what, [&]() -> Status {
    SQLite::Transaction tx(*db, SQLite::TransactionBehavior::IMMEDIATE);
    XW_RETURN_IF_ERROR(EnsureTables(*db));
    SQLite::Statement ins(
        *db,
        "INSERT INTO analysis_results (trial_id, kind, created_at, toolkit, "
        "summary, result_json) VALUES (?, ?, ?, ?, ?, ?)");
    ins.bind(1, row.trial_id);
    ins.bind(2, row.kind);
    ins.bind(3, UtcNow());
    ins.bind(4, "xwires " + GetBuildInfo().toolkit_version);
    ins.bind(5, row.summary);
    ins.bind(6, row.result_json);
    ins.exec();
    id = db->getLastInsertRowid();
    SQLite::Statement run(
        *db,
        "INSERT INTO attribution_runs (result_id, knob, direction, profile, "
        "value_json, status, test_acc, test_loss, weights_sha256) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
    for (const AttributionRunRow& r : row.runs) {
      run.reset();
      run.bind(1, id);
      run.bind(2, r.knob);
      run.bind(3, r.direction);
      run.bind(4, r.profile);
      run.bind(5, r.value_json);
      run.bind(6, r.status);
      BindReal(run, 7, r.test_acc);
      BindReal(run, 8, r.test_loss);
      run.bind(9, r.weights_sha256);
      run.exec();
    }
    tx.commit();
    return Status::OK();
  }));
  return id;
}

Result<std::vector<AnalysisResultRow>> LoadAnalysisResults(
    const Dataset& ds, int64_t trial_id, const std::string& kind) {
  const std::string what = ds.dir() + "/xwires.db";
  XW_ASSIGN_OR_RETURN(auto db, Connect(ds, /*write=*/false));
  std::vector<AnalysisResultRow> out;
  XW_RETURN_IF_ERROR(Guarded(what, [&]() -> Status {
    if (!db->tableExists("analysis_results")) return Status::OK();
    SQLite::Statement st(
        *db,
        "SELECT id, trial_id, kind, created_at, toolkit, summary, result_json "
        "FROM analysis_results WHERE (? < 0 OR trial_id = ?) "
        "AND (? = '' OR kind = ?) ORDER BY id");
    st.bind(1, trial_id);
    st.bind(2, trial_id);
    st.bind(3, kind);
    st.bind(4, kind);
    SQLite::Statement runs(
        *db,
        "SELECT knob, direction, profile, value_json, status, test_acc, "
        "test_loss, weights_sha256 FROM attribution_runs "
        "WHERE result_id = ? ORDER BY id");
    while (st.executeStep()) {
      AnalysisResultRow r;
      r.id = st.getColumn(0).getInt64();
      r.trial_id = st.getColumn(1).getInt64();
      r.kind = st.getColumn(2).getString();
      r.created_at = st.getColumn(3).getString();
      r.toolkit = st.getColumn(4).getString();
      r.summary = st.getColumn(5).getString();
      r.result_json = st.getColumn(6).getString();
      runs.reset();
      runs.bind(1, r.id);
      while (runs.executeStep()) {
        AttributionRunRow a;
        a.knob = runs.getColumn(0).getString();
        a.direction = runs.getColumn(1).getString();
        a.profile = runs.getColumn(2).getString();
        a.value_json = runs.getColumn(3).getString();
        a.status = runs.getColumn(4).getString();
        a.test_acc = GetReal(runs.getColumn(5));
        a.test_loss = GetReal(runs.getColumn(6));
        a.weights_sha256 = runs.getColumn(7).getString();
        r.runs.push_back(std::move(a));
      }
      out.push_back(std::move(r));
    }
    return Status::OK();
  }));
  return out;
}

Result<std::vector<std::string>> StoredProfileJson(const Dataset& ds,
                                                   const TrialRow& trial) {
  const std::string what = ds.dir() + "/xwires.db";
  XW_ASSIGN_OR_RETURN(auto db, Connect(ds, /*write=*/false));
  std::vector<std::string> out;
  XW_RETURN_IF_ERROR(Guarded(what, [&]() -> Status {
    SQLite::Statement st(
        *db,
        "SELECT pr.json, pr.external FROM models m "
        "JOIN profiles pr ON pr.id = m.profile_id WHERE m.id = ?");
    for (const ModelRow& m : trial.models) {
      st.reset();
      st.bind(1, m.id);
      if (!st.executeStep()) {
        return Status::NotFound(what + ": model " + std::to_string(m.id) +
                                " has no profile row");
      }
      out.push_back(
          st.getColumn(1).getInt() != 0 ? "" : st.getColumn(0).getString());
    }
    return Status::OK();
  }));
  return out;
}

}  // namespace xw
