// Malicious bundles against ImportBundle: each is rejected with an error
// naming the problem, the target dataset is byte-for-byte unchanged, and the
// extraction area is left empty.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>

#include "bundle_test_util.h"
#include "dataset/bundle/bundle_manifest.h"
#include "dataset/bundle/bundle_trials.h"
#include "dataset/store/sha256.h"
#include "testing/file_tree.h"
#include "testing/temp_dir.h"
#include "xwires/core/build_info.h"
#include "xwires/dataset/bundle/bundle.h"
#include "xwires/dataset/store/analysis.h"
#include "xwires/dataset/store/tensor_file.h"

namespace xw {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using testutil::RawEntry;
using testutil::RawKind;
using Entries = std::vector<std::pair<std::string, std::string>>;

TrialRecord SmallTrial(int i) {
  TrialRecord t;
  t.arch = "mlp";
  t.data_spec = "synthetic";
  t.lr = 0.01 * (i + 1);
  t.seed = i;
  t.hparams_json = json{{"lr", t.lr}}.dump();
  for (const char* p : {"torch", "tf"}) {
    ModelRecord m;
    m.profile = p;
    m.profile_json = std::string("{\"name\": \"") + p + "\"}";
    m.test_acc = 0.5 + 0.1 * i;
    m.fingerprint_json = MachineFingerprintJson(1);
    m.curves = {{1, 2.0, 1.9, 0.2, 2.1, 0.15}};
    Tensor w({4}, 0.25f * static_cast<float>(i + 1));
    m.weights.push_back({"fc.weight", w});
    t.models.push_back(std::move(m));
  }
  return t;
}

class BundleAttackTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(tmp_.path());
    tmp_parent_ = root_ / "tmp";
    fs::create_directories(tmp_parent_);
    auto a = Dataset::Open((root_ / "A").string(), OpenMode::kCreate);
    ASSERT_TRUE(a.ok());
    for (int i = 0; i < 2; ++i) ASSERT_TRUE((*a)->AddTrial(SmallTrial(i)).ok());
    const std::string honest = (root_ / "honest.tar.zst").string();
    ASSERT_TRUE(CreateBundle(**a, std::nullopt, {1, 2}, honest).ok());
    entries_ = testutil::ReadArchiveEntries(honest);
    // manifest, trials, analyses, 4 weights, replicas.json
    ASSERT_EQ(entries_.size(), 8u);
    ASSERT_TRUE((*OpenB(OpenMode::kCreate))->AddTrial(SmallTrial(5)).ok());
    // Hashed closed: SQLite then has checkpointed and removed -wal/-shm, which
    // readers touch.
    before_ = testutil::HashTree((root_ / "B").string());
  }

  Result<std::unique_ptr<Dataset>> OpenB(OpenMode mode = OpenMode::kReadWrite) {
    return Dataset::Open((root_ / "B").string(), mode);
  }

  std::string& Entry(const std::string& name) {
    for (auto& [n, bytes] : entries_) {
      if (n == name) return bytes;
    }
    ADD_FAILURE() << "no entry " << name;
    static std::string none;
    return none;
  }

  // Re-lists `name` in the manifest with its current size and sha256, so the
  // attack reaches the checks behind the checksums.
  void Relist(const std::string& name) {
    json m = json::parse(Entry("manifest.json"));
    for (json& f : m["files"]) {
      if (f["path"] == name) {
        f["bytes"] = Entry(name).size();
        f["sha256"] = Sha256Hex(Entry(name));
      }
    }
    Entry("manifest.json") = m.dump(1);
  }

  // Packs entries_ (plus `extra` raw entries) and imports it: must fail with
  // `code` and a message containing `part`, leaving B and tmp untouched.
  void ExpectRejected(Status::Code code, const std::string& part,
                      std::vector<RawEntry> extra = {}, const BundleLimits& limits = {}) {
    std::vector<RawEntry> raw;
    for (const auto& [name, bytes] : entries_) raw.push_back(testutil::File(name, bytes));
    raw.insert(raw.end(), extra.begin(), extra.end());
    const std::string path = (root_ / ("evil" + std::to_string(n_++) + ".tar.zst")).string();
    testutil::WriteRawArchive(path, raw);
    BundleImportOptions o;
    o.temp_dir = tmp_parent_.string();
    o.limits = limits;
    {
      auto b = OpenB();
      ASSERT_TRUE(b.ok());
      auto r = ImportBundle(**b, path, BundleCheckers{}, o);
      ASSERT_FALSE(r.ok()) << "imported " << path;
      EXPECT_EQ(r.status().code(), code) << r.status().ToString();
      EXPECT_NE(r.status().message().find(part), std::string::npos)
          << "'" << part << "' not in: " << r.status().message();
    }
    EXPECT_EQ(testutil::HashTree((root_ / "B").string()), before_);
    EXPECT_TRUE(testutil::ListTree(tmp_parent_.string()).empty());
    EXPECT_FALSE(fs::exists(root_ / "evil"));
  }

  testutil::TempDir tmp_;
  fs::path root_, tmp_parent_;
  Entries entries_;
  std::string before_;
  int n_ = 0;
};

