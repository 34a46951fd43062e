#include "sqlite_adapter.h"

#include <sqlite3.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

#include "degenerate_sql.h"

namespace xw::sql {

namespace {

bool Writable(const std::string& path) { return ::access(path.c_str(), W_OK) == 0; }

std::string DirOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// "file:" URI of `path` that opens it read-only and immutable: SQLite takes
// no locks and creates no -wal/-shm (safe when no writer can exist: the file
// or its directory is not writable and no -wal is left over).
std::string ImmutableUri(const std::string& path) {
  std::string uri = "file:";
  for (char c : path) {
    if (c == '%' || c == '?' || c == '#') {
      char hex[4];
      std::snprintf(hex, sizeof hex, "%%%02X", static_cast<unsigned char>(c));
      uri += hex;
    } else {
      uri += c;
    }
  }
  return uri + "?mode=ro&immutable=1";
}

bool Exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

// SQLite maps a WAL database's wal-index (-shm) in 32 KiB pages, allocating
// the first one on the first read.
constexpr uint64_t kWalIndexPageBytes = 32768;

// Too little free space for the -shm file's first page (a full disk): root
// may use the blocks reserved for it.
bool NoRoomForWalIndex(const std::string& dir) {
  struct statvfs st;
  if (::statvfs(dir.c_str(), &st) != 0) return false;
  const uint64_t blocks = ::geteuid() == 0 ? st.f_bfree : st.f_bavail;
  return blocks * static_cast<uint64_t>(st.f_frsize) < kWalIndexPageBytes;
}

// A reader of a WAL database that no connection has open (no -wal file) on
// a disk without room for the -shm file: EXCLUSIVE locking mode keeps the
// wal-index in heap memory, so SQLite creates no -shm, and the empty -wal it
// opens is removed when the connection closes. The lock is held while the
// connection is open: a writer arriving meanwhile waits for it (busy
// timeout), so it never changes pages under this reader. A -shm that an
// earlier attempt of this open left behind is removed under that lock,
// which proves that no other connection uses it.
std::unique_ptr<SQLite::Database> OpenExclusiveReader(const std::string& path,
                                                      bool had_shm) {
  auto db = std::make_unique<SQLite::Database>(
      path, SQLite::OPEN_READWRITE | SQLite::OPEN_NOMUTEX, kBusyTimeoutMs);
  RegisterDegenerateSql(*db);
  db->exec("PRAGMA locking_mode = EXCLUSIVE");
  db->exec("PRAGMA query_only = ON");
  db->execAndGet("SELECT count(*) FROM sqlite_master");
  if (!had_shm) ::unlink((path + "-shm").c_str());
  return db;
}

// The disk was full when SQLite set up the -shm file.
bool NoRoomError(SQLite::Database* db) {
  return db != nullptr && sqlite3_system_errno(db->getHandle()) == ENOSPC;
}

// Which operation SQLite's "disk I/O error" (an EIO from a failing disk,
// mostly) met: the exception does not carry errno.
std::string IoErrorDetail(int extended) {
  switch (extended) {
    case SQLITE_IOERR_READ:
    case SQLITE_IOERR_SHORT_READ:
      return " (a read of the file failed)";
    case SQLITE_IOERR_WRITE:
      return " (a write to the file failed)";
    case SQLITE_IOERR_FSYNC:
    case SQLITE_IOERR_DIR_FSYNC:
      return " (fsync of the file failed)";
    case SQLITE_IOERR_TRUNCATE:
      return " (truncating the file failed)";
    case SQLITE_IOERR_SHMSIZE:
    case SQLITE_IOERR_SHMMAP:
      return " (the -shm file cannot grow)";
    default:
      return "";
  }
}

}  // namespace

Result<std::unique_ptr<SQLite::Database>> OpenDatabase(const std::string& path,
                                                       bool read_only,
                                                       bool create) {
  std::unique_ptr<SQLite::Database> db;
  const bool writable = Writable(path) && Writable(DirOf(path));
  if (!read_only && !writable && ::access(path.c_str(), F_OK) == 0) {
    const int err = errno;
    return Status::IOError(path + ": cannot write (" + std::strerror(err) +
                           "); commands that only read open it read-only");
  }
  // A reader removes only side files it made: none of a running writer's.
  const bool had_wal = Exists(path + "-wal"), had_shm = Exists(path + "-shm");
  const bool may_go_exclusive = read_only && writable && !had_wal;
  const bool exclusive = may_go_exclusive && NoRoomForWalIndex(DirOf(path));
  Status s = Guarded(path, [&]() -> Status {
    if (exclusive) {
      db = OpenExclusiveReader(path, had_shm);
      return Status::OK();
    }
    // NOMUTEX: a Dataset (one connection) is used by one thread at a time,
    // so SQLite's per-call connection mutex is pure overhead.
    int flags = SQLite::OPEN_READWRITE | SQLite::OPEN_NOMUTEX;
    std::string name = path;
    if (read_only && !writable) {
      flags = SQLite::OPEN_READONLY | SQLite::OPEN_NOMUTEX;
      // Read-only storage (a read-only mount, chattr +i, chmod a-w): a
      // WAL database would need a -shm file beside it, so it is opened
      // immutable unless a -wal left by a writer holds committed pages
      // (then SQLite reads it through an existing -shm).
      if (::access((path + "-wal").c_str(), F_OK) != 0) {
        name = ImmutableUri(path);
        flags |= SQLite::OPEN_URI;
      }
    }
    if (!read_only && create) flags |= SQLite::OPEN_CREATE;
    db = std::make_unique<SQLite::Database>(name, flags, kBusyTimeoutMs);
    RegisterDegenerateSql(*db);
    if (read_only) {
      db->exec("PRAGMA query_only = ON");
      // The first read opens the WAL index: its failure (a full disk, an
      // I/O error) is reported here with the system's cause.
      db->execAndGet("SELECT count(*) FROM sqlite_master");
      return Status::OK();
    }
    // journal_mode is persistent in the file; switching needs a write, so
    // only do it when the file is not in WAL mode yet (i.e. when creating).
    std::string mode = db->execAndGet("PRAGMA journal_mode").getString();
    if (mode != "wal") db->execAndGet("PRAGMA journal_mode = WAL");
    db->exec("PRAGMA synchronous = FULL");
    db->exec("PRAGMA foreign_keys = ON");
    // Up to 512 MiB of page cache (allocated only as used): bulk inserts into
    // the divergence indexes touch pages all over them.
    db->exec("PRAGMA cache_size = -524288");
    return Status::OK();
  });
  if (!s.ok() && may_go_exclusive && !exclusive && NoRoomError(db.get())) {
    // The disk filled up between the check above and the open.
    db.reset();
    s = Guarded(path, [&]() -> Status {
      db = OpenExclusiveReader(path, had_shm);
      return Status::OK();
    });
  }
  if (!s.ok()) {
    // SQLite says "disk I/O error" for a -shm it cannot grow: add errno's
    // cause (ENOSPC, EIO, EROFS).
    const int sys = db ? sqlite3_system_errno(db->getHandle()) : 0;
    if (sys > 0 && s.message().find(std::strerror(sys)) == std::string::npos)
      return Status(s.code(), s.message() + " (" + std::strerror(sys) + ")");
    return s;
  }
  return db;
}

Status FromException(const std::exception& e, const std::string& what) {
  const auto* se = dynamic_cast<const SQLite::Exception*>(&e);
  std::string msg = what + ": " + e.what();
  if (!se) return Status::Internal(msg);
  switch (se->getErrorCode()) {
    case SQLITE_NOTADB:
      return Status::Corruption(what + ": not an SQLite database (" + e.what() +
                                ")");
    case SQLITE_CORRUPT:
    case SQLITE_FORMAT:
      return Status::Corruption(what + ": database is corrupt or truncated (" +
                                e.what() + ")");
    case SQLITE_CONSTRAINT:
    case SQLITE_MISMATCH:
    case SQLITE_RANGE:
      return Status::InvalidArgument(msg);
    case SQLITE_FULL:
      return Status::IOError(what + ": cannot write: the disk is full (" +
                             e.what() + ")");
    case SQLITE_READONLY:
      return Status::IOError(what + ": cannot write: read-only (" + e.what() +
                             ")");
    case SQLITE_CANTOPEN:
      return Status::IOError(what + ": cannot open (" + e.what() + ")");
    case SQLITE_IOERR:
      return Status::IOError(msg + IoErrorDetail(se->getExtendedErrorCode()));
    default:
      return Status::IOError(msg);
  }
}

void Bind(SQLite::Statement& st, int index, const Param& p) {
  if (std::holds_alternative<std::monostate>(p)) {
    st.bind(index);
  } else if (const auto* i = std::get_if<int64_t>(&p)) {
    st.bind(index, *i);
  } else if (const auto* d = std::get_if<double>(&p)) {
    BindReal(st, index, *d);
  } else {
    st.bind(index, std::get<std::string>(p));
  }
}

void BindAll(SQLite::Statement& st, const std::vector<Param>& params) {
  for (size_t i = 0; i < params.size(); ++i)
    Bind(st, static_cast<int>(i + 1), params[i]);
}

void BindReal(SQLite::Statement& st, int index, double v) {
  if (std::isnan(v)) {
    st.bind(index);
  } else {
    st.bind(index, v);
  }
}

void BindOptInt(SQLite::Statement& st, int index,
                const std::optional<int64_t>& v) {
  if (v) {
    st.bind(index, *v);
  } else {
    st.bind(index);
  }
}

double GetReal(const SQLite::Column& c) {
  return c.isNull() ? std::numeric_limits<double>::quiet_NaN() : c.getDouble();
}

std::optional<int64_t> GetOptInt(const SQLite::Column& c) {
  if (c.isNull()) return std::nullopt;
  return c.getInt64();
}

std::string GetText(const SQLite::Column& c) {
  return c.isNull() ? "" : c.getString();
}

}  // namespace xw::sql
