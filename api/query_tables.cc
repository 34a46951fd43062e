#include "xwires/api/query_tables.h"

#include "xwires/dataset/query/stats.h"

namespace xw {

Table NearTable(const std::vector<NearRow>& near) {
  std::vector<TrialRow> rows;
  rows.reserve(near.size());
  for (const NearRow& n : near) rows.push_back(n.trial);
  Table t = TrialsTable(rows);
  t.columns.insert(t.columns.begin(), "distance");
  for (size_t i = 0; i < near.size(); ++i) t.rows[i].insert(t.rows[i].begin(), near[i].distance);
  return t;
}

}  // namespace xw
