// Strict reader for one JSON object of a profile (private to trainers/).
//
// Every accessor takes a required key; Finish() rejects keys nobody asked
// for. Errors name the full key path ("adam.variant: ..."), so a user editing
// a profile file sees exactly which entry is wrong.
#ifndef XWIRES_TRAINERS_PROFILE_SCHEMA_H_
#define XWIRES_TRAINERS_PROFILE_SCHEMA_H_

#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "xwires/core/status.h"

namespace xw::profile_schema {

class Reader {
 public:
  // `prefix` is the key path of this object ("" at the top, "adam" inside).
  Reader(const nlohmann::ordered_json& obj, std::string prefix)
      : obj_(obj), prefix_(std::move(prefix)) {}

  Status CheckObject() const {
    if (obj_.is_object()) return Status::OK();
    return Status::InvalidArgument((prefix_.empty() ? std::string("profile") : prefix_) +
                                   ": expected a JSON object, got " + obj_.type_name());
  }

  Status Error(const std::string& key, const std::string& what) const {
    return Status::InvalidArgument(Path(key) + ": " + what);
  }

  Status String(const std::string& key, std::string* out) {
    const nlohmann::ordered_json* v = nullptr;
    XW_RETURN_IF_ERROR(Get(key, &v));
    if (!v->is_string()) return TypeError(key, "a string", *v);
    *out = v->get<std::string>();
    return Status::OK();
  }

  Status Bool(const std::string& key, bool* out) {
    const nlohmann::ordered_json* v = nullptr;
    XW_RETURN_IF_ERROR(Get(key, &v));
    if (!v->is_boolean()) return TypeError(key, "true or false", *v);
    *out = v->get<bool>();
    return Status::OK();
  }

  Status Number(const std::string& key, double* out) {
    const nlohmann::ordered_json* v = nullptr;
    XW_RETURN_IF_ERROR(Get(key, &v));
    if (!v->is_number()) return TypeError(key, "a number", *v);
    *out = v->get<double>();
    return Status::OK();
  }

  // An integer in [lo, hi].
  Status Int(const std::string& key, int lo, int hi, int* out) {
    double d = 0;
    XW_RETURN_IF_ERROR(Number(key, &d));
    if (!(d >= lo && d <= hi) || d != static_cast<double>(static_cast<int>(d))) {
      return Error(key, "must be an integer in [" + std::to_string(lo) + ", " +
                            std::to_string(hi) + "], got " + obj_.at(key).dump());
    }
    *out = static_cast<int>(d);
    return Status::OK();
  }

  // Whether an optional key is present (it is then read like a required one).
  bool Has(const std::string& key) const { return obj_.contains(key); }

  // A string that must be one of `choices` (spelling -> value).
  template <typename T>
  Status Enum(const std::string& key, const std::vector<std::pair<std::string, T>>& choices,
              T* out) {
    std::string s;
    XW_RETURN_IF_ERROR(String(key, &s));
    std::string expected;
    for (size_t i = 0; i < choices.size(); ++i) {
      if (choices[i].first == s) {
        *out = choices[i].second;
        return Status::OK();
      }
      expected += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + choices[i].first;
    }
    return Error(key, "unknown value '" + s + "' (expected " + expected + ")");
  }

  // A nested object, parsed by `parse` with its own Reader.
  Status Object(const std::string& key, const std::function<Status(Reader&)>& parse) {
    const nlohmann::ordered_json* v = nullptr;
    XW_RETURN_IF_ERROR(Get(key, &v));
    Reader sub(*v, Path(key));
    XW_RETURN_IF_ERROR(sub.CheckObject());
    return parse(sub);
  }

  // Rejects keys that no accessor consumed.
  Status Finish() const {
    for (const auto& [key, value] : obj_.items()) {
      if (!used_.count(key)) return Error(key, "unknown key");
    }
    return Status::OK();
  }

 private:
  std::string Path(const std::string& key) const {
    return prefix_.empty() ? key : prefix_ + "." + key;
  }
  Status Get(const std::string& key, const nlohmann::ordered_json** v) {
    auto it = obj_.find(key);
    if (it == obj_.end()) return Error(key, "missing (required key)");
    used_.insert(key);
    *v = &*it;
    return Status::OK();
  }
  Status TypeError(const std::string& key, const std::string& expected,
                   const nlohmann::ordered_json& v) const {
    return Error(key,
                 std::string("expected ") + expected + ", got " + v.type_name() + " " + v.dump());
  }

  const nlohmann::ordered_json& obj_;
  std::string prefix_;
  std::set<std::string> used_;
};

}  // namespace xw::profile_schema

#endif  // XWIRES_TRAINERS_PROFILE_SCHEMA_H_
