// Facts a run did not record stay unrecorded: trials imported from the
// CrossedWires CSVs have no seed (SQL NULL, JSON null, "not recorded") and no
// parameter count (0, shown as "not recorded" / null), through show, export,
// query, and a bundle round trip (create -> verify -> import). A trial without
// a seed is refused by replay instead of being re-trained with seed 0.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "bundle_test_util.h"
#include "dataset/bundle/bundle_manifest.h"
#include "dataset/bundle/bundle_trials.h"
#include "dataset/store/dataset_internal.h"
#include "testing/cli_runner.h"
#include "testing/temp_dir.h"
#include "xwires/dataset/bundle/bundle.h"
#include "xwires/dataset/query/query.h"
#include "xwires/dataset/store/dataset.h"

namespace xw {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using testutil::ShellQuote;
using testutil::Xwires;

class UnrecordedTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testutil::TempDir();
    const std::string csv = Raw("in.csv");
    std::ofstream(csv)
        << "Name,accuracy_diff,pt_test_acc,tf_test_acc,State,adam_epsilon,"
           "batch_size,epochs,learning_rate,pt_average_training_loss,"
           "pt_latest_training_loss,tf_training_loss\n"
           "a,0.1,0.5,0.4,finished,0.1,32,2,0.01,\"[1,NaN]\",\"[1,2]\",[3]\n"
           "b,0.2,0.6,0.4,finished,1e-7,64,2,0.001,[],[],[]\n";
    auto r = Xwires("import-crossedwires " + Path("A") + " " + ShellQuote(csv) +
                    " --arch vgg16");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    r = Xwires("bundle create " + Path("A") + " --trials 1,2 -o " +
               Path("cw.tar.zst") + " --contributor tester");
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::string Raw(const std::string& name) {
    return (fs::path(dir_->path()) / name).string();
  }
  static std::string Path(const std::string& name) {
    return ShellQuote(Raw(name));
  }
  // Every trial of `dir` has no seed and every model no parameter count.
  static void ExpectUnrecorded(const std::string& dir) {
    auto ds = Dataset::Open(dir, OpenMode::kReadOnly);
    ASSERT_TRUE(ds.ok()) << ds.status().ToString();
    auto rows = (*ds)->Query(TrialQuery{});
    ASSERT_TRUE(rows.ok()) << rows.status().ToString();
    ASSERT_EQ(rows->size(), 2u);
    for (const TrialRow& t : *rows) {
      EXPECT_FALSE(t.seed.has_value())
          << t.external_id << " " << t.seed.value_or(-1);
      ASSERT_EQ(t.models.size(), 2u);
      for (const ModelRow& m : t.models) EXPECT_EQ(m.param_count, 0);
    }
    // The column is SQL NULL (not 0).
    auto n =
        Xwires("query " + ShellQuote(dir) + " --where 'seed is null' --count");
    EXPECT_EQ(n.out, "2\n") << n.err;
    n = Xwires("query " + ShellQuote(dir) + " --where 'seed = 0' --count");
    EXPECT_EQ(n.out, "0\n") << n.err;
  }
  static testutil::TempDir* dir_;
};
testutil::TempDir* UnrecordedTest::dir_ = nullptr;

TEST_F(UnrecordedTest, ImportStoresNoSeedAndNoParamCount) {
  ExpectUnrecorded(Raw("A"));
}

