#include "xwires/dataset/query/stats.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>

#include "dataset/store/dataset_impl.h"
#include "dataset/store/sqlite_adapter.h"
#include "filter_parser.h"
#include "query_engine.h"
#include "xwires/dataset/query/query.h"
#include "xwires/dataset/store/degenerate.h"

namespace xw {

namespace {

// The group of a trial: "none" (one group) or any field of the query
// language (arch, data, width, search_id, profiles, simd_torch, ...).
Result<filter::Field> GroupExpr(const std::string& by) {
  if (by == "none") return filter::Field{"none", "'all'", {}, false, -1};
  auto f = filter::ResolveField(by);
  if (!f.ok()) {
    return Status::InvalidArgument("stats: unknown grouping '" + by +
                                   "': none or a field: " + f.status().message());
  }
  return f;
}

// A NULL group (a setting the trial does not record) is shown as "(none)".
std::string GroupName(const SQLite::Column& c) {
  return c.isNull() ? "(none)" : c.getString();
}

std::vector<sql::Param> Concat(std::vector<sql::Param> a, const std::vector<sql::Param>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

void Summarise(std::vector<double>& d, double threshold, GroupStats& g) {
  g.with_divergence = static_cast<int64_t>(d.size());
  if (d.empty()) return;
  std::sort(d.begin(), d.end());
  g.div_min = d.front();
  g.div_max = d.back();
  size_t n = d.size();
  g.div_median = n % 2 ? d[n / 2] : 0.5 * (d[n / 2 - 1] + d[n / 2]);
  double sum = 0;
  for (double v : d) sum += v;  // sorted order: deterministic
  g.div_mean = sum / n;
  g.at_least_threshold =
      d.end() - std::lower_bound(d.begin(), d.end(), threshold);
  g.share_at_least = static_cast<double>(g.at_least_threshold) / n;
}

std::string ThresholdName(double t) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", t);
  return buf;
}

}  // namespace

Result<std::vector<GroupStats>> ComputeStats(const Dataset& ds,
                                             const StatsOptions& opt) {
  XW_ASSIGN_OR_RETURN(filter::Field by, GroupExpr(opt.by));
  const std::string& group = by.sql;
  XW_ASSIGN_OR_RETURN(CompiledQuery c, CompileQuery(opt.filter));
  std::map<std::string, std::vector<double>> divs;
  std::map<std::string, int64_t> counts, replicated, significant;
  std::map<std::string, std::map<std::string, ProfileAccuracy>> acc;
  auto& impl = ds.impl();
  XW_RETURN_IF_ERROR(sql::Guarded(impl.DbPath(), [&]() -> Status {
    SQLite::Statement st(*impl.db,
                         "SELECT " + group +
                             ", t.divergence, (SELECT s.verdict FROM replica_stats s "
                             "WHERE s.trial_id = t.id "
                             "ORDER BY s.first_replica DESC, s.id DESC LIMIT 1) " +
                             c.From());
    sql::BindAll(st, Concat(by.params, c.params));
    while (st.executeStep()) {
      std::string g = GroupName(st.getColumn(0));
      ++counts[g];
      double d = sql::GetReal(st.getColumn(1));
      if (!std::isnan(d)) divs[g].push_back(d);
      if (!st.getColumn(2).isNull()) {
        ++replicated[g];
        significant[g] += sql::GetText(st.getColumn(2)) == "significant";
      }
    }
    SQLite::Statement ms(
        *impl.db,
        "SELECT " + group +
            ", m.profile, count(m.test_acc), "
            "min(m.test_acc), max(m.test_acc), avg(m.test_acc) FROM " +
            c.tables + " JOIN models m ON m.trial_id = t.id WHERE " + c.where +
            " GROUP BY 1, 2");
    sql::BindAll(ms, Concat(by.params, c.params));
    while (ms.executeStep()) {
      ProfileAccuracy p;
      p.profile = sql::GetText(ms.getColumn(1));
      p.n = ms.getColumn(2).getInt64();
      p.min_acc = sql::GetReal(ms.getColumn(3));
      p.max_acc = sql::GetReal(ms.getColumn(4));
      p.mean_acc = sql::GetReal(ms.getColumn(5));
      acc[GroupName(ms.getColumn(0))][p.profile] = p;
    }
    return Status::OK();
  }));
  std::vector<GroupStats> out;
  std::vector<double> all;
  std::map<std::string, ProfileAccuracy> all_acc;
  for (auto& [g, n] : counts) {
    GroupStats s;
    s.group = g;
    s.trials = n;
    s.replicated = replicated[g];
    s.significant = significant[g];
    all.insert(all.end(), divs[g].begin(), divs[g].end());
    Summarise(divs[g], opt.threshold, s);
    for (auto& [name, p] : acc[g]) {
      s.profiles.push_back(p);
      ProfileAccuracy& a = all_acc[name];
      double total =
          (std::isnan(a.mean_acc) ? 0 : a.mean_acc * a.n) + p.mean_acc * p.n;
      a.profile = name;
      a.min_acc =
          std::isnan(a.min_acc) ? p.min_acc : std::min(a.min_acc, p.min_acc);
      a.max_acc =
          std::isnan(a.max_acc) ? p.max_acc : std::max(a.max_acc, p.max_acc);
      a.n += p.n;
      a.mean_acc = a.n ? total / a.n : kUnknown;
    }
    out.push_back(std::move(s));
  }
  if (by.numeric) {  // numeric groups in numeric order, "(none)" last
    auto key = [](const GroupStats& g) {
      return g.group == "(none)" ? INFINITY : std::strtod(g.group.c_str(), nullptr);
    };
    std::stable_sort(out.begin(), out.end(),
                     [&](const GroupStats& a, const GroupStats& b) { return key(a) < key(b); });
  }
  if (opt.add_overall && opt.by != "none" && !counts.empty()) {
    GroupStats s;
    s.group = "all";
    for (auto& [g, n] : counts) s.trials += n;
    for (auto& [g, n] : replicated) s.replicated += n;
    for (auto& [g, n] : significant) s.significant += n;
    Summarise(all, opt.threshold, s);
    for (auto& [name, p] : all_acc) s.profiles.push_back(p);
    out.push_back(std::move(s));
  }
  for (GroupStats& s : out) {
    if (s.replicated > 0) s.significant_share = double(s.significant) / s.replicated;
  }
  return out;
}

Table StatsTable(const std::vector<GroupStats>& stats,
                 const StatsOptions& opt) {
  std::set<std::string> profiles;
  for (const auto& g : stats) {
    for (const auto& p : g.profiles) profiles.insert(p.profile);
  }
  Table t;
  t.columns = {opt.by == "none" ? "group" : opt.by,
               "trials",
               "div_min",
               "div_max",
               "div_median",
               "div_mean",
               "share_ge_" + ThresholdName(opt.threshold)};
  for (const auto& p : profiles) {
    t.columns.push_back("acc_min_" + p);
    t.columns.push_back("acc_max_" + p);
  }
  const bool replicas = std::any_of(stats.begin(), stats.end(),
                                    [](const GroupStats& g) { return g.replicated > 0; });
  if (replicas) {
    t.columns.push_back("replicated");
    t.columns.push_back("significant_share");
  }
  for (const auto& g : stats) {
    std::vector<Cell> row = {g.group,         g.trials,     g.div_min,
                             g.div_max,       g.div_median, g.div_mean,
                             g.share_at_least};
    for (const auto& name : profiles) {
      auto it = std::find_if(
          g.profiles.begin(), g.profiles.end(),
          [&](const ProfileAccuracy& p) { return p.profile == name; });
      row.push_back(it == g.profiles.end() ? Cell{} : Cell{it->min_acc});
      row.push_back(it == g.profiles.end() ? Cell{} : Cell{it->max_acc});
    }
    if (replicas) {
      row.push_back(g.replicated);
      row.push_back(g.significant_share);
    }
    t.rows.push_back(std::move(row));
  }
  return t;
}

Result<std::vector<std::pair<std::string, std::vector<TrialRow>>>> TopTrials(
    const Dataset& ds, const TopOptions& opt) {
  if (opt.k < 1) return Status::InvalidArgument("top: k must be >= 1");
  // Parse the user's filter alone first: error positions then refer to it.
  XW_RETURN_IF_ERROR(filter::Parse(opt.filter.where).status());
  std::vector<std::string> archs = opt.filter.archs;
  if (archs.empty()) {
    auto& impl = ds.impl();
    XW_RETURN_IF_ERROR(sql::Guarded(impl.DbPath(), [&]() -> Status {
      SQLite::Statement st(*impl.db,
                           "SELECT DISTINCT arch FROM trials ORDER BY arch");
      while (st.executeStep()) archs.push_back(st.getColumn(0).getString());
      return Status::OK();
    }));
  }
  std::sort(archs.begin(), archs.end());
  std::vector<std::pair<std::string, std::vector<TrialRow>>> out;
  for (const auto& a : archs) {
    TrialQuery q = opt.filter;
    q.archs = {a};
    // Unknown divergences never rank (neither top nor bottom).
    q.where = q.where.empty() ? "diff is not null"
                              : "(" + q.where + ") and diff is not null";
    q.order_by = {opt.bottom ? "diff" : "-diff"};
    q.limit = opt.k;
    XW_ASSIGN_OR_RETURN(auto rows, ds.Query(q));
    if (!rows.empty()) out.emplace_back(a, std::move(rows));
  }
  return out;
}

namespace {
std::vector<std::string> ProfilesOf(const std::vector<const TrialRow*>& rows) {
  std::set<std::string> s;
  for (const TrialRow* r : rows) {
    for (const auto& m : r->models) s.insert(m.profile);
  }
  return {s.begin(), s.end()};
}

Cell Opt(const std::optional<int64_t>& v) { return v ? Cell{*v} : Cell{}; }

// The trial's degenerate-model flags as the columns collapsed, at_chance.
void AddFlags(const TrialRow& r, std::vector<Cell>& row) {
  const ModelFlags f = TrialFlags(DegenerateFlags(r));
  row.push_back(f.collapsed < 0 ? Cell{} : Cell{int64_t{f.collapsed}});
  row.push_back(f.at_chance < 0 ? Cell{} : Cell{int64_t{f.at_chance}});
}
}  // namespace

Table TopTable(
    const std::vector<std::pair<std::string, std::vector<TrialRow>>>& top) {
  std::vector<const TrialRow*> all;
  for (const auto& [a, rows] : top) {
    for (const auto& r : rows) all.push_back(&r);
  }
  std::vector<std::string> profiles = ProfilesOf(all);
  Table t;
  t.columns = {"arch", "rank",     "id",         "name",
               "lr",   "adam_eps", "batch_size", "epochs"};
  for (const auto& p : profiles) t.columns.push_back("acc_" + p);
  t.columns.insert(t.columns.end(), {"diff", "collapsed", "at_chance"});
  for (const auto& [arch, rows] : top) {
    for (size_t i = 0; i < rows.size(); ++i) {
      const TrialRow& r = rows[i];
      std::vector<Cell> row = {
          arch,       int64_t(i + 1),    r.id,         r.external_id, r.lr,
          r.adam_eps, Opt(r.batch_size), Opt(r.epochs)};
      for (const auto& p : profiles) {
        const ModelRow* m = r.Model(p);
        row.push_back(m ? Cell{m->test_acc} : Cell{});
      }
      row.push_back(r.divergence);
      AddFlags(r, row);
      t.rows.push_back(std::move(row));
    }
  }
  return t;
}

Table TrialsTable(const std::vector<TrialRow>& rows) {
  std::vector<const TrialRow*> ptrs;
  for (const auto& r : rows) ptrs.push_back(&r);
  std::vector<std::string> profiles = ProfilesOf(ptrs);
  Table t;
  t.columns = {"id",           "arch",       "name",   "status",
               "lr",           "adam_eps",   "beta1",  "beta2",
               "weight_decay", "batch_size", "epochs", "seed"};
  for (const auto& p : profiles) t.columns.push_back("acc_" + p);
  t.columns.insert(t.columns.end(), {"diff", "collapsed", "at_chance"});
  for (const TrialRow& r : rows) {
    std::vector<Cell> row = {r.id,           r.arch,
                             r.external_id,  r.status,
                             r.lr,           r.adam_eps,
                             r.beta1,        r.beta2,
                             r.weight_decay, Opt(r.batch_size),
                             Opt(r.epochs),  Opt(r.seed)};
    for (const auto& p : profiles) {
      const ModelRow* m = r.Model(p);
      row.push_back(m ? Cell{m->test_acc} : Cell{});
    }
    row.push_back(r.divergence);
    AddFlags(r, row);
    t.rows.push_back(std::move(row));
  }
  return t;
}

}  // namespace xw
