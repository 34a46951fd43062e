// Internal: the degenerate-model flags (xwires/dataset/store/degenerate.h) in
// SQL, for the query fields `collapsed` and `at_chance`.
#ifndef XWIRES_DATASET_STORE_DEGENERATE_SQL_H_
#define XWIRES_DATASET_STORE_DEGENERATE_SQL_H_

#include <string>

namespace SQLite {
class Database;
}

namespace xw {

// Registers xw_model_flag (deterministic) on `db`; sql::OpenDatabase calls
// it on every connection. Throws SQLite::Exception on failure (inside
// sql::Guarded).
void RegisterDegenerateSql(SQLite::Database& db);

// SQL expression over `trials t` giving the trial's flag: 1 if any model is
// flagged, 0 if none is and some flag is known, NULL if every one is unknown.
enum class DegenerateFlag { kCollapsed, kAtChance };
const std::string& TrialFlagSql(DegenerateFlag flag);

}  // namespace xw

#endif  // XWIRES_DATASET_STORE_DEGENERATE_SQL_H_
