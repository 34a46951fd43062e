// Stored replica statistics (replicas.h): the JSON form of the library's
// PairStatistics, the statistics of stored replicas, and their rows.
#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "dataset_impl.h"
#include "replica_rows.h"
#include "sqlite_adapter.h"
#include "xwires/core/clock.h"
#include "xwires/dataset/store/replicas.h"

namespace xw {
namespace {

using Json = nlohmann::ordered_json;

Json Num(double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); }

Json SummaryJson(const stats::ProfileSummary& s) {
  return {{"k", s.k},          {"mean", Num(s.mean)},       {"sd", Num(s.sd)},
          {"collapses", s.collapses}, {"floor", Num(s.floor)}, {"sigma2_s", Num(s.sigma2_s)}};
}

// Reads j[key] as a double (null: NaN); false when missing or mistyped.
bool GetNum(const Json& j, const char* key, double* out) {
  auto it = j.find(key);
  if (it == j.end()) return false;
  if (it->is_null()) {
    *out = std::nan("");
    return true;
  }
  if (!it->is_number()) return false;
  *out = it->get<double>();
  return true;
}

template <typename T>
bool GetInt(const Json& j, const char* key, T* out) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer()) return false;
  *out = it->get<T>();
  return true;
}

bool GetBool(const Json& j, const char* key, bool* out) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_boolean()) return false;
  *out = it->get<bool>();
  return true;
}

Status Missing(const std::string& key) {
  return Status::InvalidArgument("statistics JSON: '" + key + "' is missing or mistyped");
}

Result<stats::ProfileSummary> ParseSummary(const Json& j, const std::string& side) {
  stats::ProfileSummary s;
  if (!j.is_object()) return Missing(side);
  if (!GetInt(j, "k", &s.k)) return Missing(side + ".k");
  if (!GetNum(j, "mean", &s.mean)) return Missing(side + ".mean");
  if (!GetNum(j, "sd", &s.sd)) return Missing(side + ".sd");
  if (!GetInt(j, "collapses", &s.collapses)) return Missing(side + ".collapses");
  if (!GetNum(j, "floor", &s.floor)) return Missing(side + ".floor");
  if (!GetNum(j, "sigma2_s", &s.sigma2_s)) return Missing(side + ".sigma2_s");
  return s;
}

}  // namespace

double ReplicaStatsRecord::NoiseSd() const {
  return std::sqrt((stats.a.sd * stats.a.sd + stats.b.sd * stats.b.sd) / 2);
}

std::string PairStatisticsJson(const stats::PairStatistics& s) {
  Json j = {{"a", SummaryJson(s.a)},
            {"b", SummaryJson(s.b)},
            {"mean_diff", Num(s.mean_diff)},
            {"permutation_p", Num(s.permutation_p)},
            {"permutation_exact", s.permutation_exact},
            {"permutation_splits", s.permutation_splits},
            {"welch_t", Num(s.welch_t)},
            {"welch_df", Num(s.welch_df)},
            {"welch_p", Num(s.welch_p)},
            {"ci_low", Num(s.ci_low)},
            {"ci_high", Num(s.ci_high)},
            {"hedges_g", Num(s.hedges_g)},
            {"prob_a_greater", Num(s.prob_a_greater)},
            {"fisher_p", Num(s.fisher_p)},
            {"survivors_tested", s.survivors_tested},
            {"survivors_diff", Num(s.survivors_diff)},
            {"survivors_p", Num(s.survivors_p)},
            {"survivors_prob_a_greater", Num(s.survivors_prob_a_greater)},
            {"has_predictions", s.has_predictions},
            {"churn_aa", Num(s.churn_aa)},
            {"churn_bb", Num(s.churn_bb)},
            {"churn_ab", Num(s.churn_ab)},
            {"excess_churn", Num(s.excess_churn)},
            {"excess_churn_p", Num(s.excess_churn_p)},
            {"floor", Num(s.floor)},
            {"floor_from_predictions", s.floor_from_predictions},
            {"se2", Num(s.se2)},
            {"lcb", Num(s.lcb)},
            {"verdict", stats::VerdictName(s.verdict)}};
  // Only when the spread guard set it, so statistics stored before the guard
  // existed (and every seed-family pair) keep the same key set.
  if (!s.verdict_reason.empty()) j["verdict_reason"] = s.verdict_reason;
  return j.dump();
}

