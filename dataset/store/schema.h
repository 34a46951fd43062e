// Internal: the SQL schema of xwires.db, its version and migrations.
//
// Version history (kDatasetSchemaVersion in dataset.h is the newest):
//   1: searches, provenance, profiles, trials, models.
//   2: analyses (compare / attribute / mi results, the trials each describes,
//      attribution runs), moved from the api module's own tables; the
//      nearest-neighbour index trials_near + trials_near_bounds
//      (near_schema.h).
//   3: replicas and replica_stats (xwires/dataset/store/replicas.h).
//   4: replica_stats.first_replica, part of the row's UNIQUE key (a search's
//      selection and confirmation rows of one family side by side).
// A migration is a list of SQL statements that takes version v-1 to v; all
// pending migrations run in one IMMEDIATE transaction, so concurrent openers
// migrate exactly once.
#ifndef XWIRES_DATASET_STORE_SCHEMA_H_
#define XWIRES_DATASET_STORE_SCHEMA_H_

#include <SQLiteCpp/Database.h>

#include <string>

#include "xwires/core/status.h"

namespace xw::schema {

// The stored version: 0 for an empty database (no tables at all).
// Corruption if tables exist but schema_version does not (not a dataset).
Result<int> ReadVersion(SQLite::Database& db, const std::string& what);

// Brings the database to kDatasetSchemaVersion. NotSupported if it is newer.
Status Migrate(SQLite::Database& db, const std::string& what);

// Refuses versions this build cannot read (newer, or older ones that need a
// read-write open to migrate).
Status CheckReadable(int version, const std::string& what);

// SQLite's `PRAGMA quick_check`: Corruption naming its first finding.
Status QuickCheck(SQLite::Database& db, const std::string& what);

// The tables (with their columns), indexes and triggers of the current
// schema, compared with a reference built in memory by Migrate: a schema
// text corrupted into another valid one (a renamed column, a missing
// index) is Corruption naming what differs, not a later "no such column".
// Call only on a database at kDatasetSchemaVersion; extra objects are
// allowed.
Status CheckTables(SQLite::Database& db, const std::string& what);

}  // namespace xw::schema

#endif  // XWIRES_DATASET_STORE_SCHEMA_H_
