// Attribution effects and renderings (JSON for scripts and the stored
// result, text for people).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "attribute_internal.h"
#include "xwires/dataset/query/table.h"

namespace xw {
namespace {

using Json = nlohmann::json;

Json J(double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); }

std::string Pct(double share) {
  if (!std::isfinite(share)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f%%", 100 * share);
  return buf;
}

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

}  // namespace

void SummarizeAttribution(AttributionReport* r) {
  r->acc_a = r->runs.at(0).test_acc;
  r->acc_b = r->runs.at(1).test_acc;
  r->divergence = std::fabs(r->acc_a - r->acc_b);
  r->disagree_ab = r->runs.at(1).disagree_a;
  for (KnobEffect& e : r->knobs) {
    e.alone_a = std::fabs(e.acc_a_switched - r->acc_a);
    e.remain_b = std::fabs(e.acc_b_switched - r->acc_b);
    e.share = r->divergence > 0 ? (e.alone_a + e.remain_b) / (2 * r->divergence)
                                : NAN;
    e.beyond_noise = "-";
    if (std::isfinite(r->noise_threshold)) {
      const bool alone = e.alone_a > r->noise_threshold,
                 remains = e.remain_b > r->noise_threshold;
      e.beyond_noise = alone && remains ? "both" : alone ? "alone" : remains ? "remains" : "no";
    }
  }
  std::stable_sort(r->knobs.begin(), r->knobs.end(),
                   [](const KnobEffect& x, const KnobEffect& y) {
                     const double sx = std::isfinite(x.share) ? x.share : -1,
                                  sy = std::isfinite(y.share) ? y.share : -1;
                     if (sx != sy) return sx > sy;
                     return x.disagree_alone_a + x.disagree_remain_b >
                            y.disagree_alone_a + y.disagree_remain_b;
                   });
  r->main_knobs.clear();
  if (!(r->divergence > 0)) {
    r->summary = "retrained " + r->profile_a + " and " + r->profile_b +
                 " reach the same accuracy (" + Num(r->acc_a) +
                 "): no divergence to attribute";
    return;
  }
  for (const KnobEffect& e : r->knobs) {
    if (e.share >= 0.5) r->main_knobs.push_back(e.knob.path);
  }
  if (r->main_knobs.empty() && !r->knobs.empty())
    r->main_knobs.push_back(r->knobs[0].knob.path);
  std::string names;
  for (const std::string& k : r->main_knobs)
    names += (names.empty() ? "" : ", ") + k;
  r->summary = "divergence " + Num(r->divergence) + " (" + r->profile_a + " " +
               Num(r->acc_a) + " vs " + r->profile_b + " " + Num(r->acc_b) +
               "): main knob" + (r->main_knobs.size() > 1 ? "s " : " ") +
               names + " (" + Pct(r->knobs[0].share) + " for the largest)";
  if (std::isfinite(r->noise_threshold)) {
    int beyond = 0;
    for (const KnobEffect& e : r->knobs) beyond += e.beyond_noise != "no";
    r->summary += "; " + std::to_string(beyond) + " of " + std::to_string(r->knobs.size()) +
                  " knob(s) beyond the noise floor (single-run effects above " +
                  Num(r->noise_threshold) + " = t x sqrt(2) x replica noise sd " +
                  Num(r->noise_sd) + ", " + r->noise_family + " replicas)";
  } else {
    r->summary +=
        "; no replicas of this pair, so effects are not tested against the noise "
        "floor (run `xwires replicate` on the trial first)";
  }
  if (!r->reproduced_a || !r->reproduced_b) {
    r->summary +=
        "; note: the retrained baselines do not reproduce the stored weights";
  }
}

std::string AttributionJson(const AttributionReport& r) {
  Json j;
  j["trial"] = r.trial_id;
  j["arch"] = r.arch;
  j["profiles"] = {r.profile_a, r.profile_b};
  j["stored_divergence"] = J(r.stored_divergence);
  j["baseline"] = {{"acc_a", J(r.acc_a)},
                   {"acc_b", J(r.acc_b)},
                   {"divergence", J(r.divergence)},
                   {"disagreement", J(r.disagree_ab)},
                   {"reproduced_a", r.reproduced_a},
                   {"reproduced_b", r.reproduced_b}};
  Json knobs = Json::array();
  for (const KnobEffect& e : r.knobs) {
    knobs.push_back({{"knob", e.knob.path},
                     {"a_value", Json::parse(e.knob.a_value)},
                     {"b_value", Json::parse(e.knob.b_value)},
                     {"acc_a_switched", J(e.acc_a_switched)},
                     {"acc_b_switched", J(e.acc_b_switched)},
                     {"alone_a", J(e.alone_a)},
                     {"remain_b", J(e.remain_b)},
                     {"share", J(e.share)},
                     {"disagree_alone_a", J(e.disagree_alone_a)},
                     {"disagree_remain_b", J(e.disagree_remain_b)},
                     {"beyond_noise", e.beyond_noise}});
  }
  j["knobs"] = knobs;
  j["noise"] = {{"sd", J(r.noise_sd)},
                {"threshold", J(r.noise_threshold)},
                {"df", r.noise_df},
                {"family", r.noise_family}};
  j["main_knobs"] = r.main_knobs;
  Json runs = Json::array();
  for (const AttributionRun& u : r.runs) {
    runs.push_back({{"knob", u.knob},
                    {"direction", u.direction},
                    {"profile", u.profile},
                    {"value", u.value_json.empty() ? Json(nullptr)
                                                   : Json::parse(u.value_json)},
                    {"status", u.status},
                    {"test_acc", J(u.test_acc)},
                    {"test_loss", J(u.test_loss)},
                    {"disagree_a", J(u.disagree_a)},
                    {"disagree_b", J(u.disagree_b)},
                    {"weights_sha256", u.weights_sha256},
                    {"wall_time_s", J(u.wall_time_s)}});
  }
  j["runs"] = runs;
  j["summary"] = r.summary;
  return j.dump(2);
}

std::string AttributionText(const AttributionReport& r) {
  std::string out = "trial " + std::to_string(r.trial_id) + " (" + r.arch +
                    "): " + r.profile_a + " (A) vs " + r.profile_b + " (B)\n";
  out += "baselines retrained: acc A " + Num(r.acc_a) +
         (r.reproduced_a ? " (reproduced)" : " (NOT reproduced)") + ", acc B " +
         Num(r.acc_b) +
         (r.reproduced_b ? " (reproduced)" : " (NOT reproduced)") +
         "; divergence " + Num(r.divergence) + " (stored " +
         Num(r.stored_divergence) + "), predictions disagree on " +
         Num(100 * r.disagree_ab) + "%\n\n";
  out += FormatTable(AttributionKnobTable(r), TableFormat::kTable);
  out += "\n" + r.summary + "\n";
  return out;
}

Table AttributionKnobTable(const AttributionReport& r) {
  Table t;
  t.columns = {"knob",
               "A value",
               "B value",
               "acc A_k",
               "acc B_k",
               "alone from A",
               "remains (only k differs)",
               "share",
               "disagree A_k/A",
               "disagree B_k/B",
               "beyond noise"};
  for (const KnobEffect& e : r.knobs) {
    t.rows.push_back({e.knob.path, e.knob.a_value, e.knob.b_value,
                      e.acc_a_switched, e.acc_b_switched, e.alone_a, e.remain_b,
                      Pct(e.share), e.disagree_alone_a, e.disagree_remain_b,
                      e.beyond_noise});
  }
  return t;
}

Table AttributionRunTable(const AttributionReport& r) {
  Table t;
  t.columns = {"knob",       "direction",  "profile",    "value",
               "status",     "test_acc",   "test_loss",  "disagree_a",
               "disagree_b", "weights_sha256", "wall_s"};
  for (const AttributionRun& u : r.runs) {
    t.rows.push_back({u.knob, u.direction, u.profile,
                      u.value_json.empty() ? Cell{} : Cell{u.value_json}, u.status,
                      u.test_acc, u.test_loss, u.disagree_a, u.disagree_b,
                      u.weights_sha256, u.wall_time_s});
  }
  return t;
}

AnalysisRecord AttributionAnalysisRecord(const AttributionReport& r) {
  AnalysisRecord row;
  row.trial_ids = {r.trial_id};
  row.kind = "attribute";
  row.summary = r.summary;
  row.result_json = AttributionJson(r);
  for (const AttributionRun& u : r.runs) {
    row.runs.push_back({u.knob, u.direction, u.profile, u.value_json, u.status,
                        u.test_acc, u.test_loss, u.weights_sha256});
  }
  return row;
}

Result<Table> AttributionKnobTableFromJson(const std::string& json) {
  const Json j = Json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("knobs") || !j["knobs"].is_array()) {
    return Status::InvalidArgument("not a stored attribute result (no \"knobs\" array)");
  }
  auto num = [](const Json& k, const char* key) {
    auto it = k.find(key);
    return it != k.end() && it->is_number() ? it->get<double>() : NAN;
  };
  AttributionReport r;
  for (const Json& k : j["knobs"]) {
    if (!k.is_object()) return Status::InvalidArgument("stored attribute result: bad knob entry");
    KnobEffect e;
    e.knob.path = k.value("knob", "");
    e.knob.a_value = k.value("a_value", Json()).dump();
    e.knob.b_value = k.value("b_value", Json()).dump();
    e.acc_a_switched = num(k, "acc_a_switched");
    e.acc_b_switched = num(k, "acc_b_switched");
    e.alone_a = num(k, "alone_a");
    e.remain_b = num(k, "remain_b");
    e.share = num(k, "share");
    e.disagree_alone_a = num(k, "disagree_alone_a");
    e.disagree_remain_b = num(k, "disagree_remain_b");
    if (k.contains("beyond_noise") && k["beyond_noise"].is_string())
      e.beyond_noise = k["beyond_noise"].get<std::string>();
    r.knobs.push_back(std::move(e));
  }
  return AttributionKnobTable(r);
}

}  // namespace xw