Result<stats::PairStatistics> ParsePairStatisticsJson(const std::string& text) {
  const Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return Status::InvalidArgument("statistics JSON is not an object");
  stats::PairStatistics s;
  XW_ASSIGN_OR_RETURN(s.a, ParseSummary(j.value("a", Json()), "a"));
  XW_ASSIGN_OR_RETURN(s.b, ParseSummary(j.value("b", Json()), "b"));
  const std::pair<const char*, double*> nums[] = {
      {"mean_diff", &s.mean_diff},       {"permutation_p", &s.permutation_p},
      {"welch_t", &s.welch_t},           {"welch_df", &s.welch_df},
      {"welch_p", &s.welch_p},           {"ci_low", &s.ci_low},
      {"ci_high", &s.ci_high},           {"hedges_g", &s.hedges_g},
      {"prob_a_greater", &s.prob_a_greater}, {"fisher_p", &s.fisher_p},
      {"survivors_diff", &s.survivors_diff}, {"survivors_p", &s.survivors_p},
      {"survivors_prob_a_greater", &s.survivors_prob_a_greater},
      {"churn_aa", &s.churn_aa},         {"churn_bb", &s.churn_bb},
      {"churn_ab", &s.churn_ab},         {"excess_churn", &s.excess_churn},
      {"excess_churn_p", &s.excess_churn_p}, {"floor", &s.floor},
      {"se2", &s.se2},                   {"lcb", &s.lcb}};
  for (const auto& [key, dst] : nums) {
    if (!GetNum(j, key, dst)) return Missing(key);
  }
  const std::pair<const char*, bool*> flags[] = {
      {"permutation_exact", &s.permutation_exact},
      {"survivors_tested", &s.survivors_tested},
      {"has_predictions", &s.has_predictions},
      {"floor_from_predictions", &s.floor_from_predictions}};
  for (const auto& [key, dst] : flags) {
    if (!GetBool(j, key, dst)) return Missing(key);
  }
  if (!GetInt(j, "permutation_splits", &s.permutation_splits)) return Missing("permutation_splits");
  auto v = j.find("verdict");
  if (v == j.end() || !v->is_string()) return Missing("verdict");
  XW_ASSIGN_OR_RETURN(s.verdict, stats::ParseVerdict(v->get<std::string>()));
  auto reason = j.find("verdict_reason");
  if (reason != j.end()) {
    if (!reason->is_string()) return Missing("verdict_reason");
    s.verdict_reason = reason->get<std::string>();
  }
  return s;
}

Result<stats::PairStatistics> ReplicaPairStatistics(const std::vector<ReplicaRecord>& a,
                                                    const std::vector<ReplicaRecord>& b,
                                                    const std::vector<uint8_t>& labels,
                                                    int num_classes) {
  struct Side {
    std::vector<double> acc;
    std::vector<uint8_t> finite, pred;
  };
  auto gather = [&](const std::vector<ReplicaRecord>& rs, Side* s) -> Status {
    for (const ReplicaRecord& r : rs) {
      if (r.predictions.size() != labels.size()) {
        return Status::InvalidArgument(
            "replica " + std::to_string(r.replica) + " of profile '" + r.profile + "' has " +
            std::to_string(r.predictions.size()) + " predictions for " +
            std::to_string(labels.size()) + " test labels");
      }
      s->acc.push_back(r.test_acc);
      s->finite.push_back(r.status == "ok" ? 1 : 0);
      s->pred.insert(s->pred.end(), r.predictions.begin(), r.predictions.end());
    }
    return Status::OK();
  };
  Side sa, sb;
  XW_RETURN_IF_ERROR(gather(a, &sa));
  XW_RETURN_IF_ERROR(gather(b, &sb));
  stats::TestSetInfo test;
  test.num_classes = num_classes;
  test.num_examples = static_cast<int64_t>(labels.size());
  test.labels = labels;
  stats::SignificanceOptions opt;
  // Only `seed` redraws the trial's arbitrary choices; `ulp` and `order`
  // keep its initial draw, so their verdicts pass the spread guard.
  auto seed = [](const ReplicaRecord& r) { return r.family == "seed"; };
  opt.replicas_redraw =
      std::all_of(a.begin(), a.end(), seed) && std::all_of(b.begin(), b.end(), seed);
  return stats::ComparePair({sa.acc, sa.finite, sa.pred}, {sb.acc, sb.finite, sb.pred}, test,
                            opt);
}

