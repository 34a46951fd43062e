#include "bundle_manifest.h"

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <vector>

#include "bundle_sha256.h"

namespace xw::bundle {
namespace {

using json = nlohmann::json;

Status Bad(const std::string& what) {
  return Status::InvalidArgument("manifest.json: " + what);
}

// First pass over untrusted text: enforces depth, string sizes and unique
// keys without building anything, so the DOM pass only sees sane input.
class StrictSax : public nlohmann::json_sax<json> {
 public:
  explicit StrictSax(const ManifestLimits& limits) : limits_(limits) {}
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

  ManifestLimits limits_;
  std::vector<std::set<std::string>> keys_;  // one per open object/array
  std::string error_;
};

// Reads the fields of one JSON object; Finish() rejects fields never asked for.
class Fields {
 public:
  Fields(const json& j, std::string where) : j_(j), where_(std::move(where)) {}

  Result<const json*> Get(const std::string& key, json::value_t type,
                          const char* type_name) {
    used_.insert(key);
    auto it = j_.find(key);
    if (it == j_.end()) return Bad("missing field '" + Name(key) + "'");
    const bool ok =
        type == json::value_t::number_unsigned
            ? it->is_number_unsigned() ||
                  (it->is_number_integer() && it->get<int64_t>() >= 0)
            : it->type() == type;
    if (!ok) return Bad("field '" + Name(key) + "' must be " + type_name);
    return &*it;
  }
  Result<std::string> String(const std::string& key, size_t max_bytes) {
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
  Result<uint64_t> Unsigned(const std::string& key) {
    XW_ASSIGN_OR_RETURN(const json* v, Get(key, json::value_t::number_unsigned,
                                           "a non-negative integer"));
    return v->get<uint64_t>();
  }
  Status Finish() const {
    for (const auto& [key, value] : j_.items()) {
      if (!used_.count(key))
        return Bad("unknown field '" + Name(PrintableName(key)) + "'");
    }
    return Status::OK();
  }
  std::string Name(const std::string& key) const {
    return where_.empty() ? key : where_ + "." + key;
  }

 private:
  const json& j_;
  std::string where_;
  std::set<std::string> used_;
};

Status CheckCreated(const std::string& s) {
  // "YYYY-MM-DDTHH:MM:SSZ"
  static constexpr char kPattern[] = "dddd-dd-ddTdd:dd:ddZ";
  bool ok = s.size() == sizeof(kPattern) - 1;
  for (size_t i = 0; ok && i < s.size(); ++i) {
    ok =
        kPattern[i] == 'd' ? (s[i] >= '0' && s[i] <= '9') : s[i] == kPattern[i];
  }
  return ok ? Status::OK()
            : Bad("field 'created' must be a UTC time "
                  "\"YYYY-MM-DDTHH:MM:SSZ\"");
}

Status ParseMachine(const json& j, BundleManifest* m) {
  if (!j.is_object()) return Bad("field 'machine' must be an object");
  for (const auto& [key, value] : j.items()) {
    if (!value.is_primitive() || value.is_null()) {
      return Bad("field 'machine." + PrintableName(key) +
                 "' must be a string, number or boolean");
    }
  }
  if (!j.contains("isa") || !j["isa"].is_string()) {
    return Bad("field 'machine.isa' must be a string");
  }
  m->machine_json = j.dump();
  return Status::OK();
}

Status ParseProfiles(const json& j, BundleManifest* m) {
  for (const auto& [name, def] : j.items()) {
    XW_RETURN_IF_ERROR(ValidateEntryName(name, false, ArchiveLimits{})
                           .WithContext("manifest.json: profile name"));
    if (!def.is_object()) {
      return Bad("field 'profiles." + name + "' must be an object");
    }
    m->profiles[name] = def.dump();
  }
  return Status::OK();
}

Status ParseDataSpecs(const json& j, BundleManifest* m) {
  for (size_t i = 0; i < j.size(); ++i) {
    if (!j[i].is_string() || j[i].get_ref<const std::string&>().empty()) {
      return Bad("field 'data_specs[" + std::to_string(i) +
                 "]' must be a non-empty string");
    }
    m->data_specs.push_back(j[i].get<std::string>());
  }
  return Status::OK();
}

Status ParseFiles(const json& j, BundleManifest* m) {
  std::set<std::string> seen;
  for (size_t i = 0; i < j.size(); ++i) {
    const std::string where = "files[" + std::to_string(i) + "]";
    if (!j[i].is_object())
      return Bad("field '" + where + "' must be an object");
    Fields f(j[i], where);
    BundleFile file;
    XW_ASSIGN_OR_RETURN(file.path, f.String("path", 1024));
    XW_ASSIGN_OR_RETURN(file.bytes, f.Unsigned("bytes"));
    XW_ASSIGN_OR_RETURN(file.sha256, f.String("sha256", 64));
    XW_RETURN_IF_ERROR(f.Finish());
    XW_RETURN_IF_ERROR(
        ValidateEntryName(file.path, false, ArchiveLimits{})
            .WithContext("manifest.json: field '" + where + ".path'"));
    if (file.path == kBundleManifestName) {
      return Bad("field '" + where +
                 ".path' must not list manifest.json itself");
    }
    if (!IsSha256Hex(file.sha256)) {
      return Bad("field '" + where +
                 ".sha256' must be 64 lowercase hex digits");
    }
    if (!seen.insert(file.path).second) {
      return Bad("file '" + file.path + "' is listed twice");
    }
    m->files.push_back(std::move(file));
  }
  return Status::OK();
}

Result<BundleManifest> FromJson(const json& j) {
  if (!j.is_object()) return Bad("the top level must be an object");
  Fields f(j, "");
  // Format name and version first: a newer format may have other fields.
  XW_ASSIGN_OR_RETURN(std::string format, f.String("format", 64));
  if (format != kBundleFormatName) {
    return Bad("field 'format' is '" + format + "', expected '" +
               kBundleFormatName + "'");
  }
  XW_ASSIGN_OR_RETURN(uint64_t version, f.Unsigned("format_version"));
  if (version > static_cast<uint64_t>(kBundleFormatVersion)) {
    return Status::NotSupported(
        "manifest.json: bundle format version " + std::to_string(version) +
        " is newer than this xwires reads (" +
        std::to_string(kBundleFormatVersion) + "); upgrade xwires");
  }
  if (version == 0) return Bad("field 'format_version' must be at least 1");
  BundleManifest m;
  m.format_version = static_cast<int>(version);
  XW_ASSIGN_OR_RETURN(m.toolkit_version, f.String("toolkit_version", 64));
  XW_ASSIGN_OR_RETURN(m.created, f.String("created", 64));
  XW_RETURN_IF_ERROR(CheckCreated(m.created));
  XW_ASSIGN_OR_RETURN(m.contributor, f.String("contributor", 256));
  XW_ASSIGN_OR_RETURN(const json* machine,
                      f.Get("machine", json::value_t::object, "an object"));
  XW_RETURN_IF_ERROR(ParseMachine(*machine, &m));
  XW_ASSIGN_OR_RETURN(const json* profiles,
                      f.Get("profiles", json::value_t::object, "an object"));
  XW_RETURN_IF_ERROR(ParseProfiles(*profiles, &m));
  XW_ASSIGN_OR_RETURN(const json* specs,
                      f.Get("data_specs", json::value_t::array, "an array"));
  XW_RETURN_IF_ERROR(ParseDataSpecs(*specs, &m));
  XW_ASSIGN_OR_RETURN(m.trial_count, f.Unsigned("trial_count"));
  XW_ASSIGN_OR_RETURN(const json* files,
                      f.Get("files", json::value_t::array, "an array"));
  XW_RETURN_IF_ERROR(ParseFiles(*files, &m));
  XW_RETURN_IF_ERROR(f.Finish());
  return m;
}

}  // namespace

Result<BundleManifest> ParseManifest(std::string_view text,
                                     const ManifestLimits& limits) {
  if (text.size() > limits.max_bytes) {
    return Bad("larger than the limit of " + std::to_string(limits.max_bytes) +
               " bytes");
  }
  StrictSax sax(limits);
  if (!json::sax_parse(text, &sax) || !sax.error().empty()) {
    return Bad(sax.error().empty() ? "invalid JSON" : sax.error());
  }
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Bad("invalid JSON");
  return FromJson(j);
}

Result<std::string> ManifestToJson(const BundleManifest& m) {
  json j;
  j["format"] = kBundleFormatName;
  j["format_version"] = m.format_version;
  j["toolkit_version"] = m.toolkit_version;
  j["created"] = m.created;
  j["contributor"] = m.contributor;
  j["machine"] = json::parse(m.machine_json, nullptr, false);
  if (j["machine"].is_discarded())
    return Status::InvalidArgument("machine fingerprint is not JSON");
  j["profiles"] = json::object();
  for (const auto& [name, def] : m.profiles) {
    json d = json::parse(def, nullptr, false);
    if (d.is_discarded()) {
      return Status::InvalidArgument("profile '" + name +
                                     "' definition is not JSON");
    }
    j["profiles"][name] = std::move(d);
  }
  j["data_specs"] = m.data_specs;
  j["trial_count"] = m.trial_count;
  j["files"] = json::array();
  for (const BundleFile& f : m.files) {
    j["files"].push_back(
        {{"path", f.path}, {"bytes", f.bytes}, {"sha256", f.sha256}});
  }
  return j.dump(1);
}

Status CheckFilesAgainstManifest(const BundleManifest& m,
                                 const ExtractedArchive& archive) {
  std::map<std::string, const BundleFile*> listed;
  for (const BundleFile& f : m.files) listed[f.path] = &f;
  bool has_manifest = false;
  for (const ExtractedFile& x : archive.files) {
    if (x.name == kBundleManifestName) {
      has_manifest = true;
      continue;
    }
    auto it = listed.find(x.name);
    if (it == listed.end()) {
      return Status::InvalidArgument(
          "file '" + x.name +
          "' is in the archive but not listed in manifest.json");
    }
    const BundleFile& f = *it->second;
    if (x.bytes != f.bytes) {
      return Status::Corruption("file '" + x.name +
                                "': size mismatch (manifest " +
                                std::to_string(f.bytes) + " bytes, archive " +
                                std::to_string(x.bytes) + ")");
    }
    if (x.sha256 != f.sha256) {
      return Status::Corruption("file '" + x.name +
                                "': checksum mismatch (manifest sha256 " +
                                f.sha256 + ", archive " + x.sha256 + ")");
    }
    listed.erase(it);
  }
  if (!has_manifest)
    return Status::InvalidArgument("the archive has no manifest.json");
  if (!listed.empty()) {
    return Status::InvalidArgument(
        "file '" + listed.begin()->first +
        "' is listed in manifest.json but missing from the archive");
  }
  return Status::OK();
}

}  // namespace xw::bundle
