#include "testing/search_rows.h"

#include <gtest/gtest.h>

#include "xwires/dataset/query/query.h"

namespace xw::testutil {

std::vector<TrialRow> SearchTrials(const std::string& dir, bool must,
                                   int64_t search_id) {
  auto ds = Dataset::Open(dir, OpenMode::kReadOnly);
  if (must) {
    EXPECT_TRUE(ds.ok()) << ds.status().ToString();
  }
  if (!ds.ok()) return {};
  TrialQuery q;
  q.where = "search_id = " + std::to_string(search_id);
  auto rows = (*ds)->Query(q);
  if (must) {
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
  }
  return rows.ok() ? *rows : std::vector<TrialRow>{};
}

}  // namespace xw::testutil
