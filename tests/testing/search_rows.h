// The trial rows a search stored, as the search tests read them back.
#ifndef XWIRES_TESTS_TESTING_SEARCH_ROWS_H_
#define XWIRES_TESTS_TESTING_SEARCH_ROWS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "xwires/dataset/store/dataset.h"

namespace xw::testutil {

// The rows of search `search_id` in the dataset at `dir`, opened read-only.
// With `must`, a dataset or query that cannot be read is a test failure;
// without it (a search still starting: no dataset yet) it gives no rows.
std::vector<TrialRow> SearchTrials(const std::string& dir, bool must = true,
                                   int64_t search_id = 1);

}  // namespace xw::testutil

#endif  // XWIRES_TESTS_TESTING_SEARCH_ROWS_H_
