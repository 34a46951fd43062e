// Internal SQLite adapter of the dataset module (SQLiteCpp underneath):
// opening a dataset database with the right pragmas, translating SQLite
// errors into Status, and NULL <-> NaN / optional conversions. SQLite headers
// stay in dataset/.
#ifndef XWIRES_DATASET_STORE_SQLITE_ADAPTER_H_
#define XWIRES_DATASET_STORE_SQLITE_ADAPTER_H_

#include <SQLiteCpp/SQLiteCpp.h>

#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "xwires/core/status.h"

namespace xw::sql {

// A bound SQL parameter: NULL, integer, real or text.
using Param = std::variant<std::monostate, int64_t, double, std::string>;

// How long a writer waits for another process's transaction (SQLITE_BUSY).
inline constexpr int kBusyTimeoutMs = 60000;

// Opens `path`. Read-only connections never create or change files: they are
// opened read-write when the file and its directory are writable (so
// SQLite's last-connection cleanup removes the -wal/-shm files it creates)
// but with query_only=ON; on read-only storage (read-only mount, chattr +i,
// chmod a-w) they are opened SQLITE_OPEN_READONLY, with the immutable URI
// flag unless a -wal file is present; on a disk too full for the -shm file
// (and no -wal present) they take SQLite's EXCLUSIVE locking mode, which
// keeps the wal-index in memory, for as long as they are open (writers wait
// for it). A writer on read-only storage gets
// IOError naming the cause. Writers get WAL, synchronous=FULL, foreign keys
// and a busy timeout. Errors name `path`.
Result<std::unique_ptr<SQLite::Database>> OpenDatabase(const std::string& path,
                                                       bool read_only,
                                                       bool create);

// Translates an exception thrown by SQLiteCpp (or anything else) into a
// Status prefixed with `what`: "not a database"/"malformed" -> Corruption,
// busy/locked/readonly/IO -> IOError, constraint -> InvalidArgument.
Status FromException(const std::exception& e, const std::string& what);

// Runs `fn` and converts any exception into a Status via FromException.
template <typename Fn>
Status Guarded(const std::string& what, Fn&& fn) {
  try {
    return fn();
  } catch (const std::exception& e) {
    return FromException(e, what);
  }
}

void Bind(SQLite::Statement& st, int index, const Param& p);
void BindAll(SQLite::Statement& st, const std::vector<Param>& params);
// NaN is stored as NULL.
void BindReal(SQLite::Statement& st, int index, double v);
void BindOptInt(SQLite::Statement& st, int index,
                const std::optional<int64_t>& v);

double GetReal(const SQLite::Column& c);  // NULL -> NaN
std::optional<int64_t> GetOptInt(const SQLite::Column& c);
std::string GetText(const SQLite::Column& c);  // NULL -> ""

}  // namespace xw::sql

#endif  // XWIRES_DATASET_STORE_SQLITE_ADAPTER_H_
