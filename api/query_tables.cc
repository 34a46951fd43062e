#include "xwires/api/query_tables.h"

#include <algorithm>
#include <map>

#include "xwires/dataset/query/stats.h"
#include "xwires/dataset/store/replicas.h"

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

Status AddSignificanceColumns(const Dataset& ds, Table* t) {
  const auto id = std::find(t->columns.begin(), t->columns.end(), "id");
  if (id == t->columns.end()) return Status::InvalidArgument("the table has no 'id' column");
  const size_t col = static_cast<size_t>(id - t->columns.begin());
  XW_ASSIGN_OR_RETURN(std::vector<ReplicaStatsRecord> all, LoadReplicaStats(ds));
  if (all.empty()) return Status::OK();  // as `stats`: only once replicated
  // Rows come by trial, then first_replica, then id: the last of a trial is
  // the one the query fields read (replicas.h).
  std::map<int64_t, const ReplicaStatsRecord*> latest;
  for (const ReplicaStatsRecord& s : all) latest[s.trial_id] = &s;
  for (const char* c : {"verdict", "p_value", "diff_lcb", "noise_sd"}) t->columns.push_back(c);
  for (std::vector<Cell>& row : t->rows) {
    const int64_t* trial = std::get_if<int64_t>(&row[col]);
    auto it = trial == nullptr ? latest.end() : latest.find(*trial);
    if (it == latest.end()) {
      row.insert(row.end(), 4, Cell{});
      continue;
    }
    const ReplicaStatsRecord& s = *it->second;
    row.push_back(std::string(stats::VerdictName(s.stats.verdict)));
    row.push_back(s.stats.permutation_p);
    row.push_back(s.stats.lcb);
    row.push_back(s.NoiseSd());
  }
  return Status::OK();
}

}  // namespace xw
