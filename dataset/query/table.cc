#include "xwires/dataset/query/table.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

namespace xw {

namespace {

std::string Shortest(double v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

bool IsNull(const Cell& c) {
  if (std::holds_alternative<std::monostate>(c)) return true;
  const double* d = std::get_if<double>(&c);
  return d && std::isnan(*d);
}

std::string Text(const Cell& c, bool human) {
  if (IsNull(c)) return human ? "-" : "";
  if (const auto* i = std::get_if<int64_t>(&c)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&c)) {
    if (!human) return Shortest(*d);
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", *d);
    return buf;
  }
  return std::get<std::string>(c);
}

std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) {
    if (c == '"') q += '"';
    q += c;
  }
  return q + "\"";
}

std::string AlignedTable(const Table& t) {
  std::vector<size_t> width(t.columns.size());
  std::vector<std::vector<std::string>> cells;
  for (size_t c = 0; c < t.columns.size(); ++c) width[c] = t.columns[c].size();
  for (const auto& row : t.rows) {
    cells.emplace_back();
    for (size_t c = 0; c < t.columns.size(); ++c) {
      cells.back().push_back(c < row.size() ? Text(row[c], true) : "-");
      width[c] = std::max(width[c], cells.back().back().size());
    }
  }
  auto numeric = [&](size_t c) {
    for (const auto& row : t.rows) {
      if (c < row.size() && std::holds_alternative<std::string>(row[c]))
        return false;
    }
    return true;
  };
  std::string out;
  auto line = [&](const std::vector<std::string>& v, bool header) {
    for (size_t c = 0; c < v.size(); ++c) {
      size_t pad = width[c] - v[c].size();
      bool right = !header && numeric(c);
      if (c) out += "  ";
      if (right) out += std::string(pad, ' ');
      out += v[c];
      if (!right && c + 1 < v.size()) out += std::string(pad, ' ');
    }
    out += "\n";
  };
  line(t.columns, true);
  std::vector<std::string> rule;
  for (size_t w : width) rule.push_back(std::string(w, '-'));
  line(rule, true);
  for (const auto& r : cells) line(r, false);
  return out;
}

}  // namespace

Result<TableFormat> ParseTableFormat(const std::string& name) {
  if (name == "table") return TableFormat::kTable;
  if (name == "csv") return TableFormat::kCsv;
  if (name == "json") return TableFormat::kJson;
  return Status::InvalidArgument("unknown format '" + name +
                                 "' (table, csv, json)");
}

std::string FormatTable(const Table& t, TableFormat format) {
  if (format == TableFormat::kTable) return AlignedTable(t);
  if (format == TableFormat::kCsv) {
    std::string out;
    for (size_t c = 0; c < t.columns.size(); ++c) {
      if (c) out += ',';
      out += CsvField(t.columns[c]);
    }
    out += "\n";
    for (const auto& row : t.rows) {
      for (size_t c = 0; c < row.size(); ++c) {
        if (c) out += ',';
        out += CsvField(Text(row[c], false));
      }
      out += "\n";
    }
    return out;
  }
  nlohmann::ordered_json arr = nlohmann::ordered_json::array();
  for (const auto& row : t.rows) {
    nlohmann::ordered_json o = nlohmann::ordered_json::object();
    for (size_t c = 0; c < t.columns.size() && c < row.size(); ++c) {
      const Cell& v = row[c];
      if (IsNull(v))
        o[t.columns[c]] = nullptr;
      else if (const auto* i = std::get_if<int64_t>(&v))
        o[t.columns[c]] = *i;
      else if (const auto* d = std::get_if<double>(&v))
        o[t.columns[c]] = *d;
      else
        o[t.columns[c]] = std::get<std::string>(v);
    }
    arr.push_back(std::move(o));
  }
  return arr.dump(2) + "\n";
}

}  // namespace xw
