// Dataset::Query / Count and the query builder: a TrialQuery becomes one
// parameterized SELECT over `trials t` (Near: near_query.cc).
//
// Index choice: SQLite (built without STAT4) cannot estimate range
// selectivities, and would drive a query such as "lr in [a, b] and
// batch_size in [c, d] and diff > 0.3" by a two-sided hyperparameter range.
// Divergent trials are rare, so when the top-level conjunction puts a lower
// bound on the divergence (and no architecture is named, which trials_arch
// serves better) the scan is pinned to trials_divergence, whose entries also
// carry lr, batch_size, adam_eps and epochs: the hyperparameter tests run
// inside the index and only matching rows are read.
#include "query_engine.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "dataset/store/dataset_impl.h"
#include "dataset/store/degenerate_sql.h"
#include "dataset/store/sqlite_adapter.h"
#include "dataset/store/trial_rules.h"
#include "filter_parser.h"
#include "xwires/dataset/query/query.h"
#include "xwires/dataset/store/dataset.h"

namespace xw {

namespace {

std::string InList(size_t n) {
  std::string s = "(";
  for (size_t i = 0; i < n; ++i) s += i ? ", ?" : "?";
  return s + ")";
}

}  // namespace

Result<CompiledQuery> CompileQuery(const TrialQuery& q) {
  XW_ASSIGN_OR_RETURN(filter::Condition cond, filter::Parse(q.where));
  for (const auto& [field, range] : q.ranges) {
    XW_ASSIGN_OR_RETURN(filter::Condition r,
                        filter::Range(field, range.first, range.second));
    cond.And(r);
  }
  CompiledQuery c;
  const bool divergence_floor = std::isfinite(cond.lo[filter::kDivergence]);
  c.tables = divergence_floor && q.archs.empty()
                 ? "trials t INDEXED BY trials_divergence"
                 : "trials t";
  c.where = cond.sql;
  c.params.insert(c.params.end(), cond.params.begin(), cond.params.end());
  if (!q.archs.empty()) {
    c.where += " AND t.arch IN " + InList(q.archs.size());
    for (const auto& a : q.archs) c.params.push_back(a);
  }
  if (q.exclude_degenerate) {
    c.where += " AND coalesce(" + TrialFlagSql(DegenerateFlag::kCollapsed) +
               ", 0) = 0 AND coalesce(" +
               TrialFlagSql(DegenerateFlag::kAtChance) + ", 0) = 0";
  }
  for (const std::string& s : q.statuses) XW_RETURN_IF_ERROR(CheckTrialStatus(s));
  if (!q.statuses.empty()) {
    c.where += " AND t.status IN " + InList(q.statuses.size());
    for (const auto& s : q.statuses) c.params.push_back(s);
  }
  for (const auto& p : q.profiles) {
    c.where +=
        " AND EXISTS (SELECT 1 FROM models m WHERE m.trial_id = t.id AND "
        "m.profile = ?)";
    c.params.push_back(p);
  }
  std::vector<sql::Param> order_params;
  for (const std::string& spec : q.order_by) {
    bool desc = !spec.empty() && spec[0] == '-';
    std::string name = (!spec.empty() && (spec[0] == '-' || spec[0] == '+'))
                           ? spec.substr(1)
                           : spec;
    Result<filter::Field> f = filter::ResolveField(name);
    if (!f.ok())
      return Status::InvalidArgument("sort: " + f.status().message());
    c.order += (c.order.empty() ? " ORDER BY " : ", ") + f->sql +
               (desc ? " DESC" : " ASC") + " NULLS LAST";
    order_params.insert(order_params.end(), f->params.begin(), f->params.end());
  }
  c.order += c.order.empty() ? " ORDER BY t.id" : ", t.id";
  c.order_params = std::move(order_params);
  return c;
}

Result<std::vector<TrialRow>> Dataset::Query(const TrialQuery& q) const {
  XW_ASSIGN_OR_RETURN(CompiledQuery c, CompileQuery(q));
  std::string text =
      std::string("SELECT ") + kTrialColumns + " " + c.From() + c.order;
  c.params.insert(c.params.end(), c.order_params.begin(), c.order_params.end());
  if (q.limit >= 0 || q.offset > 0) {
    text += " LIMIT ? OFFSET ?";
    c.params.push_back(q.limit >= 0 ? q.limit : int64_t{-1});
    c.params.push_back(q.offset);
  }
  return SelectTrials(*impl_, text, c.params);
}

Result<int64_t> Dataset::Count(const TrialQuery& q) const {
  XW_ASSIGN_OR_RETURN(CompiledQuery c, CompileQuery(q));
  int64_t n = 0;
  XW_RETURN_IF_ERROR(sql::Guarded(impl_->DbPath(), [&]() -> Status {
    SQLite::Statement st(*impl_->db, "SELECT count(*) " + c.From());
    sql::BindAll(st, c.params);
    st.executeStep();
    n = st.getColumn(0).getInt64();
    return Status::OK();
  }));
  return n;
}

QueryBuilder& QueryBuilder::Where(std::string expr) {
  q_.where = q_.where.empty() ? std::move(expr)
                              : "(" + q_.where + ") and (" + expr + ")";
  return *this;
}
QueryBuilder& QueryBuilder::Arch(std::string arch) {
  q_.archs.push_back(std::move(arch));
  return *this;
}
QueryBuilder& QueryBuilder::Profile(std::string profile) {
  q_.profiles.push_back(std::move(profile));
  return *this;
}
QueryBuilder& QueryBuilder::Status(std::string status) {
  q_.statuses.push_back(std::move(status));
  return *this;
}
QueryBuilder& QueryBuilder::Range(const std::string& field, double lo,
                                  double hi) {
  q_.ranges[field] = {lo, hi};
  return *this;
}
QueryBuilder& QueryBuilder::MinDivergence(double lo) {
  auto it = q_.ranges.find("diff");
  q_.ranges["diff"] = {lo,
                       it == q_.ranges.end() ? INFINITY : it->second.second};
  return *this;
}
QueryBuilder& QueryBuilder::MaxDivergence(double hi) {
  auto it = q_.ranges.find("diff");
  q_.ranges["diff"] = {it == q_.ranges.end() ? -INFINITY : it->second.first,
                       hi};
  return *this;
}
QueryBuilder& QueryBuilder::OrderBy(std::string field) {
  q_.order_by.push_back(std::move(field));
  return *this;
}
QueryBuilder& QueryBuilder::Limit(int64_t n) {
  q_.limit = n;
  return *this;
}
QueryBuilder& QueryBuilder::Offset(int64_t n) {
  q_.offset = n;
  return *this;
}
QueryBuilder& QueryBuilder::ExcludeDegenerate(bool on) {
  q_.exclude_degenerate = on;
  return *this;
}

bool IsKnownField(const std::string& field) {
  std::string name = (!field.empty() && (field[0] == '-' || field[0] == '+'))
                         ? field.substr(1)
                         : field;
  return filter::ResolveField(name).ok();
}

Result<NearTarget> ParseNearTarget(const std::string& text) {
  NearTarget t;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    std::string item = text.substr(start, end - start);
    size_t eq = item.find('=');
    auto trim = [](std::string s) {
      size_t a = s.find_first_not_of(" \t"), b = s.find_last_not_of(" \t");
      return a == std::string::npos ? std::string() : s.substr(a, b - a + 1);
    };
    if (eq == std::string::npos) {
      return Status::InvalidArgument("near: expected name=value, got '" + item +
                                     "'");
    }
    std::string name = trim(item.substr(0, eq)),
                value = trim(item.substr(eq + 1));
    XW_ASSIGN_OR_RETURN(filter::Field f, filter::ResolveField(name));
    if (!f.numeric || !f.params.empty() || f.index_dim == filter::kDivergence ||
        f.name == "id" || f.name == "search_id" || f.name == "collapsed" ||
        f.name == "at_chance") {
      return Status::InvalidArgument("near: '" + name +
                                     "' is not a hyperparameter");
    }
    char* stop = nullptr;
    double v = std::strtod(value.c_str(), &stop);
    if (value.empty() || *stop != '\0') {
      return Status::InvalidArgument("near: value of '" + name +
                                     "' is not a number: '" + value + "'");
    }
    t.values.emplace_back(f.name, v);
    start = end + 1;
  }
  return t;
}

}  // namespace xw
