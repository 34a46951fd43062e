// Dataset: opening/creating the directory, searches, single-trial reads and
// weights/curves loading. Adding trials lives in add_trials.cc, queries in
// query_engine.cc.
#include "xwires/dataset/store/dataset.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "dataset_impl.h"
#include "dir_lock.h"
#include "model_file.h"
#include "schema.h"
#include "sqlite_adapter.h"
#include "xwires/core/clock.h"

namespace xw {

namespace fs = std::filesystem;

namespace {

// True if `dir` holds nothing but (possibly) files of a dataset being created.
bool DirIsEmptyOrDataset(const fs::path& dir) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    std::string name = e.path().filename().string();
    if (name.rfind("xwires.db", 0) != 0 && name != DirLock::kFileName)
      return false;
  }
  return !ec;
}

// Cheap checks before SQLite sees the file, for precise messages: the magic
// header, and (when no writer is active, i.e. no -wal file) that the file is
// as long as its header says. A zero-length file is a dataset being created
// only when `may_be_new` (kCreate in a directory holding nothing else);
// anywhere else it is a database that lost its contents, and treating it as
// new would put a fresh schema beside weight files no row points at.
Status PrecheckDbFile(const std::string& path, bool may_be_new) {
  // A read error (EIO from a failing disk) is that error, never a short
  // or empty file.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  int err = fd < 0 ? errno : 0;
  unsigned char h[100] = {};
  size_t n = 0;
  while (err == 0 && n < sizeof h) {
    const ssize_t got = ::pread(fd, h + n, sizeof h - n, static_cast<off_t>(n));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) err = errno;
    if (got <= 0) break;
    n += static_cast<size_t>(got);
  }
  if (fd >= 0) ::close(fd);
  if (err != 0)
    return Status::IOError(path + ": cannot read (" + std::strerror(err) + ")");
  if (n == 0) {
    if (may_be_new) return Status::OK();
    return Status::Corruption(
        path + ": empty (zero-length) database file: the dataset's rows are "
               "lost; restore xwires.db from a copy (nothing was changed)");
  }
  if (n < 100 || std::memcmp(h, "SQLite format 3", 16) != 0) {
    return Status::Corruption(path + ": not an SQLite database (bad header)");
  }
  struct stat wal;
  if (::stat((path + "-wal").c_str(), &wal) == 0) return Status::OK();
  auto be32 = [&](int o) {
    return (uint32_t(h[o]) << 24) | (uint32_t(h[o + 1]) << 16) |
           (uint32_t(h[o + 2]) << 8) | h[o + 3];
  };
  uint64_t page_size = (uint32_t(h[16]) << 8) | h[17];
  if (page_size == 1) page_size = 65536;
  uint64_t pages = be32(28);
  bool size_valid = pages != 0 && be32(24) == be32(92);
  struct stat st;
  if (size_valid && ::stat(path.c_str(), &st) == 0 &&
      static_cast<uint64_t>(st.st_size) < pages * page_size) {
    return Status::Corruption(
        path + ": truncated (header says " + std::to_string(pages * page_size) +
        " bytes, file has " + std::to_string(st.st_size) + ")");
  }
  return Status::OK();
}

}  // namespace

const ModelRow* TrialRow::Model(const std::string& profile) const {
  for (const ModelRow& m : models) {
    if (m.profile == profile) return &m;
  }
  return nullptr;
}

