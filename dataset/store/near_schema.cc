#include "near_schema.h"

namespace xw::near {
namespace {

// 1 when column `c` of row `row` is known, else 0 (NULL included).
std::string Known(const std::string& row, int d) {
  const std::string c = row + "." + kNearDims[d].column;
  return kNearDims[d].log_scale
             ? "coalesce(" + c + " > 0 AND " + c + " < 9e999, 0)"
             : "coalesce(" + c + " > -9e999 AND " + c + " < 9e999, 0)";
}

// The value when known, else NULL.
std::string Value(const std::string& row, int d) {
  return "(CASE WHEN " + Known(row, d) + " THEN " + row + "." +
         kNearDims[d].column + " END)";
}

std::string Mask(const std::string& row) {
  std::string s = "(";
  for (int d = 0; d < kNumNearDims; ++d) {
    s += (d ? " + " : "") + std::to_string(1 << d) + " * " + Known(row, d);
  }
  return s + ")";
}

// Box edges of a trial. A box of zero width in some dim would give every
// node of the tree zero area when that dim is constant (a search that does
// not vary epochs), and the module's choose-subtree step, which compares
// areas, would stop steering inserts: each known box gets a small width.
std::string Box(const std::string& row) {
  std::string s;
  for (int d = 0; d < kNumNearDims; ++d) {
    const std::string c = row + "." + kNearDims[d].column;
    const std::string width = kNearDims[d].log_scale ? c + " * 1e-4"
                              : std::string(kNearDims[d].column) == "weight_decay"
                                  ? "1e-9 + abs(" + c + ") * 1e-4"
                                  : "0.25";
    s += ", CASE WHEN " + Known(row, d) + " THEN " + c + " ELSE -2 END";
    s += ", CASE WHEN " + Known(row, d) + " THEN " + c + " + " + width +
         " ELSE -1 END";
  }
  return s;
}

std::string BoundColumns() {
  std::string s;
  for (int d = 0; d < kNumNearDims; ++d) {
    const std::string n = std::to_string(d);
    s += (d ? ", " : "") + ("lo" + n) + ", hi" + n;
  }
  return s;
}

std::string AddBox(const std::string& row) {
  return "INSERT INTO trials_near VALUES (" + row + ".id" + Box(row) + ");";
}

// Counts the trial `row` in its mask's bounds.
std::string AddBounds(const std::string& row) {
  std::string values, update = "n = n + 1";
  for (int d = 0; d < kNumNearDims; ++d) {
    const std::string n = std::to_string(d);
    values += ", " + Value(row, d) + ", " + Value(row, d);
    update += ", lo" + n + " = min(lo" + n + ", excluded.lo" + n + "), hi" +
              n + " = max(hi" + n + ", excluded.hi" + n + ")";
  }
  return "INSERT INTO trials_near_bounds VALUES (" + Mask(row) + ", 1" +
         values + ") ON CONFLICT (mask) DO UPDATE SET " + update + ";";
}

// Takes the (already deleted or changed) trial `old` out of its mask's
// bounds: the extremes are recomputed only when it held one of them.
std::string RemoveBounds() {
  const std::string mask = Mask("old");
  std::string aggregates, held;
  for (int d = 0; d < kNumNearDims; ++d) {
    const std::string n = std::to_string(d);
    aggregates += std::string(d ? ", " : "") + "min(" + Value("t", d) +
                  "), max(" + Value("t", d) + ")";
    held += std::string(d ? " OR " : "") + "lo" + n + " = " + Value("old", d) +
            " OR hi" + n + " = " + Value("old", d);
  }
  return "UPDATE trials_near_bounds SET n = n - 1 WHERE mask = " + mask +
         "; DELETE FROM trials_near_bounds WHERE mask = " + mask +
         " AND n <= 0; UPDATE trials_near_bounds SET (" + BoundColumns() +
         ") = (SELECT " + aggregates + " FROM trials t WHERE " + Mask("t") +
         " = trials_near_bounds.mask) WHERE mask = " + mask + " AND (" + held +
         ");";
}

std::string FillBounds(const std::string& where, bool merge) {
  std::string s = "INSERT INTO trials_near_bounds SELECT " + Mask("t") +
                  ", count(*)";
  std::string update = "n = n + excluded.n";
  for (int d = 0; d < kNumNearDims; ++d) {
    const std::string n = std::to_string(d);
    s += ", min(" + Value("t", d) + "), max(" + Value("t", d) + ")";
    update += ", lo" + n + " = min(lo" + n + ", excluded.lo" + n + "), hi" +
              n + " = max(hi" + n + ", excluded.hi" + n + ")";
  }
  s += " FROM trials t WHERE " + where + " GROUP BY 1";
  // "ORDER BY 1" keeps SQLite from reading the ON of the upsert as a join.
  if (merge) s += " ORDER BY 1 ON CONFLICT (mask) DO UPDATE SET " + update;
  return s;
}

}  // namespace

std::vector<std::string> DeferredIndexStatements() {
  return {"INSERT INTO trials_near SELECT t.id" + Box("t") +
              " FROM trials t WHERE t.id BETWEEN ?1 AND ?2",
          FillBounds("t.id BETWEEN ?1 AND ?2", true)};
}

std::string ExpectedBoundsQuery() {
  const std::string fill = FillBounds("1", false);
  return fill.substr(fill.find("SELECT"));
}

std::vector<std::string> RebuildStatements() {
  return {"DELETE FROM trials_near_deferred", "DELETE FROM trials_near",
          "DELETE FROM trials_near_bounds",
          "INSERT INTO trials_near SELECT t.id" + Box("t") + " FROM trials t",
          FillBounds("1", false)};
}

std::vector<std::string> NearIndexStatements() {
  std::string columns = "id";
  for (int d = 0; d < kNumNearDims; ++d) {
    columns += std::string(", ") + kNearDims[d].column + "_lo, " +
               kNearDims[d].column + "_hi";
  }
  std::string bounds;
  for (int d = 0; d < kNumNearDims; ++d) {
    const std::string n = std::to_string(d);
    bounds += ", lo" + n + " REAL, hi" + n + " REAL";
  }
  std::string watched = "id";
  for (const NearDim& d : kNearDims) watched += std::string(", ") + d.column;
  return {
      "CREATE VIRTUAL TABLE trials_near USING rtree(" + columns + ")",
      "CREATE TABLE trials_near_bounds (mask INTEGER PRIMARY KEY, n INTEGER "
      "NOT NULL" + bounds + ")",
      "CREATE TABLE trials_near_deferred (one INTEGER PRIMARY KEY CHECK "
      "(one = 1))",
      "INSERT INTO trials_near SELECT t.id" + Box("t") + " FROM trials t",
      FillBounds("1", false),
      "CREATE TRIGGER trials_near_insert AFTER INSERT ON trials WHEN NOT "
      "EXISTS (SELECT 1 FROM trials_near_deferred) BEGIN " +
          AddBox("new") + " " + AddBounds("new") + " END",
      "CREATE TRIGGER trials_near_delete AFTER DELETE ON trials BEGIN "
      "DELETE FROM trials_near WHERE id = old.id; " + RemoveBounds() + " END",
      "CREATE TRIGGER trials_near_update AFTER UPDATE OF " + watched +
          " ON trials BEGIN DELETE FROM trials_near WHERE id = old.id; " +
          RemoveBounds() + " " + AddBox("new") + " " + AddBounds("new") +
          " END",
  };
}

}  // namespace xw::near
