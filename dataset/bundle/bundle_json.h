// Strict JSON for untrusted bundle files (manifest.json, trials.json).
//
// ParseStrictJson rejects, before building any value: text above
// `max_bytes`, nesting deeper than `max_depth`, strings or keys longer than
// `max_string_bytes`, duplicate object keys and invalid JSON (including
// invalid UTF-8). JsonFields then reads one object field by field with type
// checks and rejects the fields nobody asked for. Messages start with the
// file name and name the field path ("files[3].sha256"). Thread-safe.
#ifndef XWIRES_DATASET_BUNDLE_BUNDLE_JSON_H_
#define XWIRES_DATASET_BUNDLE_BUNDLE_JSON_H_

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "xwires/core/status.h"

namespace xw::bundle {

struct JsonLimits {
  size_t max_bytes = size_t{16} << 20;
  size_t max_depth = 16;
  size_t max_string_bytes = 1 << 16;
};

// `file` names the text in messages ("manifest.json").
Result<nlohmann::json> ParseStrictJson(std::string_view text,
                                       const JsonLimits& limits,
                                       const std::string& file);

class JsonFields {
 public:
  // `j` must outlive this object. `where` is the path of `j` ("" = top).
  JsonFields(const nlohmann::json& j, std::string file, std::string where);

  Status Bad(const std::string& what) const;
  std::string Name(const std::string& key) const;

  // The field, which must exist and have `type` ("a string", ...).
  Result<const nlohmann::json*> Get(const std::string& key,
                                    nlohmann::json::value_t type,
                                    const char* type_name);
  // The field, of any type (it must exist).
  Result<const nlohmann::json*> Any(const std::string& key);
  // A string without control characters, at most `max_bytes` long.
  Result<std::string> String(const std::string& key, size_t max_bytes);
  Result<uint64_t> Unsigned(const std::string& key);
  Result<int64_t> Integer(const std::string& key);
  Result<bool> Bool(const std::string& key);
  // A number, null (NaN: unknown) or the string "inf" / "-inf" (how a
  // diverged run's losses are written).
  Result<double> Real(const std::string& key);
  // An integer or null.
  Result<std::optional<int64_t>> IntegerOrNull(const std::string& key);
  // Rejects fields that were never asked for.
  Status Finish() const;

 private:
  const nlohmann::json& j_;
  std::string file_, where_;
  std::set<std::string> used_;
};

// A real as bundle files write it: a number, null (unknown) or "inf" /
// "-inf" (a diverged loss); JsonFields::Real reads it back.
nlohmann::json RealJson(double v);

// Compact JSON text; invalid UTF-8 in stored text (e.g. imported CSV names)
// is replaced rather than thrown on.
std::string DumpLenient(const nlohmann::json& j);

}  // namespace xw::bundle

#endif  // XWIRES_DATASET_BUNDLE_BUNDLE_JSON_H_
