// Stored profile definitions (the api module's one SQLite adapter, read-only;
// SQLiteCpp objects are RAII).
#include "xwires/api/analysis_store.h"

#include <SQLiteCpp/SQLiteCpp.h>
#include <sqlite3.h>
#include <unistd.h>

#include <memory>


namespace xw {
namespace {

constexpr int kBusyTimeoutMs = 60000;

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

// A second connection to the dataset's database, with query_only (and the
// file opened read-only when it is not writable), like the dataset module's
// own read-only connections, so reading never changes a file.
Result<std::unique_ptr<SQLite::Database>> Connect(const Dataset& ds) {
  const std::string path = ds.dir() + "/xwires.db";
  std::unique_ptr<SQLite::Database> db;
  XW_RETURN_IF_ERROR(Guarded(path, [&]() -> Status {
    int flags = SQLite::OPEN_READWRITE;
    if (::access(path.c_str(), W_OK) != 0) flags = SQLite::OPEN_READONLY;
    db = std::make_unique<SQLite::Database>(path, flags, kBusyTimeoutMs);
    db->exec("PRAGMA query_only = ON");
    return Status::OK();
  }));
  return db;
}

}  // namespace

Result<std::vector<std::string>> StoredProfileJson(const Dataset& ds,
                                                   const TrialRow& trial) {
  const std::string what = ds.dir() + "/xwires.db";
  XW_ASSIGN_OR_RETURN(auto db, Connect(ds));
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