Dataset::Dataset(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Dataset::~Dataset() = default;

const std::string& Dataset::dir() const { return impl_->dir; }
bool Dataset::read_only() const { return impl_->read_only; }
int Dataset::schema_version() const { return impl_->version; }

Result<std::unique_ptr<Dataset>> Dataset::Open(const std::string& dir_in,
                                               OpenMode mode) {
  if (dir_in.empty()) return Status::InvalidArgument("empty dataset path");
  auto impl = std::make_unique<Impl>();
  impl->dir = fs::path(dir_in).lexically_normal().string();
  if (impl->dir.size() > 1 && impl->dir.back() == '/') impl->dir.pop_back();
  impl->read_only = mode == OpenMode::kReadOnly;
  const std::string db_path = impl->DbPath();
  std::error_code ec;
  bool db_exists = fs::exists(db_path, ec);
  if (mode == OpenMode::kCreate && !db_exists) {
    if (fs::exists(impl->dir, ec) && !fs::is_directory(impl->dir, ec)) {
      return Status::InvalidArgument(impl->dir +
                                     ": exists and is not a directory");
    }
    if (fs::exists(impl->dir, ec) && !DirIsEmptyOrDataset(impl->dir)) {
      return Status::InvalidArgument(
          impl->dir +
          ": not an xwires dataset (no xwires.db) and not empty; "
          "refusing to create one there");
    }
    fs::create_directories(impl->dir, ec);
    if (ec)
      return Status::IOError(impl->dir +
                             ": cannot create directory: " + ec.message());
  } else if (!db_exists) {
    if (!fs::exists(impl->dir, ec))
      return Status::NotFound(impl->dir + ": no such dataset directory");
    return Status::NotFound(impl->dir +
                            ": not an xwires dataset (no xwires.db)");
  }
  const bool may_be_new = mode == OpenMode::kCreate &&
                          (!db_exists || DirIsEmptyOrDataset(impl->dir));
  if (db_exists) XW_RETURN_IF_ERROR(PrecheckDbFile(db_path, may_be_new));
  XW_ASSIGN_OR_RETURN(impl->db, sql::OpenDatabase(db_path, impl->read_only,
                                                  mode == OpenMode::kCreate));
  XW_ASSIGN_OR_RETURN(impl->version, schema::ReadVersion(*impl->db, db_path));
  if (impl->version == 0 && !may_be_new) {
    return Status::Corruption(
        db_path + ": holds no xwires schema" +
        (mode == OpenMode::kReadOnly
             ? std::string()
             : " but the directory holds other files; refusing to create a "
               "fresh schema beside them (restore xwires.db from a copy)"));
  }
  // A writer never builds on a damaged file: SQLite's quick_check (b-tree
  // structure, page and record formats) before the first write.
  if (!impl->read_only && impl->version > 0)
    XW_RETURN_IF_ERROR(schema::QuickCheck(*impl->db, db_path));
  if (!impl->read_only && impl->version < kDatasetSchemaVersion) {
    XW_RETURN_IF_ERROR(schema::Migrate(*impl->db, db_path));
    XW_ASSIGN_OR_RETURN(impl->version, schema::ReadVersion(*impl->db, db_path));
  }
  XW_RETURN_IF_ERROR(schema::CheckReadable(impl->version, db_path));
  XW_RETURN_IF_ERROR(schema::CheckTables(*impl->db, db_path));
  if (mode == OpenMode::kCreate) {
    XW_ASSIGN_OR_RETURN(DirLock lock,
                        DirLock::Acquire(impl->dir, DirLock::Kind::kShared));
  }
  return std::unique_ptr<Dataset>(new Dataset(std::move(impl)));
}

int64_t InsertSearch(SQLite::Database& db, const SearchRecord& s) {
  SQLite::Statement st(db,
                       "INSERT INTO searches (created_at, config_json, "
                       "space_json, objective, status) VALUES (?, ?, ?, ?, ?)");
  st.bind(1, UtcNow());
  st.bind(2, s.config_json);
  st.bind(3, s.space_json);
  st.bind(4, s.objective);
  st.bind(5, s.status);
  st.exec();
  return db.getLastInsertRowid();
}

namespace {
// Equal as JSON values (key order and spacing aside), or as text.
bool SameJson(const std::string& a, const std::string& b) {
  if (a == b) return true;
  auto ja = nlohmann::json::parse(a, nullptr, false);
  auto jb = nlohmann::json::parse(b, nullptr, false);
  return !ja.is_discarded() && !jb.is_discarded() && ja == jb;
}
}  // namespace

int64_t FindOrInsertSearch(SQLite::Database& db, const SearchRecord& s,
                           bool* added) {
  SQLite::Statement st(db,
                       "SELECT id, config_json, space_json FROM searches "
                       "WHERE objective = ? ORDER BY id");
  st.bind(1, s.objective);
  while (st.executeStep()) {
    if (SameJson(sql::GetText(st.getColumn(1)), s.config_json) &&
        SameJson(sql::GetText(st.getColumn(2)), s.space_json)) {
      *added = false;
      return st.getColumn(0).getInt64();
    }
  }
  *added = true;
  return InsertSearch(db, s);
}

Result<int64_t> Dataset::AddSearch(const SearchRecord& s) {
  if (impl_->read_only)
    return Status::FailedPrecondition(impl_->dir + ": opened read-only");
  int64_t id = 0;
  XW_RETURN_IF_ERROR(sql::Guarded(impl_->DbPath(), [&]() -> Status {
    id = InsertSearch(*impl_->db, s);
    return Status::OK();
  }));
  return id;
}

Status Dataset::SetSearchStatus(int64_t search_id, const std::string& status) {
  if (impl_->read_only)
    return Status::FailedPrecondition(impl_->dir + ": opened read-only");
  return sql::Guarded(impl_->DbPath(), [&]() -> Status {
    SQLite::Statement st(*impl_->db,
                         "UPDATE searches SET status = ? WHERE id = ?");
    st.bind(1, status);
    st.bind(2, search_id);
    if (st.exec() == 0)
      return Status::NotFound("no search with id " + std::to_string(search_id));
    return Status::OK();
  });
}

Result<std::vector<SearchRow>> Dataset::Searches() const {
  std::vector<SearchRow> out;
  XW_RETURN_IF_ERROR(sql::Guarded(impl_->DbPath(), [&]() -> Status {
    SQLite::Statement st(
        *impl_->db,
        "SELECT id, created_at, config_json, space_json, objective, status "
        "FROM searches ORDER BY id");
    while (st.executeStep()) {
      SearchRow r;
      r.id = st.getColumn(0).getInt64();
      r.created_at = st.getColumn(1).getString();
      r.record = {st.getColumn(2).getString(), st.getColumn(3).getString(),
                  st.getColumn(4).getString(), st.getColumn(5).getString()};
      out.push_back(std::move(r));
    }
    return Status::OK();
  }));
  return out;
}

Result<TrialRow> Dataset::GetTrial(int64_t trial_id) const {
  XW_ASSIGN_OR_RETURN(std::vector<TrialRow> rows,
                      SelectTrials(*impl_,
                                   std::string("SELECT ") + kTrialColumns +
                                       " FROM trials t WHERE t.id = ?",
                                   {trial_id}));
  if (rows.empty()) {
    return Status::NotFound(impl_->dir + ": no trial with id " +
                            std::to_string(trial_id));
  }
  return std::move(rows[0]);
}

namespace {
Result<ModelRow> GetModel(const Dataset::Impl& impl, int64_t model_id) {
  std::optional<ModelRow> m;
  XW_RETURN_IF_ERROR(sql::Guarded(impl.DbPath(), [&]() -> Status {
    SQLite::Statement st(*impl.db,
                         std::string(kModelSelect) + " WHERE m.id = ?");
    st.bind(1, model_id);
    if (st.executeStep()) m = ReadModelColumns(st);
    return Status::OK();
  }));
  if (!m)
    return Status::NotFound(impl.dir + ": no model with id " +
                            std::to_string(model_id));
  return *m;
}
}  // namespace

Result<NamedTensors> Dataset::LoadWeights(int64_t model_id) const {
  XW_ASSIGN_OR_RETURN(ModelRow m, GetModel(*impl_, model_id));
  if (!m.has_weights) {
    return Status::NotFound("model " + std::to_string(model_id) + " (" +
                            m.profile + ") has no stored weights");
  }
  XW_ASSIGN_OR_RETURN(NamedTensors w,
                      ReadBundleWeights(impl_->Abs(m.h5_file), m.h5_group));
  if (WeightsSha256(w) != m.weights_sha256) {
    return Status::Corruption(impl_->Abs(m.h5_file) + ":" + m.h5_group +
                              ": weights do not match their recorded sha256");
  }
  return w;
}

Result<std::vector<EpochMetrics>> Dataset::LoadCurves(int64_t model_id) const {
  XW_ASSIGN_OR_RETURN(ModelRow m, GetModel(*impl_, model_id));
  if (m.h5_file.empty()) return std::vector<EpochMetrics>{};
  return ReadBundleCurves(impl_->Abs(m.h5_file), m.h5_group);
}

Result<std::vector<std::string>> Dataset::ProfileNames() const {
  std::vector<std::string> out;
  XW_RETURN_IF_ERROR(sql::Guarded(impl_->DbPath(), [&]() -> Status {
    SQLite::Statement st(*impl_->db,
                         "SELECT DISTINCT name FROM profiles ORDER BY name");
    while (st.executeStep()) out.push_back(st.getColumn(0).getString());
    return Status::OK();
  }));
  return out;
}

}  // namespace xw
