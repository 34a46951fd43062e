// Stored analyses (analysis.h): the rules, the SQL rows, StoreAnalysis and
// LoadAnalyses.
#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "analysis_rows.h"
#include "dataset_impl.h"
#include "sha256.h"
#include "sqlite_adapter.h"
#include "trial_rules.h"
#include "xwires/core/build_info.h"
#include "xwires/core/clock.h"
#include "xwires/dataset/store/analysis.h"

namespace xw {
namespace {

using json = nlohmann::json;

bool IsUtcTime(const std::string& s) {
  static constexpr char kPattern[] = "dddd-dd-ddTdd:dd:ddZ";
  if (s.size() != sizeof(kPattern) - 1) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    const bool ok = kPattern[i] == 'd' ? (s[i] >= '0' && s[i] <= '9')
                                       : s[i] == kPattern[i];
    if (!ok) return false;
  }
  return true;
}

Status CheckRun(const AnalysisRun& r, const std::string& what) {
  static const std::set<std::string> kDirections = {"baseline", "a_to_b",
                                                    "b_to_a"};
  static const std::set<std::string> kStatuses = {"ok", "diverged", "failed",
                                                  "incomplete"};
  auto bad = [&](const std::string& m) {
    return Status::InvalidArgument(what + ": " + m);
  };
  if (!kDirections.count(r.direction)) {
    return bad("direction '" + r.direction +
               "' (expected baseline, a_to_b or b_to_a)");
  }
  if (!kStatuses.count(r.status)) {
    return bad("status '" + r.status +
               "' (expected ok, diverged, failed or incomplete)");
  }
  XW_RETURN_IF_ERROR(CheckRunMetrics(r.test_acc, r.test_loss,
                                     r.status == "diverged", what));
  if (!r.weights_sha256.empty() && !IsSha256Hex(r.weights_sha256)) {
    return bad("weights_sha256 must be empty or 64 lowercase hex digits");
  }
  if (!r.value_json.empty() && !json::accept(r.value_json)) {
    return bad("value_json is not valid JSON");
  }
  return Status::OK();
}

// Reads the analyses selected by `where` (over analyses `a`, binding
// `params`), with their trials and runs, oldest first.
std::vector<AnalysisRecord> ReadAnalyses(SQLite::Database& db,
                                         const std::string& where,
                                         const std::vector<sql::Param>& params) {
  SQLite::Statement st(db,
                       "SELECT a.id, a.kind, a.created_at, a.toolkit, "
                       "a.summary, a.result_json FROM analyses a WHERE " +
                           where + " ORDER BY a.id");
  sql::BindAll(st, params);
  SQLite::Statement trials(db,
                           "SELECT trial_id FROM analysis_trials WHERE "
                           "analysis_id = ? ORDER BY trial_id");
  SQLite::Statement runs(db,
                         "SELECT knob, direction, profile, value_json, status, "
                         "test_acc, test_loss, weights_sha256 FROM "
                         "analysis_runs WHERE analysis_id = ? ORDER BY id");
  std::vector<AnalysisRecord> out;
  while (st.executeStep()) {
    AnalysisRecord a;
    a.id = st.getColumn(0).getInt64();
    a.kind = sql::GetText(st.getColumn(1));
    a.created_at = sql::GetText(st.getColumn(2));
    a.toolkit = sql::GetText(st.getColumn(3));
    a.summary = sql::GetText(st.getColumn(4));
    a.result_json = sql::GetText(st.getColumn(5));
    trials.reset();
    trials.bind(1, a.id);
    while (trials.executeStep())
      a.trial_ids.push_back(trials.getColumn(0).getInt64());
    runs.reset();
    runs.bind(1, a.id);
    while (runs.executeStep()) {
      AnalysisRun r;
      r.knob = sql::GetText(runs.getColumn(0));
      r.direction = sql::GetText(runs.getColumn(1));
      r.profile = sql::GetText(runs.getColumn(2));
      r.value_json = sql::GetText(runs.getColumn(3));
      r.status = sql::GetText(runs.getColumn(4));
      r.test_acc = sql::GetReal(runs.getColumn(5));
      r.test_loss = sql::GetReal(runs.getColumn(6));
      r.weights_sha256 = sql::GetText(runs.getColumn(7));
      a.runs.push_back(std::move(r));
    }
    out.push_back(std::move(a));
  }
  return out;
}

bool SameReal(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || a == b;
}

bool SameRuns(const std::vector<AnalysisRun>& x,
              const std::vector<AnalysisRun>& y) {
  if (x.size() != y.size()) return false;
  for (size_t i = 0; i < x.size(); ++i) {
    const AnalysisRun &a = x[i], &b = y[i];
    if (a.knob != b.knob || a.direction != b.direction ||
        a.profile != b.profile || a.value_json != b.value_json ||
        a.status != b.status || !SameReal(a.test_acc, b.test_acc) ||
        !SameReal(a.test_loss, b.test_loss) ||
        a.weights_sha256 != b.weights_sha256) {
      return false;
    }
  }
  return true;
}

std::string Canonical(const std::string& text) {
  return json::parse(text).dump();
}

}  // namespace