TEST_F(UnrecordedTest, ShowAndExportSayNotRecorded) {
  auto r = Xwires("show " + Path("A") + " 1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("seed: not recorded\n"), std::string::npos) << r.out;
  // The params column of both models.
  size_t n = 0;
  for (size_t p = r.out.find("not recorded"); p != std::string::npos;
       p = r.out.find("not recorded", p + 1)) {
    ++n;
  }
  EXPECT_EQ(n, 3u) << r.out;  // seed + 2 models

  r = Xwires("show " + Path("A") + " 1 --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json shown = json::parse(r.out);
  EXPECT_TRUE(shown["seed"].is_null()) << r.out;
  for (const json& m : shown["models"]) EXPECT_TRUE(m["param_count"].is_null());

  r = Xwires("export " + Path("A") + " --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json exported = json::parse(r.out);
  ASSERT_EQ(exported.size(), 2u);
  for (const json& t : exported) {
    EXPECT_TRUE(t["seed"].is_null()) << t.dump();
    for (const json& m : t["models"]) EXPECT_TRUE(m["param_count"].is_null());
  }

  r = Xwires("export " + Path("A") + " --format csv");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string header = r.out.substr(0, r.out.find('\n'));
  EXPECT_NE(header.find(",seed,"), std::string::npos) << header;
  // seed is the 14th column: empty, not 0.
  const std::string row = r.out.substr(header.size() + 1);
  std::vector<std::string> cells;
  std::stringstream ss(row.substr(0, row.find('\n')));
  for (std::string c; std::getline(ss, c, ',');) cells.push_back(c);
  ASSERT_GT(cells.size(), 13u);
  EXPECT_EQ(cells[13], "") << row;
}

TEST_F(UnrecordedTest, BundleRoundTripKeepsTheSeedAbsent) {
  auto r = Xwires("bundle verify " + Path("cw.tar.zst"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("bundle OK"), std::string::npos) << r.out;

  std::string manifest_text, trials_text;
  for (const auto& [name, data] :
       testutil::ReadArchiveEntries(Raw("cw.tar.zst"))) {
    if (name == kBundleManifestName) manifest_text = data;
    if (name == kBundleTrialsName) trials_text = data;
  }
  json trials = json::parse(trials_text);
  ASSERT_EQ(trials.size(), 2u);
  for (const json& t : trials) {
    EXPECT_TRUE(t.contains("seed") && t["seed"].is_null()) << t.dump();
  }

  // The parser accepts null and still rejects wrong types.
  auto manifest = bundle::ParseManifest(manifest_text, {});
  ASSERT_TRUE(manifest.ok()) << manifest.status().ToString();
  auto parsed = bundle::ParseTrialsJson(trials_text, *manifest);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_FALSE((*parsed)[0].record.seed.has_value());
  for (json bad : {json("7"), json(1.5), json(true)}) {
    json t = trials;
    t[0]["seed"] = bad;
    auto p = bundle::ParseTrialsJson(t.dump(), *manifest);
    ASSERT_FALSE(p.ok()) << bad.dump();
    EXPECT_NE(p.status().message().find("seed"), std::string::npos)
        << p.status().ToString();
  }

  r = Xwires("bundle import " + Path("B") + " " + Path("cw.tar.zst"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("added 2 trials, skipped 0"), std::string::npos)
      << r.out;
  ExpectUnrecorded(Raw("B"));
  r = Xwires("bundle import " + Path("B") + " " + Path("cw.tar.zst"));
  EXPECT_NE(r.out.find("added 0 trials, skipped 2"), std::string::npos)
      << r.out;
}

// A trained trial whose seed is gone (hparams included) cannot be replayed:
// verify --replay says so instead of re-training with seed 0.
TEST_F(UnrecordedTest, ReplayRefusesATrialWithoutSeed) {
  auto r = Xwires(
      "train --arch mlp --width 0.25 --train-limit 60 --test-limit 30 "
      "--epochs 1 --threads 1 --quiet --seed 3 --dataset " +
      Path("T"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  TrialRecord t;
  {
    auto ds = Dataset::Open(Raw("T"), OpenMode::kReadOnly);
    ASSERT_TRUE(ds.ok()) << ds.status().ToString();
    auto rows = (*ds)->Query(TrialQuery{});
    ASSERT_TRUE(rows.ok() && rows->size() == 1u);
    EXPECT_EQ((*rows)[0].seed, 3);
    auto profiles = internal::ModelProfileDefinitions(**ds);
    ASSERT_TRUE(profiles.ok());
    auto rec = internal::RecordFromRow(**ds, (*rows)[0], *profiles, true, true);
    ASSERT_TRUE(rec.ok()) << rec.status().ToString();
    t = std::move(*rec);
  }
  ASSERT_EQ(t.seed, 3);
  json hp = json::parse(t.hparams_json);
  hp.erase("seed");
  t.hparams_json = hp.dump();
  t.seed.reset();
  {
    auto ds = Dataset::Open(Raw("U"), OpenMode::kCreate);
    ASSERT_TRUE(ds.ok()) << ds.status().ToString();
    ASSERT_TRUE((*ds)->AddTrial(t).ok());
  }
  r = Xwires("bundle create " + Path("U") + " --trials 1 -o " +
             Path("u.tar.zst"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = Xwires("bundle verify " + Path("u.tar.zst") + " --replay 1 --threads 1");
  EXPECT_NE(r.exit_code, 0) << r.out;
  EXPECT_NE(r.err.find("no recorded seed"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("cannot be replayed"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace xw
