// Internal: the query filter language (grammar in include/xwires/dataset/
// query.h) parsed into a parameterized SQL condition over `trials t`. Field
// names resolve through a whitelist to fixed SQL expressions; every value
// (and every profile name of acc_<profile> fields) is a bound parameter, so
// user text never becomes SQL.
#ifndef XWIRES_DATASET_QUERY_FILTER_PARSER_H_
#define XWIRES_DATASET_QUERY_FILTER_PARSER_H_

#include <array>
#include <limits>
#include <string>
#include <vector>

#include "dataset/store/sqlite_adapter.h"
#include "xwires/core/status.h"

namespace xw::filter {

// Indexed numeric dimensions whose bounds the query planner looks at.
enum IndexDim { kLr = 0, kAdamEps, kBatchSize, kEpochs, kDivergence, kNumDims };

struct Field {
  std::string name;                // canonical name, e.g. "lr", "acc_torch"
  std::string sql;                 // SQL expression over `t`, may contain '?'
  std::vector<sql::Param> params;  // bound to the '?' in `sql`
  bool numeric = true;
  int index_dim = -1;  // IndexDim or -1
};

// Resolves a field name (aliases included). InvalidArgument naming the field
// and listing the known ones if it is unknown.
Result<Field> ResolveField(const std::string& name);

// A condition: `sql` with `params`, plus the box that every matching trial's
// point lies in (from the top-level conjunction only), which the query
// engine uses to pick the index that drives the scan.
struct Condition {
  std::string sql = "1";
  std::vector<sql::Param> params;
  std::array<double, kNumDims> lo, hi;
  Condition() {
    lo.fill(-std::numeric_limits<double>::infinity());
    hi.fill(std::numeric_limits<double>::infinity());
  }
  // this AND other (boxes intersect).
  void And(const Condition& other);
};

// The language's limits: beyond them Parse returns InvalidArgument. They keep
// the recursive descent shallow and the SQL well inside SQLite's expression
// depth (1000), which a long 'or' chain would otherwise reach.
inline constexpr size_t kMaxFilterBytes = 16384;
inline constexpr int kMaxNesting = 64;        // '(' and 'not' levels
inline constexpr int kMaxComparisons = 256;   // field comparisons and 'is null'

// Parses the filter text. "" (or only spaces) gives the always-true condition.
Result<Condition> Parse(const std::string& text);

// lo <= field <= hi (infinite ends omitted) as a Condition.
Result<Condition> Range(const std::string& field, double lo, double hi);

}  // namespace xw::filter

#endif  // XWIRES_DATASET_QUERY_FILTER_PARSER_H_
