// manifest.json: schema checks on untrusted text and the archive-vs-manifest
// check. Each malformed case must fail with a message naming the field.
#include "dataset/bundle/bundle_manifest.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "dataset/bundle/archive_io.h"
#include "dataset/store/sha256.h"
#include "testing/temp_dir.h"

namespace xw::bundle {
namespace {

using json = nlohmann::json;

json GoodManifest() {
  return {
      {"format", "xwires-bundle"},
      {"format_version", 1},
      {"toolkit_version", "0.1.0"},
      {"created", "2026-11-20T21:50:29Z"},
      {"contributor", "Jane Doe <jane@example.org>"},
      {"machine",
       {{"isa", "x86-64:sse2"}, {"threads", 2}, {"toolkit", "0.1.0"}}},
      {"profiles",
       {{"torch", {{"conv", "im2col"}}}, {"tf", {{"conv", "winograd"}}}}},
      {"data_specs", {"synthetic"}},
      {"search", nullptr},
      {"trial_count", 1},
      {"files",
       {{{"path", "trials.json"}, {"bytes", 2}, {"sha256", Sha256Hex("[]")}}}},
  };
}

void ExpectBad(const json& j, const std::string& part,
               Status::Code code = Status::Code::kInvalidArgument) {
  auto r = ParseManifest(j.dump());
  ASSERT_FALSE(r.ok()) << j.dump();
  EXPECT_EQ(r.status().code(), code) << r.status().ToString();
  EXPECT_NE(r.status().message().find(part), std::string::npos)
      << r.status().message();
}

TEST(BundleManifest, ParsesAndRoundTrips) {
  auto m = ParseManifest(GoodManifest().dump());
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->contributor, "Jane Doe <jane@example.org>");
  EXPECT_EQ(m->trial_count, 1u);
  ASSERT_EQ(m->files.size(), 1u);
  EXPECT_EQ(m->files[0].bytes, 2u);
  EXPECT_EQ(m->profiles.at("tf"), R"({"conv":"winograd"})");
  EXPECT_EQ(json::parse(m->machine_json)["isa"], "x86-64:sse2");
  auto text = ManifestToJson(*m);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(json::parse(*text), GoodManifest());
}

TEST(BundleManifest, RejectsMalformedJson) {
  for (const char* text :
       {"", "{", "{\"format\": }", "[1,2", "{} extra", "\"\xff\""}) {
    auto r = ParseManifest(text);
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_NE(r.status().message().find("manifest.json"), std::string::npos);
  }
  EXPECT_EQ(ParseManifest("[]").status().message(),
            "manifest.json: the top level must be an object");
}

TEST(BundleManifest, RejectsOversizedAndDeepJson) {
  ManifestLimits small;
  small.max_bytes = 100;
  auto r = ParseManifest(GoodManifest().dump(), small);
  EXPECT_NE(r.status().message().find("larger than the limit of 100 bytes"),
            std::string::npos);
  std::string deep = std::string(100000, '[') + std::string(100000, ']');
  r = ParseManifest(deep);
  EXPECT_NE(r.status().message().find("nested deeper than 16"),
            std::string::npos)
      << r.status().message();
  json j = GoodManifest();
  j["contributor"] = std::string(70000, 'c');
  ExpectBad(j, "string longer than 65536");
}

TEST(BundleManifest, RejectsDuplicateKeys) {
  std::string text = GoodManifest().dump();
  text.insert(1, "\"trial_count\":5,");
  auto r = ParseManifest(text);
  EXPECT_NE(r.status().message().find("duplicate key 'trial_count'"),
            std::string::npos)
      << r.status().message();
}

TEST(BundleManifest, RejectsMissingExtraAndMistypedFields) {
  for (const char* field :
       {"format", "format_version", "toolkit_version", "created", "contributor",
        "machine", "profiles", "data_specs", "trial_count", "files"}) {
    json j = GoodManifest();
    j.erase(field);
    ExpectBad(j, std::string("missing field '") + field + "'");
  }
  json j = GoodManifest();
  j["surprise"] = 1;
  ExpectBad(j, "unknown field 'surprise'");
  j = GoodManifest();
  j["trial_count"] = "1";
  ExpectBad(j, "field 'trial_count' must be a non-negative integer");
  j["trial_count"] = -1;
  ExpectBad(j, "field 'trial_count' must be a non-negative integer");
  j["trial_count"] = 1.5;
  ExpectBad(j, "field 'trial_count' must be a non-negative integer");
  j = GoodManifest();
  j["profiles"] = json::array();
  ExpectBad(j, "field 'profiles' must be an object");
  j = GoodManifest();
  j["profiles"]["torch"] = 3;
  ExpectBad(j, "field 'profiles.torch' must be an object");
  j = GoodManifest();
  j["machine"]["isa"] = json::object();
  ExpectBad(j, "field 'machine.isa' must be a string");
  j = GoodManifest();
  j["created"] = "yesterday";
  ExpectBad(j, "field 'created' must be a UTC time");
  j = GoodManifest();
  j["contributor"] = "evil\x1b[2J";
  ExpectBad(j, "field 'contributor' contains a control character");
  j = GoodManifest();
  j["files"][0]["mode"] = 420;
  ExpectBad(j, "unknown field 'files[0].mode'");
  j = GoodManifest();
  j["files"][0]["sha256"] = std::string(64, 'G');
  ExpectBad(j, "field 'files[0].sha256' must be 64 lowercase hex digits");
  j = GoodManifest();
  j["files"][0]["path"] = "../trials.json";
  ExpectBad(j, "'..'");
  j = GoodManifest();
  j["files"].push_back(j["files"][0]);
  ExpectBad(j, "file 'trials.json' is listed twice");
  j = GoodManifest();
  j["format"] = "zip";
  ExpectBad(j, "field 'format' is 'zip'");
}

TEST(BundleManifest, SearchIsNullOrStrictObject) {
  json j = GoodManifest();
  j["search"] = {{"config", {{"arch", "small_cnn"}}},
                 {"space", json::array()},
                 {"objective", "divergence(torch,tf)"},
                 {"status", "done"}};
  auto m = ParseManifest(j.dump());
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ASSERT_TRUE(m->search.has_value());
  EXPECT_EQ(m->search->config_json, R"({"arch":"small_cnn"})");
  EXPECT_EQ(m->search->space_json, "[]");
  auto text = ManifestToJson(*m);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(json::parse(*text), j);
  j["search"]["space"] = 3;
  ExpectBad(j, "field 'search.space' must be an object or array");
  j["search"]["space"] = json::object();
  j["search"]["when"] = "now";
  ExpectBad(j, "unknown field 'search.when'");
  j["search"] = "yes";
  ExpectBad(j, "field 'search' must be an object or null");
}

TEST(BundleManifest, RejectsNewerFormatVersion) {
  // A hand-made version-4 manifest, with a field this build does not know:
  // the version is checked first, and every version above the newest this
  // build reads gets the same "upgrade xwires" answer.
  ASSERT_EQ(kBundleFormatVersion, 3);
  json j = GoodManifest();
  j["format_version"] = 4;
  j["a_field_from_the_future"] = true;
  ExpectBad(j,
            "manifest.json: bundle format version 4 is newer than this xwires "
            "reads (3); upgrade xwires",
            Status::Code::kNotSupported);
  j["format_version"] = uint64_t{1} << 40;
  ExpectBad(j, "version 1099511627776 is newer than this xwires reads (3)",
            Status::Code::kNotSupported);
  for (int version : {1, 2, 3}) {
    json ok = GoodManifest();
    ok["format_version"] = version;
    auto m = ParseManifest(ok.dump());
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    EXPECT_EQ(m->format_version, version);
  }
}

class ManifestFilesTest : public ::testing::Test {
 protected:
  // Extracts an archive of `files` (name -> bytes) plus manifest.json.
  Result<ExtractedArchive> Archive(
      const std::map<std::string, std::string>& files) {
    const std::filesystem::path out =
        std::filesystem::path(root_.path()) / "b.tar.zst";
    auto w = ArchiveWriter::Create(out);
    EXPECT_TRUE(w.ok());
    EXPECT_TRUE((*w)->AddBytes("manifest.json", "{}").ok());
    for (const auto& [name, bytes] : files)
      EXPECT_TRUE((*w)->AddBytes(name, bytes).ok());
    EXPECT_TRUE((*w)->Finish().ok());
    return ExtractArchive(out, std::filesystem::path(root_.path()) / "tmp");
  }
  BundleManifest Manifest() { return *ParseManifest(GoodManifest().dump()); }
  testutil::TempDir root_;
};

TEST_F(ManifestFilesTest, AcceptsExactMatch) {
  auto a = Archive({{"trials.json", "[]"}});
  ASSERT_TRUE(a.ok());
  EXPECT_TRUE(CheckFilesAgainstManifest(Manifest(), *a).ok());
}

TEST_F(ManifestFilesTest, RejectsExtraMissingAndAlteredFiles) {
  auto a = Archive({{"trials.json", "[]"}, {"weights/x.h5", "w"}});
  Status s = CheckFilesAgainstManifest(Manifest(), *a);
  EXPECT_EQ(
      s.message(),
      "file 'weights/x.h5' is in the archive but not listed in manifest.json");
  a = Archive({});
  s = CheckFilesAgainstManifest(Manifest(), *a);
  EXPECT_EQ(s.message(),
            "file 'trials.json' is listed in manifest.json but missing from "
            "the archive");
  a = Archive({{"trials.json", "[1]"}});
  s = CheckFilesAgainstManifest(Manifest(), *a);
  EXPECT_EQ(s.code(), Status::Code::kCorruption);
  EXPECT_NE(s.message().find("size mismatch"), std::string::npos);
  a = Archive({{"trials.json", "{}"}});
  s = CheckFilesAgainstManifest(Manifest(), *a);
  EXPECT_EQ(s.code(), Status::Code::kCorruption);
  EXPECT_NE(s.message().find("file 'trials.json': checksum mismatch"),
            std::string::npos);
}

}  // namespace
}  // namespace xw::bundle