namespace {

// The replicas first <= r < first + k of `profile` in `family`, in replica
// order; false when one of them is missing.
bool Pick(const std::vector<ReplicaRecord>& all, const std::string& profile,
          const std::string& family, int64_t first, int64_t k,
          std::vector<ReplicaRecord>* out) {
  std::vector<const ReplicaRecord*> slot(static_cast<size_t>(std::max<int64_t>(k, 0)), nullptr);
  for (const ReplicaRecord& r : all) {
    if (r.profile == profile && r.family == family && r.replica >= first &&
        r.replica < first + k) {
      slot[static_cast<size_t>(r.replica - first)] = &r;
    }
  }
  for (const ReplicaRecord* r : slot) {
    if (r == nullptr) return false;
    out->push_back(*r);
  }
  return true;
}

// True when two stored numbers agree: both unknown, or within 1e-9 relative
// (the statistics are recomputed by the same formulas, but the t quantiles
// may differ in the last bits between builds).
bool Close(const Json& a, const Json& b) {
  if (a.is_number() && b.is_number()) {
    const double x = a.get<double>(), y = b.get<double>();
    return std::fabs(x - y) <= 1e-9 * std::max({1.0, std::fabs(x), std::fabs(y)});
  }
  return a == b;
}

// The first key path at which `stored` and `again` differ ("" if none).
std::string FirstDifference(const Json& stored, const Json& again, const std::string& path) {
  if (stored.is_object() && again.is_object()) {
    for (const auto& [key, v] : again.items()) {
      const std::string here = path.empty() ? key : path + "." + key;
      if (!stored.contains(key)) return here;
      std::string d = FirstDifference(stored[key], v, here);
      if (!d.empty()) return d;
    }
    return "";
  }
  return Close(stored, again) ? "" : path;
}

}  // namespace

Result<stats::PairStatistics> RecomputeReplicaStats(const ReplicaStatsRecord& s,
                                                    const std::vector<ReplicaRecord>& replicas) {
  std::vector<ReplicaRecord> a, b;
  if (!Pick(replicas, s.profile_a, s.family, s.first_replica, s.k_a, &a) ||
      !Pick(replicas, s.profile_b, s.family, s.first_replica, s.k_b, &b)) {
    return Status::NotFound("the statistics count " + std::to_string(s.k_a) + " + " +
                            std::to_string(s.k_b) + " " + s.family + " replicas of '" +
                            s.profile_a + "' and '" + s.profile_b +
                            "'; not all of them are stored");
  }
  return ReplicaPairStatistics(a, b, s.test_labels, s.num_classes);
}

Status CheckReplicaStats(const ReplicaStatsRecord& s, const std::vector<ReplicaRecord>& replicas,
                         const std::string& what) {
  const std::string name = what + ": " + s.profile_a + " vs " + s.profile_b + " (" + s.family + ")";
  auto again = RecomputeReplicaStats(s, replicas);
  if (!again.ok()) return Status::InvalidArgument(name + ": " + again.status().message());
  const Json stored = Json::parse(PairStatisticsJson(s.stats));
  const Json fresh = Json::parse(PairStatisticsJson(*again));
  const std::string diff = FirstDifference(stored, fresh, "");
  if (diff.empty()) return Status::OK();
  Json x = stored, y = fresh;
  for (size_t at = 0, next; at <= diff.size(); at = next + 1) {
    next = diff.find('.', at);
    if (next == std::string::npos) next = diff.size();
    const std::string key = diff.substr(at, next - at);
    x = x.contains(key) ? Json(x[key]) : Json(nullptr);
    y = y[key];
  }
  return Status::InvalidArgument(name + ": the stored " + diff + " is " + x.dump() +
                                 ", its replicas give " + y.dump());
}

