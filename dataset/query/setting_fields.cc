#include "setting_fields.h"

#include <utility>
#include <vector>

namespace xw::filter {
namespace {

struct Setting {
  const char* name;
  const char* sql;  // over `t`
  bool numeric;
};

// Keys of hparams_json (trainers/metrics.cc HparamsJson), then derived ones.
constexpr Setting kSettings[] = {
    {"width", "json_extract(t.hparams_json, '$.width')", true},
    {"depth", "json_extract(t.hparams_json, '$.depth')", true},
    {"dropout", "json_extract(t.hparams_json, '$.dropout')", true},
    {"train_limit", "json_extract(t.hparams_json, '$.train_limit')", true},
    {"test_limit", "json_extract(t.hparams_json, '$.test_limit')", true},
    {"data_seed", "json_extract(t.hparams_json, '$.data_seed')", true},
    {"init_weights", "json_extract(t.hparams_json, '$.init_weights')", false},
    // SQLite concatenates in the order the subquery yields (model order).
    {"profiles",
     "(SELECT group_concat(p.profile, ',') FROM (SELECT m.profile FROM models m "
     "WHERE m.trial_id = t.id ORDER BY m.idx) p)",
     false},
};

// Per-model settings: prefix -> expression over `m` (the profile's model).
struct ModelSetting {
  const char* prefix;
  const char* sql;
  bool numeric;
};
constexpr ModelSetting kModelSettings[] = {
    {"isa_", "m.isa", false},
    {"simd_", "json_extract(m.fingerprint_json, '$.kernel_target')", false},
    {"cpu_", "json_extract(m.fingerprint_json, '$.cpu_model')", false},
    {"threads_", "m.threads", true},
};

}  // namespace

std::optional<Field> SettingField(const std::string& lower,
                                  const std::string& name) {
  for (const Setting& s : kSettings) {
    if (lower == s.name) return Field{lower, s.sql, {}, s.numeric, -1};
  }
  for (const ModelSetting& s : kModelSettings) {
    const std::string prefix = s.prefix;
    if (lower.size() > prefix.size() && lower.compare(0, prefix.size(), prefix) == 0) {
      // Profile names keep their case (data, bound as a parameter).
      return Field{lower,
                   std::string("(SELECT ") + s.sql +
                       " FROM models m WHERE m.trial_id = t.id AND m.profile = ?)",
                   {name.substr(prefix.size())},
                   s.numeric,
                   -1};
    }
  }
  return std::nullopt;
}

std::string SettingFieldList() {
  std::string s;
  for (const Setting& f : kSettings) s += std::string(f.name) + ", ";
  for (const ModelSetting& f : kModelSettings) s += std::string(f.prefix) + "<profile>, ";
  return s.substr(0, s.size() - 2);
}

}  // namespace xw::filter
