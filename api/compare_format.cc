// Renderings of a CompareReport: JSON (for scripts and the stored result)
// and an aligned text report (for people).
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "xwires/api/compare.h"
#include "xwires/dataset/query/table.h"

namespace xw {
namespace {

using Json = nlohmann::json;

// JSON has no NaN or infinity: non-finite values are written as null.
Json J(double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); }

Json StatsJson(const DiffStats& s) {
  return {{"max_abs", J(s.max_abs)},  {"max_rel", J(s.max_rel)},
          {"rel_l2", J(s.rel_l2)},    {"cosine", J(s.cosine)},
          {"not_close", s.not_close}, {"identical", s.identical},
          {"close", s.close()}};
}

Json Doubles(const std::vector<double>& v) {
  Json a = Json::array();
  for (double d : v) a.push_back(J(d));
  return a;
}

Json Matrix(const std::vector<int64_t>& m, int k) {
  Json rows = Json::array();
  for (int i = 0; i < k; ++i) {
    rows.push_back(
        std::vector<int64_t>(m.begin() + static_cast<size_t>(i) * k,
                             m.begin() + static_cast<size_t>(i + 1) * k));
  }
  return rows;
}

Json VerdictJson(const TierVerdict& v) {
  return {{"verdict", v.verdict}, {"detail", v.detail}};
}

std::string ShapeText(const Shape& s) {
  std::string out;
  for (int64_t d : s) {
    if (!out.empty()) out += 'x';
    out += std::to_string(d);
  }
  return out.empty() ? "scalar" : out;
}

}  // namespace

std::string CompareJson(const CompareReport& r) {
  Json j;
  j["trial"] = r.trial_id;
  j["arch"] = r.arch;
  j["profiles"] = {r.profile_a, r.profile_b};
  j["options"] = {{"probe", r.options.probe},
                  {"rtol", r.options.rtol},
                  {"atol", r.options.atol},
                  {"acc_tol", r.options.acc_tol}};
  Json tensors = Json::array();
  for (const TensorDiff& t : r.tensors) {
    tensors.push_back({{"name", t.name},
                       {"shape", t.shape},
                       {"buffer", t.buffer},
                       {"stats", StatsJson(t.stats)}});
  }
  j["tier1"] = VerdictJson(r.tier1);
  j["tier1"]["tensors"] = tensors;
  Json layers = Json::array();
  for (const LayerDiff& l : r.layers) {
    layers.push_back({{"path", l.path},
                      {"type", l.type},
                      {"shape_a", l.shape_a},
                      {"shape_b", l.shape_b},
                      {"stats", StatsJson(l.stats)}});
  }
  j["tier2"] = VerdictJson(r.tier2);
  j["tier2"]["probe"] = r.probe;
  j["tier2"]["first_differing"] =
      r.first_differing.empty() ? Json(nullptr) : Json(r.first_differing);
  j["tier2"]["parted_at"] =
      r.parted_at.empty() ? Json(nullptr) : Json(r.parted_at);
  j["tier2"]["layers"] = layers;
  const TaskDiff& t = r.task;
  j["tier3"] = VerdictJson(r.tier3);
  j["tier3"].update({{"test_images", t.n},
                     {"classes", t.classes},
                     {"acc_a", J(t.acc_a)},
                     {"acc_b", J(t.acc_b)},
                     {"stored_acc_a", J(t.stored_acc_a)},
                     {"stored_acc_b", J(t.stored_acc_b)},
                     {"agreement", J(t.agreement)},
                     {"class_acc_a", Doubles(t.class_acc_a)},
                     {"class_acc_b", Doubles(t.class_acc_b)},
                     {"confusion_a", Matrix(t.confusion_a, t.classes)},
                     {"confusion_b", Matrix(t.confusion_b, t.classes)}});
  return j.dump(2);
}

CompareTables CompareTablesOf(const CompareReport& r) {
  CompareTables out;
  Table& t1 = out.tensors;
  t1.columns = {"tensor", "shape",  "max_abs", "max_rel",
                "rel_l2", "cosine", "close"};
  for (const TensorDiff& t : r.tensors) {
    t1.rows.push_back({t.name + (t.buffer ? " (buffer)" : ""),
                       ShapeText(t.shape), t.stats.max_abs, t.stats.max_rel,
                       t.stats.rel_l2, t.stats.cosine,
                       std::string(t.stats.identical ? "identical"
                                   : t.stats.close() ? "yes"
                                                     : "no")});
  }
  Table& t2 = out.layers;
  t2.columns = {"module", "type",   "shape", "max_abs",
                "rel_l2", "cosine", "close"};
  for (const LayerDiff& l : r.layers) {
    const std::string mark = l.path == r.parted_at ? "  <- parted" : "";
    t2.rows.push_back({l.path, l.type, ShapeText(l.shape_a), l.stats.max_abs,
                       l.stats.rel_l2, l.stats.cosine,
                       std::string(l.stats.identical ? "identical"
                                   : l.stats.close() ? "yes"
                                                     : "no") +
                           mark});
  }
  const TaskDiff& t = r.task;
  Table& t3 = out.classes;
  t3.columns = {"class", "acc_" + r.profile_a, "acc_" + r.profile_b};
  for (int c = 0; c < t.classes; ++c) {
    t3.rows.push_back(
        {static_cast<int64_t>(c), t.class_acc_a[c], t.class_acc_b[c]});
  }
  return out;
}

AnalysisRecord CompareAnalysisRecord(const CompareReport& r) {
  AnalysisRecord row;
  row.trial_ids = {r.trial_id};
  row.kind = "compare";
  row.summary = "tensors " + r.tier1.verdict + ", activations " + r.tier2.verdict +
                (r.parted_at.empty() ? "" : " (parted at " + r.parted_at + ")") +
                ", task " + r.tier3.verdict;
  row.result_json = CompareJson(r);
  return row;
}

std::string CompareText(const CompareReport& r) {
  const CompareTables tables = CompareTablesOf(r);
  std::string out = "trial " + std::to_string(r.trial_id) + " (" + r.arch +
                    "): " + r.profile_a + " (A) vs " + r.profile_b + " (B)\n\n";
  out += "tier 1, tensors: " + r.tier1.verdict + " -- " + r.tier1.detail + "\n";
  out += FormatTable(tables.tensors, TableFormat::kTable) + "\n";
  out += "tier 2, activations on " + std::to_string(r.probe) +
         " probe images: " + r.tier2.verdict + " -- " + r.tier2.detail + "\n";
  out += FormatTable(tables.layers, TableFormat::kTable) + "\n";
  const TaskDiff& t = r.task;
  out += "tier 3, task: " + r.tier3.verdict + " -- " + r.tier3.detail + "\n";
  out += FormatTable(tables.classes, TableFormat::kTable);
  for (int side = 0; side < 2; ++side) {
    const auto& m = side == 0 ? t.confusion_a : t.confusion_b;
    out += "\nconfusion " + (side == 0 ? r.profile_a : r.profile_b) +
           " (rows: true class)\n";
    for (int i = 0; i < t.classes; ++i) {
      for (int j = 0; j < t.classes; ++j) {
        char buf[16];
        std::snprintf(
            buf, sizeof buf, "%6lld",
            static_cast<long long>(m[static_cast<size_t>(i) * t.classes + j]));
        out += buf;
      }
      out += "\n";
    }
  }
  return out;
}

}  // namespace xw
