#include "bundle_json.h"

#include <cmath>
#include <limits>
#include <vector>

#include "archive_io.h"

namespace xw::bundle {
namespace {

using json = nlohmann::json;

// First pass over untrusted text: enforces depth, string sizes and unique
// keys without building anything, so the DOM pass only sees sane input.
class StrictSax : public nlohmann::json_sax<json> {
 public:
  explicit StrictSax(const JsonLimits& limits) : limits_(limits) {}
  const std::string& error() const { return error_; }

  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t& s) override { return CheckString(s, "string"); }
  bool binary(binary_t&) override { return Fail("binary values are not JSON"); }
  bool start_object(std::size_t) override { return Push(); }
  bool end_object() override {
    keys_.pop_back();
    return true;
  }
  bool start_array(std::size_t) override { return Push(); }
  bool end_array() override {
    keys_.pop_back();
    return true;
  }
  bool key(string_t& k) override {
    if (!CheckString(k, "key")) return false;
    if (!keys_.back().insert(k).second) {
      return Fail("duplicate key '" + PrintableName(k) + "'");
    }
    return true;
  }
  bool parse_error(std::size_t, const std::string&,
                   const nlohmann::detail::exception& ex) override {
    return Fail(std::string("invalid JSON: ") + ex.what());
  }

 private:
  bool Fail(std::string e) {
    error_ = std::move(e);
    return false;
  }
  bool Push() {
    if (keys_.size() >= limits_.max_depth) {
      return Fail("nested deeper than " + std::to_string(limits_.max_depth) +
                  " levels");
    }
    keys_.emplace_back();
    return true;
  }
  bool CheckString(const string_t& s, const char* what) {
    if (s.size() > limits_.max_string_bytes) {
      return Fail(std::string(what) + " longer than " +
                  std::to_string(limits_.max_string_bytes) + " bytes");
    }
    return true;
  }

  JsonLimits limits_;
  std::vector<std::set<std::string>> keys_;  // one per open object/array
  std::string error_;
};

}  // namespace

Result<json> ParseStrictJson(std::string_view text, const JsonLimits& limits,
                             const std::string& file) {
  if (text.size() > limits.max_bytes) {
    return Status::InvalidArgument(file + ": larger than the limit of " +
                                   std::to_string(limits.max_bytes) + " bytes");
  }
  StrictSax sax(limits);
  if (!json::sax_parse(text, &sax) || !sax.error().empty()) {
    return Status::InvalidArgument(
        file + ": " + (sax.error().empty() ? "invalid JSON" : sax.error()));
  }
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Status::InvalidArgument(file + ": invalid JSON");
  return j;
}

JsonFields::JsonFields(const json& j, std::string file, std::string where)
    : j_(j), file_(std::move(file)), where_(std::move(where)) {}

Status JsonFields::Bad(const std::string& what) const {
  return Status::InvalidArgument(file_ + ": " + what);
}

std::string JsonFields::Name(const std::string& key) const {
  return where_.empty() ? key : where_ + "." + key;
}

Result<const json*> JsonFields::Get(const std::string& key, json::value_t type,
                                    const char* type_name) {
  used_.insert(key);
  auto it = j_.find(key);
  if (it == j_.end()) return Bad("missing field '" + Name(key) + "'");
  bool ok = it->type() == type;
  if (type == json::value_t::number_unsigned) {
    ok = it->is_number_unsigned() ||
         (it->is_number_integer() && it->get<int64_t>() >= 0);
  } else if (type == json::value_t::number_integer) {
    ok = it->is_number_integer() &&
         (!it->is_number_unsigned() ||
          it->get<uint64_t>() <= uint64_t(std::numeric_limits<int64_t>::max()));
  }
  if (!ok) return Bad("field '" + Name(key) + "' must be " + type_name);
  return &*it;
}

Result<const json*> JsonFields::Any(const std::string& key) {
  used_.insert(key);
  auto it = j_.find(key);
  if (it == j_.end()) return Bad("missing field '" + Name(key) + "'");
  return &*it;
}

Result<std::string> JsonFields::String(const std::string& key,
                                       size_t max_bytes) {
  XW_ASSIGN_OR_RETURN(const json* v,
                      Get(key, json::value_t::string, "a string"));
  const std::string& s = v->get_ref<const std::string&>();
  if (s.size() > max_bytes) {
    return Bad("field '" + Name(key) + "' is longer than " +
               std::to_string(max_bytes) + " bytes");
  }
  for (unsigned char c : s) {
    if (c < 0x20 || c == 0x7f) {
      return Bad("field '" + Name(key) + "' contains a control character");
    }
  }
  return s;
}

Result<uint64_t> JsonFields::Unsigned(const std::string& key) {
  XW_ASSIGN_OR_RETURN(const json* v, Get(key, json::value_t::number_unsigned,
                                         "a non-negative integer"));
  return v->get<uint64_t>();
}

Result<int64_t> JsonFields::Integer(const std::string& key) {
  XW_ASSIGN_OR_RETURN(const json* v,
                      Get(key, json::value_t::number_integer, "an integer"));
  return v->get<int64_t>();
}

Result<bool> JsonFields::Bool(const std::string& key) {
  XW_ASSIGN_OR_RETURN(const json* v,
                      Get(key, json::value_t::boolean, "a boolean"));
  return v->get<bool>();
}

Result<double> JsonFields::Real(const std::string& key) {
  XW_ASSIGN_OR_RETURN(const json* v, Any(key));
  if (v->is_null()) return std::numeric_limits<double>::quiet_NaN();
  if (v->is_number()) return v->get<double>();
  if (v->is_string() && (*v == "inf" || *v == "-inf")) {
    return *v == "inf" ? std::numeric_limits<double>::infinity()
                       : -std::numeric_limits<double>::infinity();
  }
  return Bad("field '" + Name(key) +
             "' must be a number, null, \"inf\" or \"-inf\"");
}

Result<std::optional<int64_t>> JsonFields::IntegerOrNull(
    const std::string& key) {
  used_.insert(key);
  auto it = j_.find(key);
  if (it == j_.end()) return Bad("missing field '" + Name(key) + "'");
  if (it->is_null()) return std::optional<int64_t>();
  XW_ASSIGN_OR_RETURN(int64_t v, Integer(key));
  return std::optional<int64_t>(v);
}

Status JsonFields::Finish() const {
  for (const auto& [key, value] : j_.items()) {
    if (!used_.count(key))
      return Bad("unknown field '" + Name(PrintableName(key)) + "'");
  }
  return Status::OK();
}

json RealJson(double v) {
  if (std::isnan(v)) return nullptr;
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

std::string DumpLenient(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace xw::bundle
