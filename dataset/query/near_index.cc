#include "near_index.h"

#include <sqlite3.h>

#include <algorithm>
#include <cmath>
#include <queue>

#include "dataset/store/near_schema.h"
#include "dataset/store/sqlite_adapter.h"

namespace xw::near {
namespace {

// Candidates read at the k-th distance or below before the walk gives way to
// the scan: only reached when very many trials are equidistant (duplicated
// hyperparameters), where the scan is cheaper than reading them one by one.
constexpr size_t kCandidateBudget = 50000;

constexpr char kCallback[] = "xw_near";

// What the walk's callback reads. Owned by SQLite's registration of the
// callback on the connection (deleted when the next walk replaces it or
// the connection closes); the walk updates `bound` between steps.
struct WalkState {
  NearSpace space;
  size_t k = 0;
  // Nodes and entries whose lower bound exceeds `bound` are pruned. It is
  // the smaller of the k-th best exact distance read so far and the k-th
  // smallest upper bound of the entries scored so far (each a distinct
  // qualifying trial, so k of them lie at or below it).
  double bound = INFINITY;
  std::priority_queue<double> upper;  // the k smallest upper bounds
  std::vector<double> x;              // scratch: a point
};

// Widens a log10 outwards by far more than its error, so that bounds hold
// even if log10 were not monotone within an ulp.
double Down(double l) { return l - 1e-12 * (1 + std::fabs(l)); }
double Up(double l) { return l + 1e-12 * (1 + std::fabs(l)); }

// A lower bound of the distance of every qualifying trial whose box lies in
// `coord` (lo, hi per near dim): NearSpace::Distance of the box point
// nearest the target; +inf when no trial inside can qualify. `entry`: the
// box of one trial rather than of a tree node.
double LowerBound(const NearSpace& s, const double* coord, bool entry,
                  double* x) {
  for (size_t k = 0; k < s.size(); ++k) {
    const int d = s.dim[k];
    const double lo = coord[2 * d], hi = coord[2 * d + 1];
    if (entry && lo == kUnknownLo && hi == kUnknownHi) return INFINITY;
    const double t = s.target[k];
    if (!s.log_scale[k]) {
      x[k] = std::min(std::max(t, lo), hi);
      continue;
    }
    if (hi <= 0) return INFINITY;  // no positive value inside
    // log10 only of the edge the target lies beyond, if any.
    const double raw = s.raw_target[k];
    x[k] = raw < lo   ? std::max(t, Down(std::log10(lo)))
           : raw > hi ? std::min(t, Up(std::log10(hi)))
                      : t;
  }
  return s.Distance(x);
}

// An upper bound of the distance of the qualifying trial whose box is
// `coord`: Distance of the box point farthest from the target (+inf when a
// log-scale edge is not positive).
double UpperBound(const NearSpace& s, const double* coord, double* x) {
  for (size_t k = 0; k < s.size(); ++k) {
    const int d = s.dim[k];
    const double lo = coord[2 * d], hi = coord[2 * d + 1];
    const double t = s.target[k];
    if (!s.log_scale[k]) {
      x[k] = t - lo > hi - t ? lo : hi;
      continue;
    }
    if (lo <= 0) return INFINITY;
    const double l = Down(std::log10(lo)), h = Up(std::log10(hi));
    x[k] = t - l > h - t ? l : h;
  }
  return s.Distance(x);
}

int Score(sqlite3_rtree_query_info* info) {
  auto* st = static_cast<WalkState*>(info->pContext);
  const bool entry = info->iLevel == 0;
  const double b = LowerBound(st->space, info->aCoord, entry, st->x.data());
  if (b > st->bound) {
    info->eWithin = NOT_WITHIN;
    return SQLITE_OK;
  }
  info->eWithin = PARTLY_WITHIN;
  info->rScore = b;
  if (!entry) return SQLITE_OK;
  const double upper = UpperBound(st->space, info->aCoord, st->x.data());
  if (upper == INFINITY) return SQLITE_OK;
  st->upper.push(upper);
  if (st->upper.size() > st->k) st->upper.pop();
  if (st->upper.size() == st->k)
    st->bound = std::min(st->bound, st->upper.top());
  return SQLITE_OK;
}

bool Served(const NearSpace& s, const TrialQuery& q) {
  const bool filtered =
      q.where.find_first_not_of(" \t\r\n") != std::string::npos ||
      !q.archs.empty() || !q.profiles.empty() || !q.statuses.empty() ||
      !q.ranges.empty();
  if (filtered) return false;
  for (int d : s.dim) {
    if (d < 0) return false;
  }
  return true;
}

// Sets the ranges from trials_near_bounds; false when no trial qualifies.
bool ReadRanges(SQLite::Database& db, NearSpace& s) {
  int mask = 0;
  for (int d : s.dim) mask |= 1 << d;
  std::string cols = "sum(n)";
  for (int d : s.dim) {
    cols += ", min(lo" + std::to_string(d) + "), max(hi" + std::to_string(d) +
            ")";
  }
  SQLite::Statement st(db, "SELECT " + cols +
                               " FROM trials_near_bounds WHERE (mask & ?) = ?");
  st.bind(1, mask);
  st.bind(2, mask);
  st.executeStep();
  if (st.getColumn(0).isNull() || st.getColumn(0).getInt64() == 0)
    return false;
  std::vector<double> lo(s.size()), hi(s.size());
  for (size_t k = 0; k < s.size(); ++k) {
    lo[k] = sql::GetReal(st.getColumn(static_cast<int>(1 + 2 * k)));
    hi[k] = sql::GetReal(st.getColumn(static_cast<int>(2 + 2 * k)));
  }
  s.SetRange(lo, hi);
  return true;
}

}  // namespace

Result<std::optional<std::vector<Scored>>> IndexNear(const Dataset::Impl& impl,
                                                     NearSpace& space,
                                                     const TrialQuery& q,
                                                     size_t k) {
  using Out = std::optional<std::vector<Scored>>;
  if (!Served(space, q)) return Out();
  Out out = std::vector<Scored>();
  XW_RETURN_IF_ERROR(sql::Guarded(impl.DbPath(), [&]() -> Status {
    SQLite::Database& db = *impl.db;
    if (k == 0 || !ReadRanges(db, space)) return Status::OK();
    auto* state = new WalkState{space, k, INFINITY, {}, {}};
    state->x.resize(space.size());
    const int rc = sqlite3_rtree_query_callback(
        db.getHandle(), kCallback, &Score, state,
        [](void* p) { delete static_cast<WalkState*>(p); });
    if (rc != SQLITE_OK) {
      delete state;
      return Status::Internal(impl.DbPath() +
                              ": cannot register the R*Tree query callback");
    }
    std::string cols = "id";
    for (const NearDim& d : kNearDims) {
      cols += std::string(", ") + d.column + "_lo, " + d.column + "_hi";
    }
    SQLite::Statement walk(db, "SELECT " + cols + " FROM trials_near WHERE "
                               "id MATCH " + kCallback + "(0)");
    std::string values = space.columns[0];
    for (size_t i = 1; i < space.size(); ++i) values += ", " + space.columns[i];
    SQLite::Statement row(db,
                          "SELECT " + values + " FROM trials t WHERE t.id = ?");
    std::priority_queue<Scored> best;  // the k best so far, worst on top
    std::vector<double> coord(2 * kNumNearDims), x(space.size());
    double last = -INFINITY;
    size_t read = 0;
    while (walk.executeStep()) {
      for (int c = 0; c < 2 * kNumNearDims; ++c)
        coord[c] = walk.getColumn(c + 1).getDouble();
      const double b = LowerBound(space, coord.data(), true, x.data());
      // Entries arrive in non-decreasing bound order (the walk is
      // best-first and a child's bound is never below its parent's); if
      // that ever failed, stopping early could miss a trial.
      if (b < last) {
        out.reset();
        return Status::OK();
      }
      last = b;
      if (best.size() == k && b > best.top().first) break;
      if (++read > kCandidateBudget + k) {
        out.reset();
        return Status::OK();
      }
      const int64_t id = walk.getColumn(0).getInt64();
      row.reset();
      row.bind(1, id);
      if (!row.executeStep()) continue;
      bool complete = true;
      for (size_t i = 0; i < space.size(); ++i) {
        x[i] = space.Transform(i, sql::GetReal(row.getColumn(static_cast<int>(i))));
        complete = complete && std::isfinite(x[i]);
      }
      if (!complete) continue;
      const Scored s{space.Distance(x.data()), id};
      if (best.size() < k) {
        best.push(s);
      } else if (s < best.top()) {
        best.pop();
        best.push(s);
      }
      if (best.size() == k)
        state->bound = std::min(state->bound, best.top().first);
    }
    out->resize(best.size());
    for (size_t i = best.size(); i-- > 0; best.pop()) (*out)[i] = best.top();
    return Status::OK();
  }));
  return out;
}

}  // namespace xw::near
