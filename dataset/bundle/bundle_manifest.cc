#include "bundle_manifest.h"

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <vector>

#include "bundle_json.h"
#include "dataset/store/sha256.h"

namespace xw::bundle {
namespace {

using json = nlohmann::json;

constexpr char kFile[] = "manifest.json";

Status Bad(const std::string& what) {
  return Status::InvalidArgument(std::string(kFile) + ": " + what);
}

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
    JsonFields f(j[i], kFile, where);
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

Status ParseSearch(const json& j, BundleManifest* m) {
  if (j.is_null()) return Status::OK();
  if (!j.is_object()) return Bad("field 'search' must be an object or null");
  JsonFields f(j, kFile, "search");
  SearchRecord s;
  for (const char* key : {"config", "space"}) {
    XW_ASSIGN_OR_RETURN(const json* it, f.Any(key));
    if (!it->is_object() && !it->is_array()) {
      return Bad("field 'search." + std::string(key) +
                 "' must be an object or array");
    }
    (std::string(key) == "config" ? s.config_json : s.space_json) = it->dump();
  }
  XW_ASSIGN_OR_RETURN(s.objective, f.String("objective", 256));
  XW_ASSIGN_OR_RETURN(s.status, f.String("status", 64));
  XW_RETURN_IF_ERROR(f.Finish());
  m->search = std::move(s);
  return Status::OK();
}

Result<BundleManifest> FromJson(const json& j) {
  if (!j.is_object()) return Bad("the top level must be an object");
  JsonFields f(j, kFile, "");
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
  XW_ASSIGN_OR_RETURN(const json* search, f.Any("search"));
  XW_RETURN_IF_ERROR(ParseSearch(*search, &m));
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
  XW_ASSIGN_OR_RETURN(json j, ParseStrictJson(text, limits, kFile));
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
    if (!d.is_object()) {
      return Status::InvalidArgument("profile '" + name +
                                     "' definition is not a JSON object");
    }
    j["profiles"][name] = std::move(d);
  }
  j["data_specs"] = m.data_specs;
  j["search"] = nullptr;
  if (m.search) {
    json config = json::parse(m.search->config_json, nullptr, false);
    json space = json::parse(m.search->space_json, nullptr, false);
    if (config.is_discarded() || space.is_discarded()) {
      return Status::InvalidArgument(
          "search configuration or space is not JSON");
    }
    j["search"] = {{"config", std::move(config)},
                   {"space", std::move(space)},
                   {"objective", m.search->objective},
                   {"status", m.search->status}};
  }
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