TEST_F(BundleAttackTest, HonestBundleImports) {
  const std::string path = (root_ / "repacked.tar.zst").string();
  std::vector<RawEntry> raw;
  for (const auto& [name, bytes] : entries_) raw.push_back(testutil::File(name, bytes));
  testutil::WriteRawArchive(path, raw, testutil::RawFilter::kGzip);  // gzip is accepted
  auto r = ImportBundle(**OpenB(), path, BundleCheckers{});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->added, 2);
}

TEST_F(BundleAttackTest, PathsThatEscape) {
  ExpectRejected(Status::Code::kInvalidArgument, "'../evil': '..' component",
                 {testutil::File("../evil", "x")});
  ExpectRejected(Status::Code::kInvalidArgument, "absolute path",
                 {testutil::File((root_ / "evil").string(), "x")});
}

TEST_F(BundleAttackTest, LinksAndDevices) {
  ExpectRejected(Status::Code::kInvalidArgument, "'weights/x': symbolic link",
                 {testutil::Special(RawKind::kSymlink, "weights/x", "/etc/passwd")});
  ExpectRejected(Status::Code::kInvalidArgument, "'y': hard link",
                 {testutil::Special(RawKind::kHardlink, "y", "trials.json")});
  ExpectRejected(Status::Code::kInvalidArgument, "'dev': character device",
                 {testutil::Special(RawKind::kCharDevice, "dev")});
  ExpectRejected(Status::Code::kInvalidArgument, "'fifo': fifo",
                 {testutil::Special(RawKind::kFifo, "fifo")});
}

TEST_F(BundleAttackTest, DuplicateEntries) {
  ExpectRejected(Status::Code::kInvalidArgument, "'trials.json': duplicate entry",
                 {testutil::File("trials.json", "[]")});
}

TEST_F(BundleAttackTest, SizeLimitsAndBombs) {
  BundleLimits small;
  small.max_file_bytes = 1000;
  ExpectRejected(Status::Code::kInvalidArgument, "larger than the limit of 1000 bytes", {},
                 small);
  BundleLimits total;
  total.max_total_bytes = 1 << 20;
  ExpectRejected(Status::Code::kInvalidArgument, "'zeros': the archive decompresses to more",
                 {testutil::Zeros("zeros", 2 << 20)}, total);
  BundleLimits entries;
  entries.max_entries = 5;
  ExpectRejected(Status::Code::kInvalidArgument, "more than 5 entries", {}, entries);
}

TEST_F(BundleAttackTest, FilesMissingOrExtra) {
  ExpectRejected(Status::Code::kInvalidArgument,
                 "file 'notes.txt' is in the archive but not listed in manifest.json",
                 {testutil::File("notes.txt", "hi")});
  entries_.erase(entries_.begin() + 3);
  ExpectRejected(Status::Code::kInvalidArgument,
                 "is listed in manifest.json but missing from the archive");
}

