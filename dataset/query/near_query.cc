// Dataset::Near: the metric (near_space.h), the full-scan plan, and the
// choice between it and the index (near_index.h). Both plans return the
// same trials in the same order; the index is only faster.
#include <algorithm>
#include <cmath>
#include <limits>

#include "dataset/store/dataset_impl.h"
#include "dataset/store/near_schema.h"
#include "dataset/store/sqlite_adapter.h"
#include "filter_parser.h"
#include "near_index.h"
#include "near_space.h"
#include "query_engine.h"
#include "xwires/dataset/query/query.h"
#include "xwires/dataset/store/dataset.h"

namespace xw {
namespace near {

double NearSpace::Transform(size_t k, double v) const {
  if (!log_scale[k]) return v;
  return v > 0 ? std::log10(v) : std::numeric_limits<double>::quiet_NaN();
}

void NearSpace::SetRange(const std::vector<double>& raw_lo,
                         const std::vector<double>& raw_hi) {
  span.assign(size(), 1.0);
  for (size_t k = 0; k < size(); ++k) {
    const double lo = Transform(k, raw_lo[k]), hi = Transform(k, raw_hi[k]);
    span[k] = hi > lo ? hi - lo : 1.0;
  }
}

double NearSpace::Distance(const double* x) const {
  double d2 = 0;
  for (size_t k = 0; k < size(); ++k) {
    const double d = (x[k] - target[k]) / span[k];
    d2 += d * d;
  }
  return std::sqrt(d2);
}

Result<NearSpace> ResolveTarget(const NearTarget& target) {
  if (target.values.empty())
    return Status::InvalidArgument("near: no hyperparameters given");
  NearSpace s;
  for (const auto& [name, value] : target.values) {
    XW_ASSIGN_OR_RETURN(filter::Field f, filter::ResolveField(name));
    if (!f.params.empty() || !f.numeric) {
      return Status::InvalidArgument("near: '" + f.name +
                                     "' is not a hyperparameter");
    }
    int dim = -1;
    for (int d = 0; d < kNumNearDims; ++d) {
      if (f.sql == std::string("t.") + kNearDims[d].column) dim = d;
    }
    s.columns.push_back(f.sql);
    s.log_scale.push_back(f.sql == "t.lr" || f.sql == "t.adam_eps");
    s.dim.push_back(dim);
    s.raw_target.push_back(value);
    s.target.push_back(s.Transform(s.size() - 1, value));
    if (!std::isfinite(s.target.back())) {
      return Status::InvalidArgument(
          "near: " + name +
          " must be a finite (and, on log scale, positive) number");
    }
  }
  return s;
}

namespace {

// Every trial matching `q` whose target fields all qualify, scored.
Result<std::vector<Scored>> ScanNear(const Dataset::Impl& impl,
                                     NearSpace& space, const TrialQuery& q) {
  TrialQuery base = q;
  base.order_by.clear();
  base.limit = -1;
  base.offset = 0;
  XW_ASSIGN_OR_RETURN(CompiledQuery c, CompileQuery(base));
  const size_t n = space.size();
  std::string cols = "t.id";
  for (const std::string& col : space.columns) cols += ", " + col;
  std::vector<int64_t> ids;
  std::vector<double> xs;  // row-major, n normalised values per trial
  std::vector<double> lo(n, INFINITY), hi(n, -INFINITY), raw(n);
  XW_RETURN_IF_ERROR(sql::Guarded(impl.DbPath(), [&]() -> Status {
    SQLite::Statement st(*impl.db, "SELECT " + cols + " " + c.From());
    sql::BindAll(st, c.params);
    while (st.executeStep()) {
      bool complete = true;
      const size_t at = xs.size();
      for (size_t k = 0; k < n; ++k) {
        raw[k] = sql::GetReal(st.getColumn(static_cast<int>(k + 1)));
        xs.push_back(space.Transform(k, raw[k]));
        complete = complete && std::isfinite(xs.back());
      }
      if (!complete) {
        xs.resize(at);
        continue;
      }
      ids.push_back(st.getColumn(0).getInt64());
      for (size_t k = 0; k < n; ++k) {
        lo[k] = std::min(lo[k], raw[k]);
        hi[k] = std::max(hi[k], raw[k]);
      }
    }
    return Status::OK();
  }));
  space.SetRange(lo, hi);
  std::vector<Scored> out(ids.size());
  for (size_t r = 0; r < ids.size(); ++r)
    out[r] = {space.Distance(&xs[r * n]), ids[r]};
  return out;
}

}  // namespace
}  // namespace near

Result<std::vector<NearRow>> Dataset::Near(const NearTarget& target,
                                           const TrialQuery& q) const {
  XW_ASSIGN_OR_RETURN(near::NearSpace space, near::ResolveTarget(target));
  const size_t k = q.limit >= 0 ? static_cast<size_t>(q.limit) : 10;
  std::vector<near::Scored> best;
  bool done = false;
  if (target.method != NearMethod::kScan) {
    XW_ASSIGN_OR_RETURN(std::optional<std::vector<near::Scored>> indexed,
                        near::IndexNear(*impl_, space, q, k));
    if (indexed) {
      best = std::move(*indexed);
      done = true;
    } else if (target.method == NearMethod::kIndex) {
      return Status::FailedPrecondition(
          "near: the index cannot serve this query (filters, fields other "
          "than lr, adam_eps, batch_size, epochs, weight_decay, or too many "
          "equidistant trials)");
    }
  }
  if (!done) {
    XW_ASSIGN_OR_RETURN(best, near::ScanNear(*impl_, space, q));
    const size_t m = std::min(best.size(), k);
    std::partial_sort(best.begin(), best.begin() + m, best.end());
    best.resize(m);
  }
  std::vector<NearRow> out;
  for (const near::Scored& s : best) {
    XW_ASSIGN_OR_RETURN(TrialRow t, GetTrial(s.second));
    out.push_back({s.first, std::move(t)});
  }
  return out;
}

}  // namespace xw
