// Tables of query results beyond those of dataset/stats.h, shared by
// `xwires query` and the Python package so both print the same rows.
#ifndef XWIRES_API_QUERY_TABLES_H_
#define XWIRES_API_QUERY_TABLES_H_

#include <vector>

#include "xwires/dataset/query/table.h"
#include "xwires/dataset/store/dataset.h"

namespace xw {

// The rows of Dataset::Near (nearest first): a "distance" column followed by
// TrialsTable's columns.
Table NearTable(const std::vector<NearRow>& near);

// Appends the significance columns verdict, p_value, diff_lcb and noise_sd
// (docs/significance.md: the trial's latest replica statistics row, as the
// query fields of the same names; empty for trials without replicas), once
// the dataset holds any replica statistics (as `stats` adds its
// significant share), to a table of trials whose "id" column holds trial ids (TrialsTable, NearTable,
// TopTable). InvalidArgument when `t` has no "id" column; errors of
// LoadReplicaStats.
Status AddSignificanceColumns(const Dataset& ds, Table* t);

}  // namespace xw

#endif  // XWIRES_API_QUERY_TABLES_H_