TEST_F(BundleAttackTest, ChecksumMismatch) {
  std::string& trials = Entry("trials.json");
  const size_t p = trials.find("\"seed\":0");
  ASSERT_NE(p, std::string::npos);
  trials[p + 7] = '9';  // same size, other bytes
  ExpectRejected(Status::Code::kCorruption, "file 'trials.json': checksum mismatch");
}

TEST_F(BundleAttackTest, MalformedOversizedOrNewerManifest) {
  const std::string good = Entry("manifest.json");
  Entry("manifest.json") = good.substr(0, good.size() / 2);
  ExpectRejected(Status::Code::kInvalidArgument, "manifest.json: invalid JSON");
  Entry("manifest.json") = good + std::string(17 << 20, ' ');
  ExpectRejected(Status::Code::kInvalidArgument, "manifest.json: larger than the limit");
  json m = json::parse(good);
  m["format_version"] = kBundleFormatVersion + 1;
  Entry("manifest.json") = m.dump();
  ExpectRejected(Status::Code::kNotSupported, "newer than this xwires reads");
  m = json::parse(good);
  m["files"][0]["owner"] = "root";
  Entry("manifest.json") = m.dump();
  ExpectRejected(Status::Code::kInvalidArgument, "unknown field 'files[0].owner'");
  m = json::parse(good);
  m["trial_count"] = "2";
  Entry("manifest.json") = m.dump();
  ExpectRejected(Status::Code::kInvalidArgument, "'trial_count' must be a non-negative integer");
}

TEST_F(BundleAttackTest, TrialsThatDoNotMatchTheirHashes) {
  // A metric changed, the manifest checksum updated: content_sha256 catches it.
  std::string& trials = Entry("trials.json");
  const size_t p = trials.find("\"seed\":0");
  trials[p + 7] = '9';
  Relist("trials.json");
  ExpectRejected(Status::Code::kCorruption, "trial [0]: content_sha256 does not match");
}

TEST_F(BundleAttackTest, ImpossibleValuesWithConsistentChecksums) {
  // An accuracy of 2.5 whose content_sha256 and manifest checksum were both
  // recomputed: every hash agrees, and the store's value gate rejects it.
  auto manifest = bundle::ParseManifest(Entry("manifest.json"));
  ASSERT_TRUE(manifest.ok()) << manifest.status().ToString();
  auto trials = bundle::ParseTrialsJson(Entry("trials.json"), *manifest);
  ASSERT_TRUE(trials.ok()) << trials.status().ToString();
  bundle::BundleTrial& t = (*trials)[0];
  t.record.models[1].test_acc = 2.5;
  t.record.divergence = 2.0;
  t.content_sha256 = TrialContentSha256(t.record);
  auto text = bundle::TrialsToJson(*trials);
  ASSERT_TRUE(text.ok());
  Entry("trials.json") = *text;
  Relist("trials.json");
  ExpectRejected(Status::Code::kInvalidArgument,
                 "model 'tf': test_acc 2.5 is not an accuracy in [0, 1]");
}

TEST_F(BundleAttackTest, WeightsAlteredByOneBit) {
  // One bit of one weight flipped and the manifest checksum updated: the
  // weights no longer match weights_sha256 of the trial.
  const std::string name = "weights/0/1.h5";
  const fs::path file = root_ / "w.h5";
  testutil::WriteFileBytes(file.string(), Entry(name));
  NamedTensors w = *ReadTensorFile(file.string());
  uint32_t bits;
  std::memcpy(&bits, w[0].value.data(), 4);
  bits ^= 1u;
  std::memcpy(w[0].value.data(), &bits, 4);
  ASSERT_TRUE(WriteTensorFile(file.string(), w).ok());
  Entry(name) = testutil::ReadFileBytes(file.string());
  Relist(name);
  ExpectRejected(Status::Code::kCorruption,
                 "weights/0/1.h5: the weights do not match weights_sha256 of trial 0 model 'tf'");
}

