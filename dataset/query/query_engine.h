// Internal to the query side: a TrialQuery compiled to SQL, shared by the
// engine (Dataset::Query / Count), the nearest-neighbour scan and stats.
#ifndef XWIRES_DATASET_QUERY_QUERY_ENGINE_H_
#define XWIRES_DATASET_QUERY_QUERY_ENGINE_H_

#include <string>
#include <vector>

#include "dataset/store/sqlite_adapter.h"
#include "xwires/core/status.h"
#include "xwires/dataset/query/query.h"

namespace xw {

// A TrialQuery compiled to SQL over trials `t`:
//   "SELECT ... FROM " + tables + " WHERE " + where + order
// with `params` bound in order, then `order_params` if `order` is used.
struct CompiledQuery {
  std::string tables;
  std::string where;
  std::vector<sql::Param> params;
  std::string order;
  std::vector<sql::Param> order_params;
  std::string From() const { return "FROM " + tables + " WHERE " + where; }
};
Result<CompiledQuery> CompileQuery(const TrialQuery& q);

}  // namespace xw

#endif  // XWIRES_DATASET_QUERY_QUERY_ENGINE_H_
