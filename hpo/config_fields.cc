#include "config_fields.h"

#include <cmath>

#include "util.h"
#include "xwires/core/json_limits.h"

namespace xw::hpo::internal {

using json = nlohmann::json;

namespace {

// OK when `ok`, else "<path>: expected <what>, got <v>".
Status Expect(bool ok, const json& v, const std::string& path, const char* what,
              ValueText text = ValueText::kShort) {
  if (ok) return Status::OK();
  return BadField(
      path, std::string("expected ") + what + ", got " + ShownValue(v, text));
}

}  // namespace

Status BadField(const std::string& path, const std::string& what) {
  return Status::InvalidArgument("search config: " + path + ": " + what);
}

std::string ShownValue(const json& v, ValueText text) {
  std::string s = v.dump();
  if (text == ValueText::kFull) return s;
  return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}

Result<json> ParseConfigText(const std::string& text) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    return Status::InvalidArgument("search config: JSON syntax error at byte " +
                                   std::to_string(e.byte) + ": " + e.what());
  }
  // Duplicate keys (the parser keeps the last silently) and runaway nesting.
  XW_RETURN_IF_ERROR(CheckJsonLimits(text, "search config"));
  return doc;
}

Status CheckKeys(const json& obj, const std::string& path,
                 const std::set<std::string>& allowed, ValueText text) {
  if (!obj.is_object())
    return BadField(path.empty() ? "document" : path,
                    "expected an object, got " + ShownValue(obj, text));
  for (const auto& [key, value] : obj.items()) {
    if (!allowed.count(key)) {
      return BadField(path.empty() ? key : path + "." + key, "unknown key");
    }
  }
  return Status::OK();
}

Result<double> GetNumber(const json& v, const std::string& path,
                         ValueText text) {
  XW_RETURN_IF_ERROR(Expect(v.is_number(), v, path, "a number", text));
  return v.get<double>();
}

Result<double> GetNumber(const json& v, const std::string& path, double lo,
                         double hi) {
  XW_ASSIGN_OR_RETURN(const double d, GetNumber(v, path, ValueText::kShort));
  if (!(std::isfinite(d) && d >= lo && d <= hi)) {
    return BadField(path, "value " + Num(d) + " is outside [" + Num(lo) + ", " +
                              Num(hi) + "]");
  }
  return d;
}

Result<int64_t> GetIntegerLiteral(const json& v, const std::string& path,
                                  ValueText text) {
  XW_RETURN_IF_ERROR(
      Expect(v.is_number_integer(), v, path, "an integer", text));
  return v.get<int64_t>();
}

Result<int64_t> GetInt(const json& v, const std::string& path, int64_t lo,
                       int64_t hi) {
  const bool integral =
      v.is_number_integer() ||
      (v.is_number_float() && std::floor(v.get<double>()) == v.get<double>());
  XW_RETURN_IF_ERROR(Expect(integral, v, path, "an integer"));
  if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(hi)) {
    return BadField(
        path, "value " + ShownValue(v) + " is above " + std::to_string(hi));
  }
  const double d = v.get<double>();
  if (d < static_cast<double>(lo) || d > static_cast<double>(hi)) {
    return BadField(path, "value " + ShownValue(v) + " is outside [" +
                              std::to_string(lo) + ", " + std::to_string(hi) +
                              "]");
  }
  return v.is_number_float() ? static_cast<int64_t>(d) : v.get<int64_t>();
}

Result<std::string> GetString(const json& v, const std::string& path) {
  XW_RETURN_IF_ERROR(Expect(v.is_string(), v, path, "a string"));
  return v.get<std::string>();
}

Result<bool> GetBool(const json& v, const std::string& path) {
  XW_RETURN_IF_ERROR(Expect(v.is_boolean(), v, path, "true or false"));
  return v.get<bool>();
}

}  // namespace xw::hpo::internal