Status CheckAnalysis(const AnalysisRecord& a, const std::string& what) {
  auto bad = [&](const std::string& m) {
    return Status::InvalidArgument(what + ": " + m);
  };
  if (a.kind != "compare" && a.kind != "attribute" && a.kind != "mi") {
    return bad("kind '" + a.kind + "' (expected compare, attribute or mi)");
  }
  if (a.kind == "mi" ? a.trial_ids.empty() : a.trial_ids.size() != 1) {
    return bad(a.kind + " result must describe " +
               (a.kind == "mi" ? "at least one trial" : "exactly one trial") +
               ", not " + std::to_string(a.trial_ids.size()));
  }
  std::set<int64_t> seen;
  for (int64_t id : a.trial_ids) {
    if (!seen.insert(id).second)
      return bad("trial " + std::to_string(id) + " is listed twice");
  }
  if (!a.created_at.empty() && !IsUtcTime(a.created_at)) {
    return bad("created_at '" + a.created_at +
               "' is not a UTC time \"YYYY-MM-DDTHH:MM:SSZ\"");
  }
  auto j = json::parse(a.result_json, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return bad("result_json is not a JSON object");
  if (a.kind != "attribute" && !a.runs.empty()) {
    return bad(a.kind + " result has no runs (only attribute results have)");
  }
  for (size_t i = 0; i < a.runs.size(); ++i) {
    XW_RETURN_IF_ERROR(
        CheckRun(a.runs[i], what + ": run " + std::to_string(i)));
  }
  return Status::OK();
}

namespace internal {

Result<AnalysisRecord> StoredForm(const AnalysisRecord& a,
                                  const std::string& what) {
  XW_RETURN_IF_ERROR(CheckAnalysis(a, what));
  AnalysisRecord s = a;
  s.id = 0;
  std::sort(s.trial_ids.begin(), s.trial_ids.end());
  if (s.created_at.empty()) s.created_at = UtcNow();
  if (s.toolkit.empty()) s.toolkit = "xwires " + GetBuildInfo().toolkit_version;
  s.result_json = Canonical(s.result_json);
  for (AnalysisRun& r : s.runs) {
    if (!r.value_json.empty()) r.value_json = Canonical(r.value_json);
  }
  return s;
}

Result<int64_t> InsertAnalysis(SQLite::Database& db, const AnalysisRecord& a,
                               const std::string& what) {
  SQLite::Statement exists(db, "SELECT 1 FROM trials WHERE id = ?");
  for (int64_t id : a.trial_ids) {
    exists.reset();
    exists.bind(1, id);
    if (!exists.executeStep()) {
      return Status::NotFound(what + ": no trial with id " +
                              std::to_string(id));
    }
  }
  SQLite::Statement ins(db,
                        "INSERT INTO analyses (kind, created_at, toolkit, "
                        "summary, result_json) VALUES (?, ?, ?, ?, ?)");
  ins.bind(1, a.kind);
  ins.bind(2, a.created_at);
  ins.bind(3, a.toolkit);
  ins.bind(4, a.summary);
  ins.bind(5, a.result_json);
  ins.exec();
  const int64_t id = db.getLastInsertRowid();
  SQLite::Statement link(db, "INSERT INTO analysis_trials VALUES (?, ?)");
  for (int64_t t : a.trial_ids) {
    link.reset();
    link.bind(1, id);
    link.bind(2, t);
    link.exec();
  }
  SQLite::Statement run(
      db,
      "INSERT INTO analysis_runs (analysis_id, knob, direction, profile, "
      "value_json, status, test_acc, test_loss, weights_sha256) VALUES "
      "(?, ?, ?, ?, ?, ?, ?, ?, ?)");
  for (const AnalysisRun& r : a.runs) {
    run.reset();
    run.bind(1, id);
    run.bind(2, r.knob);
    run.bind(3, r.direction);
    run.bind(4, r.profile);
    run.bind(5, r.value_json);
    run.bind(6, r.status);
    sql::BindReal(run, 7, r.test_acc);
    sql::BindReal(run, 8, r.test_loss);
    run.bind(9, r.weights_sha256);
    run.exec();
  }
  return id;
}

bool HasAnalysis(SQLite::Database& db, const AnalysisRecord& a) {
  const std::vector<AnalysisRecord> same = ReadAnalyses(
      db,
      "a.kind = ? AND a.created_at = ? AND a.toolkit = ? AND a.summary = ? "
      "AND a.result_json = ?",
      {a.kind, a.created_at, a.toolkit, a.summary, a.result_json});
  for (const AnalysisRecord& s : same) {
    if (s.trial_ids == a.trial_ids && SameRuns(s.runs, a.runs)) return true;
  }
  return false;
}

}  // namespace internal

Result<int64_t> StoreAnalysis(Dataset& ds, const AnalysisRecord& a) {
  Dataset::Impl& impl = ds.impl();
  if (impl.read_only) {
    return Status::FailedPrecondition(impl.dir +
                                      ": opened read-only; cannot store " +
                                      a.kind + " results");
  }
  XW_ASSIGN_OR_RETURN(AnalysisRecord s,
                      internal::StoredForm(a, a.kind + " result"));
  int64_t id = 0;
  XW_RETURN_IF_ERROR(sql::Guarded(impl.DbPath(), [&]() -> Status {
    SQLite::Transaction tx(*impl.db, SQLite::TransactionBehavior::IMMEDIATE);
    XW_ASSIGN_OR_RETURN(id,
                        internal::InsertAnalysis(*impl.db, s, s.kind + " result"));
    tx.commit();
    return Status::OK();
  }));
  return id;
}

Result<std::vector<AnalysisRecord>> LoadAnalyses(const Dataset& ds,
                                                 int64_t trial_id,
                                                 const std::string& kind) {
  const Dataset::Impl& impl = ds.impl();
  std::vector<AnalysisRecord> out;
  XW_RETURN_IF_ERROR(sql::Guarded(impl.DbPath(), [&]() -> Status {
    out = ReadAnalyses(*impl.db,
                       "(? < 0 OR a.id IN (SELECT analysis_id FROM "
                       "analysis_trials WHERE trial_id = ?)) AND "
                       "(? = '' OR a.kind = ?)",
                       {trial_id, trial_id, kind, kind});
    return Status::OK();
  }));
  return out;
}

}  // namespace xw