TEST_F(BundleAttackTest, TamperedOrImpossibleAnalyses) {
  // One byte changed behind the manifest's back.
  const std::string honest = Entry("analyses.json");
  ASSERT_EQ(honest, "[\n]\n");
  Entry("analyses.json") = "[ ]\n";
  ExpectRejected(Status::Code::kCorruption,
                 "file 'analyses.json': checksum mismatch");
  // Consistent checksums, contents the store must refuse.
  const json good = {{"kind", "compare"},
                     {"trials", {1}},
                     {"created_at", "2026-01-02T03:04:05Z"},
                     {"toolkit", "xwires 0.1.0"},
                     {"summary", "tensors differ"},
                     {"result", {{"verdict", "differ"}}},
                     {"runs", json::array()}};
  const json run = {{"knob", ""},          {"direction", "baseline"},
                    {"profile", "torch"},  {"value_json", ""},
                    {"status", "ok"},      {"test_acc", 1.5},
                    {"test_loss", 2.0},    {"weights_sha256", ""}};
  const std::vector<std::pair<std::function<void(json&)>, std::string>> bad = {
      {[](json& a) { a["trials"] = {5}; },
       "analyses.json: field '[0].trials[0]' must be the index of one of the "
       "2 trials"},
      {[](json& a) { a["kind"] = "verify"; }, "kind 'verify'"},
      {[](json& a) { a["trials"] = {0, 1}; },
       "compare result must describe exactly one trial, not 2"},
      {[&](json& a) {
         a["kind"] = "attribute";
         a["runs"] = {run};
       },
       "analysis [0] (attribute): run 0: test_acc 1.5 is not an accuracy"},
      {[](json& a) { a["owner"] = "root"; }, "unknown field '[0].owner'"},
      {[](json& a) { a["result"] = "{}"; }, "'[0].result' must be an object"},
  };
  for (const auto& [edit, part] : bad) {
    json a = good;
    edit(a);
    Entry("analyses.json") = json::array({a}).dump();
    Relist("analyses.json");
    ExpectRejected(Status::Code::kInvalidArgument, part);
  }
  // Format 3 without analyses.json; format 1 (whose trials carry no id)
  // with one.
  const std::string manifest = Entry("manifest.json");
  const std::string trials = Entry("trials.json");
  json m = json::parse(manifest);
  m["format_version"] = 1;
  Entry("manifest.json") = m.dump();
  json v1_trials = json::parse(trials);
  for (json& t : v1_trials) t.erase("id");
  Entry("trials.json") = v1_trials.dump();
  Relist("trials.json");
  Entry("analyses.json") = honest;
  Relist("analyses.json");
  ExpectRejected(Status::Code::kInvalidArgument,
                 "manifest.json lists 'analyses.json', which no model of trials.json uses");
  Entry("trials.json") = trials;
  m = json::parse(manifest);
  json files = json::array();
  for (const json& f : m["files"]) {
    if (f["path"] != "analyses.json") files.push_back(f);
  }
  m["files"] = files;
  Entry("manifest.json") = m.dump();
  const auto all = entries_;
  entries_.erase(entries_.begin() + 2);
  ASSERT_EQ(all[2].first, "analyses.json");
  ExpectRejected(Status::Code::kInvalidArgument,
                 "the bundle (format 3) has no analyses.json");
  // The good analysis next to them imports, on B's copy of the trial.
  entries_ = all;
  Entry("manifest.json") = manifest;
  Entry("analyses.json") = json::array({good}).dump();
  Relist("analyses.json");
  std::vector<RawEntry> raw;
  for (const auto& [name, bytes] : entries_)
    raw.push_back(testutil::File(name, bytes));
  const std::string path = (root_ / "good.tar.zst").string();
  testutil::WriteRawArchive(path, raw);
  auto b = OpenB();
  ASSERT_TRUE(b.ok());
  auto r = ImportBundle(**b, path, BundleCheckers{});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->added, 2);
  EXPECT_EQ(r->analyses_added, 1);
  const auto stored = *LoadAnalyses(**b);
  ASSERT_EQ(stored.size(), 1u);
  EXPECT_EQ(stored[0].trial_ids, std::vector<int64_t>{r->trial_ids[1]});
  EXPECT_EQ(stored[0].result_json, R"({"verdict":"differ"})");
}

}  // namespace
}  // namespace xw
