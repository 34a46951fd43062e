// Tabular output shared by the dataset CLI commands: one Table rendered as an
// aligned text table (for people), CSV (RFC 4180) or JSON (array of objects).
// Unknown values are null cells: "-" in tables, empty in CSV, null in JSON.
// Doubles print with 6 significant digits in tables and in shortest
// round-trip form in CSV/JSON.
#ifndef XWIRES_DATASET_QUERY_TABLE_H_
#define XWIRES_DATASET_QUERY_TABLE_H_

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "xwires/core/status.h"

namespace xw {

enum class TableFormat { kTable, kCsv, kJson };

// "table" | "csv" | "json"; InvalidArgument naming the value otherwise.
Result<TableFormat> ParseTableFormat(const std::string& name);

// A cell: null, integer, real (NaN prints as null) or text.
using Cell = std::variant<std::monostate, int64_t, double, std::string>;

struct Table {
  std::vector<std::string> columns;
  std::vector<std::vector<Cell>> rows;  // each row has columns.size() cells
};

std::string FormatTable(const Table& t, TableFormat format);

}  // namespace xw

#endif  // XWIRES_DATASET_QUERY_TABLE_H_
