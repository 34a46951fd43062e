// The module-internal Dataset interface (dataset_internal.h) on Dataset's
// state (dataset_impl.h).
#include "dataset_internal.h"

#include <SQLiteCpp/SQLiteCpp.h>

#include "dataset_impl.h"
#include "sqlite_adapter.h"

namespace xw::internal {

Result<std::map<int64_t, std::string>> ModelProfileDefinitions(
    const Dataset& ds) {
  std::map<int64_t, std::string> out;
  const Dataset::Impl& impl = ds.impl();
  XW_RETURN_IF_ERROR(sql::Guarded(impl.DbPath(), [&]() -> Status {
    SQLite::Statement st(*impl.db,
                         "SELECT m.id, pr.json FROM models m JOIN profiles pr "
                         "ON pr.id = m.profile_id");
    while (st.executeStep())
      out[st.getColumn(0).getInt64()] = sql::GetText(st.getColumn(1));
    return Status::OK();
  }));
  return out;
}

}  // namespace xw::internal
