// Internal: Dataset's state shared by the module's .cc files (store, query
// engine, stats, fsck), and the row readers that turn SQL rows into
// TrialRow / ModelRow.
#ifndef XWIRES_DATASET_DATASET_IMPL_H_
#define XWIRES_DATASET_DATASET_IMPL_H_

#include <SQLiteCpp/SQLiteCpp.h>

#include <memory>
#include <string>
#include <vector>

#include "xwires/dataset/dataset.h"

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

// The column list of a trial row, for "SELECT <kTrialColumns> FROM trials t ...".
extern const char* const kTrialColumns;
// Reads a row selected with kTrialColumns (models left empty).
TrialRow ReadTrialColumns(const SQLite::Statement& st);
// Fills `models` of every trial (one indexed lookup per trial).
void AttachModels(SQLite::Database& db, std::vector<TrialRow>& trials);
// "SELECT <model columns> FROM models m JOIN profiles pr ..." ; models as `m`.
extern const char* const kModelSelect;
ModelRow ReadModelColumns(const SQLite::Statement& st);

}  // namespace xw

#endif  // XWIRES_DATASET_DATASET_IMPL_H_