namespace internal {

void InsertReplicaStatsRow(SQLite::Database& db, const ReplicaStatsRecord& s, int64_t trial_id,
                           bool replace) {
  SQLite::Statement st(
      db, std::string(replace ? "INSERT OR REPLACE" : "INSERT") +
              " INTO replica_stats (trial_id, profile_a, profile_b, family, k_a, "
              "k_b, num_classes, verdict, p_value, mean_diff, diff_lcb, noise_sd, noise_floor, "
              "stats_json, test_labels, created_at, first_replica) VALUES "
              "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  st.bind(1, trial_id);
  st.bind(2, s.profile_a);
  st.bind(3, s.profile_b);
  st.bind(4, s.family);
  st.bind(5, s.k_a);
  st.bind(6, s.k_b);
  st.bind(7, s.num_classes);
  st.bind(8, std::string(stats::VerdictName(s.stats.verdict)));
  sql::BindReal(st, 9, s.stats.permutation_p);
  sql::BindReal(st, 10, s.stats.mean_diff);
  sql::BindReal(st, 11, s.stats.lcb);
  sql::BindReal(st, 12, s.NoiseSd());
  sql::BindReal(st, 13, s.stats.floor);
  std::string stats_json = PairStatisticsJson(s.stats);
  // The column is the row's key; stats_json keeps the value too (when not
  // 0, as version 3 did), so that the JSON describes its replicas alone.
  if (s.first_replica != 0) {  // a confirmation over fresh replicas (replicas.h)
    Json j = Json::parse(stats_json);
    j["first_replica"] = s.first_replica;
    stats_json = j.dump();
  }
  st.bind(14, stats_json);
  st.bind(15, s.test_labels.data(), static_cast<int>(s.test_labels.size()));
  st.bind(16, UtcNow());
  st.bind(17, s.first_replica);
  st.exec();
}

}  // namespace internal

Status StoreReplicaStats(Dataset& ds, const ReplicaStatsRecord& s) {
  Dataset::Impl& impl = ds.impl();
  if (impl.read_only) return Status::FailedPrecondition(impl.dir + ": opened read-only");
  return sql::Guarded(impl.DbPath(), [&]() -> Status {
    SQLite::Transaction tx(*impl.db, SQLite::TransactionBehavior::IMMEDIATE);
    SQLite::Statement t(*impl.db, "SELECT 1 FROM trials WHERE id = ?");
    t.bind(1, s.trial_id);
    if (!t.executeStep()) {
      return Status::NotFound("trial " + std::to_string(s.trial_id) + " is not in " + impl.dir);
    }
    internal::InsertReplicaStatsRow(*impl.db, s, s.trial_id, /*replace=*/true);
    tx.commit();
    return Status::OK();
  });
}

Result<std::vector<ReplicaStatsRecord>> LoadReplicaStats(const Dataset& ds, int64_t trial_id) {
  Dataset::Impl& impl = ds.impl();
  std::vector<ReplicaStatsRecord> out;
  XW_RETURN_IF_ERROR(sql::Guarded(impl.DbPath(), [&]() -> Status {
    SQLite::Statement st(*impl.db,
                         "SELECT id, trial_id, profile_a, profile_b, family, k_a, k_b, "
                         "num_classes, stats_json, test_labels, created_at, first_replica "
                         "FROM replica_stats WHERE ? < 0 OR trial_id = ? "
                         "ORDER BY trial_id, first_replica, id");
    st.bind(1, trial_id);
    st.bind(2, trial_id);
    while (st.executeStep()) {
      ReplicaStatsRecord r;
      r.id = st.getColumn(0).getInt64();
      r.trial_id = st.getColumn(1).getInt64();
      r.profile_a = sql::GetText(st.getColumn(2));
      r.profile_b = sql::GetText(st.getColumn(3));
      r.family = sql::GetText(st.getColumn(4));
      r.k_a = st.getColumn(5).getInt64();
      r.k_b = st.getColumn(6).getInt64();
      r.num_classes = st.getColumn(7).getInt();
      const std::string stats_json = sql::GetText(st.getColumn(8));
      auto parsed = ParsePairStatisticsJson(stats_json);
      if (!parsed.ok()) {
        return Status::Corruption("replica_stats row " + std::to_string(r.id) + ": " +
                                  parsed.status().message());
      }
      r.stats = *parsed;
      r.first_replica = st.getColumn(11).getInt64();
      const SQLite::Column labels = st.getColumn(9);
      const auto* bytes = static_cast<const uint8_t*>(labels.getBlob());
      if (bytes != nullptr) r.test_labels.assign(bytes, bytes + labels.getBytes());
      r.created_at = sql::GetText(st.getColumn(10));
      out.push_back(std::move(r));
    }
    return Status::OK();
  }));
  return out;
}

}  // namespace xw
