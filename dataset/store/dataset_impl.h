// Internal: Dataset's state shared by the dataset's .cc files (the store's,
// and the query side's engine, near search and stats), and the row readers
// that turn SQL rows into TrialRow / ModelRow.
#ifndef XWIRES_DATASET_STORE_DATASET_IMPL_H_
#define XWIRES_DATASET_STORE_DATASET_IMPL_H_

#include <SQLiteCpp/SQLiteCpp.h>

#include <memory>
#include <string>
#include <vector>

#include "sqlite_adapter.h"
#include "xwires/dataset/store/dataset.h"

namespace xw {

class Dataset::Impl {
 public:
  std::string dir;
  bool read_only = true;
  int version = 0;
  std::unique_ptr<SQLite::Database> db;

  std::string DbPath() const { return dir + "/xwires.db"; }
  std::string Abs(const std::string& rel) const { return dir + "/" + rel; }
};

// The column list of a trial row, for "SELECT <kTrialColumns> FROM trials t
// ...".
extern const char* const kTrialColumns;
// Reads a row selected with kTrialColumns (models left empty).
TrialRow ReadTrialColumns(const SQLite::Statement& st);
// Fills `models` of every trial (one indexed lookup per trial).
void AttachModels(SQLite::Database& db, std::vector<TrialRow>& trials);
// Runs `select` ("SELECT <kTrialColumns> FROM trials t ...") with `params`
// bound in order: its trials in row order, models attached. Errors name
// xwires.db.
Result<std::vector<TrialRow>> SelectTrials(
    const Dataset::Impl& impl, const std::string& select,
    const std::vector<sql::Param>& params);
// "SELECT <model columns> FROM models m JOIN profiles pr ..." ; models as `m`.
extern const char* const kModelSelect;
ModelRow ReadModelColumns(const SQLite::Statement& st);

// Inserts a search row; returns its id. Throws SQLite::Exception.
int64_t InsertSearch(SQLite::Database& db, const SearchRecord& s);
// The id of a stored search with the same objective and the same config and
// space (as JSON values), or of a new row for `s`; `added` tells which.
// Throws SQLite::Exception.
int64_t FindOrInsertSearch(SQLite::Database& db, const SearchRecord& s,
                           bool* added);

}  // namespace xw

#endif  // XWIRES_DATASET_STORE_DATASET_IMPL_H_
