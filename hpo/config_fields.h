// Readers of typed fields of a search config JSON document, shared by
// search_config.cc and driver_config.cc (not part of the public API).
//
// Every failure is Status::InvalidArgument("search config: <path>: <what>"),
// where <path> names the field ("budget.max_trials", "train.lr"); the file
// loaders add the file name in front (LoadConfigFile).
#ifndef XWIRES_HPO_CONFIG_FIELDS_H_
#define XWIRES_HPO_CONFIG_FIELDS_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "xwires/core/file_util.h"
#include "xwires/core/status.h"

namespace xw::hpo::internal {

// How an error message shows the rejected value: kShort cuts its JSON text
// at 60 characters, kFull shows all of it.
enum class ValueText { kShort, kFull };

// "search config: <path>: <what>".
Status BadField(const std::string& path, const std::string& what);

// The JSON text of `v` for an error message.
std::string ShownValue(const nlohmann::json& v,
                       ValueText text = ValueText::kShort);

// Parses the text of a config document; a syntax error names the byte.
Result<nlohmann::json> ParseConfigText(const std::string& text);

// `obj` must be an object whose keys are all in `allowed`. `path` "" is the
// document itself (unknown keys are then named without a prefix).
Status CheckKeys(const nlohmann::json& obj, const std::string& path,
                 const std::set<std::string>& allowed,
                 ValueText text = ValueText::kShort);

// Any JSON number, as stored (no range check).
Result<double> GetNumber(const nlohmann::json& v, const std::string& path,
                         ValueText text);
// A finite number in [lo, hi].
Result<double> GetNumber(const nlohmann::json& v, const std::string& path,
                         double lo, double hi);
// A JSON integer literal (1.0 is rejected), as stored (no range check).
Result<int64_t> GetIntegerLiteral(const nlohmann::json& v,
                                  const std::string& path, ValueText text);
// An integer in [lo, hi]; a float with an integral value (3.0) counts.
Result<int64_t> GetInt(const nlohmann::json& v, const std::string& path,
                       int64_t lo, int64_t hi);
Result<std::string> GetString(const nlohmann::json& v, const std::string& path);
Result<bool> GetBool(const nlohmann::json& v, const std::string& path);

// Reads the file at `path` and parses it with `parse`; a parse failure gets
// the file name as context.
template <typename T>
Result<T> LoadConfigFile(const std::string& path,
                         Result<T> (*parse)(const std::string&)) {
  XW_ASSIGN_OR_RETURN(std::string text,
                      ReadWholeFile(path, "search config file"));
  auto c = parse(text);
  if (!c.ok()) return c.status().WithContext(path);
  return c;
}

}  // namespace xw::hpo::internal

#endif  // XWIRES_HPO_CONFIG_FIELDS_H_
