// Degenerate-model facts and flags (degenerate.h) and their SQL function
// (degenerate_sql.h).
#include "xwires/dataset/store/degenerate.h"

#include <SQLiteCpp/SQLiteCpp.h>
#include <sqlite3.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "degenerate_sql.h"
#include "xwires/core/significance.h"

namespace xw {

namespace {

using Json = nlohmann::json;

Json ObjectOf(const std::string& text) {
  if (text.empty()) return Json::object();
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  return j.is_object() ? j : Json::object();
}

// A recorded peak as JSON: a number, or "nan" / "inf" / "-inf".
Json PeakJson(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

// The inverse of PeakJson; nullopt for an absent or unreadable value.
std::optional<double> PeakOf(const Json& j) {
  if (j.is_number()) return j.get<double>();
  if (j.is_string()) {
    const std::string s = j.get<std::string>();
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
    if (s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-inf") return -std::numeric_limits<double>::infinity();
  }
  return std::nullopt;
}

int64_t IntOr(const Json& obj, const char* key, int64_t fallback) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_number_integer()) return fallback;
  return it->get<int64_t>();
}

}  // namespace

std::optional<double> LossPeak(const std::vector<double>& losses,
                               bool nan_is_unknown) {
  std::optional<double> peak;
  for (double v : losses) {
    if (std::isnan(v)) {
      if (nan_is_unknown) continue;
      return v;
    }
    peak = peak ? std::max(*peak, v) : v;
  }
  return peak;
}

void RecordDegeneracyFacts(TrialRecord* t, int num_classes,
                           int64_t test_examples,
                           const std::vector<std::optional<double>>* peaks) {
  nlohmann::ordered_json extra = nlohmann::ordered_json::parse(
      t->extra_json.empty() ? "{}" : t->extra_json, nullptr, false);
  if (!extra.is_object()) extra = nlohmann::ordered_json::object();
  extra["test_set"] = {{"classes", num_classes}, {"examples", test_examples}};
  nlohmann::ordered_json peak_json = nlohmann::ordered_json::object();
  for (size_t i = 0; i < t->models.size(); ++i) {
    const ModelRecord& m = t->models[i];
    std::optional<double> peak;
    if (peaks != nullptr) {
      if (i < peaks->size()) peak = (*peaks)[i];
    } else {
      std::vector<double> losses = {m.train_loss, m.test_loss};
      for (const EpochMetrics& e : m.curves) {
        losses.insert(losses.end(),
                      {e.train_loss_mean, e.train_loss_last, e.test_loss});
      }
      peak = LossPeak(losses, /*nan_is_unknown=*/true);
    }
    if (peak) peak_json[m.profile] = PeakJson(*peak);
  }
  extra["loss_peak"] = peak_json;
  t->extra_json = extra.dump();
}

TestSetSize TestSetOfSpec(const std::string& data_spec, int64_t test_limit) {
  const std::string name = data_spec.substr(0, data_spec.find(':'));
  TestSetSize s;
  int64_t whole = 10000;
  if (name.empty() || name == "synthetic") {
    s.classes = 10;
    whole = 1000;
  } else if (name == "cifar10" || name == "mnist" || name == "fashion-mnist") {
    s.classes = 10;
  } else if (name == "cifar100") {
    s.classes = 100;
  } else {
    return {};
  }
  s.examples = test_limit >= 0 ? std::min(test_limit, whole) : whole;
  if (s.examples < 1) return {};
  return s;
}

namespace {

TestSetSize TestSetOf(const std::string& data_spec,
                      const std::string& hparams_json, const Json& extra) {
  auto it = extra.find("test_set");
  if (it != extra.end() && it->is_object()) {
    TestSetSize s;
    s.classes = static_cast<int>(IntOr(*it, "classes", 0));
    s.examples = IntOr(*it, "examples", 0);
    if (s.classes >= 2 && s.examples >= 1) return s;
  }
  return TestSetOfSpec(data_spec,
                       IntOr(ObjectOf(hparams_json), "test_limit", -1));
}

// Flags of models given as (profile, status, test_acc, train_loss,
// test_loss) through `get`.
template <typename Model>
std::vector<ModelFlags> FlagsOf(const std::string& data_spec,
                                const std::string& hparams_json,
                                const std::string& extra_json,
                                const std::vector<Model>& models) {
  const Json extra = ObjectOf(extra_json);
  const TestSetSize test_set = TestSetOf(data_spec, hparams_json, extra);
  const auto peaks = extra.find("loss_peak");
  std::vector<ModelFlags> out;
  for (const Model& m : models) {
    std::optional<double> peak;
    if (peaks != extra.end() && peaks->is_object() && peaks->contains(m.profile))
      peak = PeakOf((*peaks)[m.profile]);
    ModelFlags f;
    f.collapsed = ModelFlagOf(false, m.status, m.test_acc, m.train_loss,
                              m.test_loss, peak, test_set);
    f.at_chance = ModelFlagOf(true, m.status, m.test_acc, m.train_loss,
                              m.test_loss, peak, test_set);
    out.push_back(f);
  }
  return out;
}

}  // namespace

TestSetSize TestSetOfTrial(const TrialRow& t) {
  return TestSetOf(t.data_spec, t.hparams_json, ObjectOf(t.extra_json));
}

int ModelFlagOf(bool at_chance, const std::string& status, double test_acc,
                double train_loss, double test_loss,
                std::optional<double> peak, TestSetSize test_set) {
  const bool known_set = test_set.classes >= 2 && test_set.examples >= 1;
  if (at_chance) {
    if (std::isnan(test_acc) || !known_set) return -1;
    return stats::AtChance(test_acc, test_set.classes, test_set.examples) ? 1
                                                                           : 0;
  }
  if (status == "diverged") return 1;
  // NaN in the final losses is unknown (SQL NULL); a NaN peak is recorded.
  std::vector<double> losses;
  for (double v : {train_loss, test_loss}) {
    if (!std::isnan(v)) losses.push_back(v);
  }
  if (peak) losses.push_back(*peak);
  int flag = -1;
  for (double v : losses) {
    if (!std::isfinite(v)) return 1;
    if (!known_set) continue;  // a finite loss needs k to be judged
    if (stats::LossExploded(v, test_set.classes)) return 1;
    flag = 0;
  }
  return flag;
}

std::vector<ModelFlags> DegenerateFlags(const TrialRecord& t) {
  return FlagsOf(t.data_spec, t.hparams_json, t.extra_json, t.models);
}

std::vector<ModelFlags> DegenerateFlags(const TrialRow& t) {
  return FlagsOf(t.data_spec, t.hparams_json, t.extra_json, t.models);
}

bool IsDegenerate(const std::vector<ModelFlags>& models) {
  const ModelFlags f = TrialFlags(models);
  return f.collapsed == 1 || f.at_chance == 1;
}

ModelFlags TrialFlags(const std::vector<ModelFlags>& models) {
  ModelFlags t;
  for (const ModelFlags& m : models) {
    t.collapsed = std::max(t.collapsed, m.collapsed);
    t.at_chance = std::max(t.at_chance, m.at_chance);
  }
  return t;
}

namespace {

double RealArg(sqlite3_value* v) {
  const int type = sqlite3_value_type(v);
  if (type == SQLITE_INTEGER || type == SQLITE_FLOAT)
    return sqlite3_value_double(v);
  return std::numeric_limits<double>::quiet_NaN();
}

std::string TextArg(sqlite3_value* v) {
  const unsigned char* s = sqlite3_value_text(v);
  return s ? reinterpret_cast<const char*>(s) : "";
}

// xw_model_flag(kind, status, test_acc, train_loss, test_loss, peak,
//               data_spec, test_limit, classes, examples): kind 0 collapsed,
// 1 at_chance; peak / test_limit / classes / examples may be NULL (peak: a
// number or 'nan' / 'inf' / '-inf' text). Returns 1, 0 or NULL.
void ModelFlagSql(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  if (argc != 10) return sqlite3_result_null(ctx);
  std::optional<double> peak;
  const int peak_type = sqlite3_value_type(argv[5]);
  if (peak_type == SQLITE_INTEGER || peak_type == SQLITE_FLOAT) {
    peak = sqlite3_value_double(argv[5]);
  } else if (peak_type == SQLITE_TEXT) {
    peak = PeakOf(Json(TextArg(argv[5])));
  }
  TestSetSize set;
  if (sqlite3_value_type(argv[8]) == SQLITE_INTEGER &&
      sqlite3_value_type(argv[9]) == SQLITE_INTEGER) {
    set.classes = static_cast<int>(sqlite3_value_int64(argv[8]));
    set.examples = sqlite3_value_int64(argv[9]);
  }
  if (set.classes < 2 || set.examples < 1) {
    const int64_t limit = sqlite3_value_type(argv[7]) == SQLITE_INTEGER
                              ? sqlite3_value_int64(argv[7])
                              : -1;
    set = TestSetOfSpec(TextArg(argv[6]), limit);
  }
  const int flag = ModelFlagOf(sqlite3_value_int(argv[0]) == 1,
                               TextArg(argv[1]), RealArg(argv[2]),
                               RealArg(argv[3]), RealArg(argv[4]), peak, set);
  if (flag < 0) return sqlite3_result_null(ctx);
  sqlite3_result_int(ctx, flag);
}

std::string FlagSql(int kind) {
  return "(SELECT max(xw_model_flag(" + std::to_string(kind) +
         ", m.status, m.test_acc, m.train_loss, m.test_loss, "
         "json_extract(t.extra_json, '$.loss_peak.' || json_quote(m.profile)), "
         "t.data_spec, json_extract(t.hparams_json, '$.test_limit'), "
         "json_extract(t.extra_json, '$.test_set.classes'), "
         "json_extract(t.extra_json, '$.test_set.examples'))) FROM models m "
         "WHERE m.trial_id = t.id)";
}

}  // namespace

void RegisterDegenerateSql(SQLite::Database& db) {
  db.createFunction("xw_model_flag", 10, /*deterministic=*/true, nullptr,
                    &ModelFlagSql, nullptr, nullptr, nullptr);
}

const std::string& TrialFlagSql(DegenerateFlag flag) {
  static const std::string collapsed = FlagSql(0), at_chance = FlagSql(1);
  return flag == DegenerateFlag::kCollapsed ? collapsed : at_chance;
}

}  // namespace xw
