// What a new user types first: `xwires --version`, a search told what to
// train by flags (--arch, --profiles, --data, --train-limit, --test-limit,
// --width) instead of a config file, a search whose pairs share their
// starting weights (train.init_weights), and README's mpirun line exactly as
// written (it must work as root on a 2-core machine).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "analysis_test_util.h"
#include "xwires/dataset/query/query.h"
#include "xwires/dataset/store/dataset.h"

namespace xw {
namespace {

using json = nlohmann::json;
using testing::Cli;

using testing::TempDir;

// Two dimensions (4 subspaces) x 1 trial of an mlp on 200 images: seconds.
std::string WriteSpace(const std::string& dir, json extra = json::object()) {
  json c = {{"dimensions",
             {{{"name", "lr"}, {"type", "real"}, {"low", 1e-4}, {"high", 0.1}, {"log", true}},
              {{"name", "epochs"}, {"type", "integer"}, {"low", 1}, {"high", 1}}}},
            {"train", {{"batch_size", 50}}},
            {"trials_per_subspace", 1},
            {"budget", {{"max_seconds", 0}}}};
  for (auto& [k, v] : extra.items()) {
    if (k == "train") {
      for (auto& [tk, tv] : v.items()) c["train"][tk] = tv;
    } else {
      c[k] = v;
    }
  }
  const std::string path = dir + "/space.json";
  std::ofstream(path) << c.dump();
  return path;
}

json StoredConfig(const std::string& ds_dir) {
  auto ds = Dataset::Open(ds_dir, OpenMode::kReadOnly);
  EXPECT_TRUE(ds.ok()) << ds.status().ToString();
  if (!ds.ok()) return json();
  auto searches = (*ds)->Searches();
  EXPECT_TRUE(searches.ok() && searches->size() == 1u);
  if (!searches.ok() || searches->empty()) return json();
  return json::parse(searches->back().record.config_json);
}

std::vector<TrialRow> Finished(const std::string& ds_dir) {
  auto ds = Dataset::Open(ds_dir, OpenMode::kReadOnly);
  TrialQuery q;
  q.where = "diff >= 0";
  auto rows = (*ds)->Query(q);
  EXPECT_TRUE(rows.ok());
  return rows.ok() ? *rows : std::vector<TrialRow>{};
}

TEST(CliStartTest, VersionFlagPrintsWhatVersionCommandPrints) {
  std::string flag, command;
  ASSERT_EQ(testing::Run(Cli() + " --version", &flag), 0) << flag;
  ASSERT_EQ(testing::Run(Cli() + " version", &command), 0) << command;
  EXPECT_EQ(flag, command);
  EXPECT_EQ(flag.rfind("xwires ", 0), 0u) << flag;
  EXPECT_NE(flag.find("kernels hwy:"), std::string::npos) << flag;
}

TEST(CliStartTest, SearchFlagsSetWhatTheConfigKeysSet) {
  TempDir dir;
  const std::string space = WriteSpace(dir.path()), ds = dir.path() + "/ds";
  std::string out;
  ASSERT_EQ(testing::Run(Cli() + " search --config " + space + " --dataset " + ds +
                    " --arch mlp --profiles torch,reference --data synthetic"
                    " --train-limit 200 --test-limit 100 --width 0.125 --jobs 2"
                    " --quiet 2>&1",
                &out),
            0)
      << out;
  const json c = StoredConfig(ds);
  EXPECT_EQ(c["arch"], "mlp");
  EXPECT_EQ(c["profiles"], json({"torch", "reference"}));
  EXPECT_EQ(c["data"]["spec"], "synthetic");
  EXPECT_EQ(c["data"]["train_limit"], 200);
  EXPECT_EQ(c["data"]["test_limit"], 100);
  EXPECT_EQ(c["train"]["width"], 0.125);
  // The config's other keys are kept.
  EXPECT_EQ(c["train"]["batch_size"], 50);
  EXPECT_EQ(c["trials_per_subspace"], 1);
  const auto rows = Finished(ds);
  ASSERT_EQ(rows.size(), 4u);
  for (const TrialRow& r : rows) {
    EXPECT_EQ(r.arch, "mlp");
    ASSERT_EQ(r.models.size(), 2u);
    EXPECT_EQ(r.models[0].profile, "torch");
    EXPECT_EQ(r.models[1].profile, "reference");
    EXPECT_EQ(json::parse(r.hparams_json)["width"], 0.125);
  }
}

TEST(CliStartTest, BadSearchFlagsNameTheOptionAndCreateNothing) {
  TempDir dir;
  const std::string ds = dir.path() + "/ds";
  const std::string space = WriteSpace(dir.path());
  struct Case {
    std::string args, says;
  } cases[] = {
      {"--profiles torch", "--profiles"},
      {"--profiles torch,tf,reference", "exactly two"},
      {"--arch mlp --width -1", "width must be"},
      {"--arch nosucharch", "nosucharch"},
      {"--data nosuchdata:/x", "nosuchdata"},
      {"--resume 1 --arch mlp", "--arch"},
  };
  for (const Case& k : cases) {
    std::string out;
    EXPECT_EQ(testing::Run(Cli() + " search --config " + space + " --dataset " + ds + " " + k.args +
                      " --quiet 2>&1",
                  &out),
              2)
        << k.args << ": " << out;
    EXPECT_NE(out.find(k.says), std::string::npos) << k.args << ": " << out;
    EXPECT_FALSE(std::filesystem::exists(ds)) << k.args;
  }
  // Width searched and fixed at once is refused.
  const std::string searched = WriteSpace(
      dir.path(),
      {{"dimensions",
        {{{"name", "width"}, {"type", "real"}, {"low", 0.125}, {"high", 0.25}}}}});
  std::string out;
  EXPECT_EQ(testing::Run(Cli() + " search --config " + searched + " --dataset " + ds +
                    " --arch mlp --width 0.5 --quiet 2>&1",
                &out),
            2)
      << out;
  EXPECT_NE(out.find("--width: width is a search dimension"), std::string::npos) << out;
}

TEST(CliStartTest, InitWeightsInASearchConfigStartBothProfilesFromTheFile) {
  TempDir dir;
  const std::string w = dir.path() + "/w", ds = dir.path() + "/ds";
  std::string out;
  // Starting weights of the same mlp (a one-epoch torch run).
  ASSERT_EQ(testing::Run(Cli() + " train --arch mlp --width 0.125 --profiles torch --epochs 1" +
                    " --train-limit 200 --test-limit 100 --out " + w + " --quiet 2>&1",
                &out),
            0)
      << out;
  const std::string init = w + "/torch.h5";
  const std::string space = WriteSpace(
      dir.path(), {{"arch", "mlp"},
                   {"data", {{"train_limit", 200}, {"test_limit", 100}}},
                   {"train", {{"width", 0.125}, {"init_weights", init}}}});
  ASSERT_EQ(testing::Run(Cli() + " search --config " + space + " --dataset " + ds + " --quiet 2>&1", &out),
            0)
      << out;
  EXPECT_EQ(StoredConfig(ds)["train"]["init_weights"], init);
  const auto rows = Finished(ds);
  ASSERT_EQ(rows.size(), 4u);
  for (const TrialRow& r : rows) {
    // The trainer records the file only when it loaded it instead of
    // running the profiles' own initialisers.
    EXPECT_EQ(json::parse(r.hparams_json)["init_weights"], init) << r.hparams_json;
  }
  // The same as a flag; a file that does not fit the architecture is refused
  // before any trial, naming the key.
  const std::string wide = WriteSpace(
      dir.path(), {{"arch", "mlp"},
                   {"data", {{"train_limit", 200}, {"test_limit", 100}}},
                   {"train", {{"width", 0.25}}}});
  EXPECT_EQ(testing::Run(Cli() + " search --config " + wide + " --dataset " + dir.path() + "/ds2" +
                    " --init-weights " + init + " --quiet 2>&1",
                &out),
            2)
      << out;
  EXPECT_NE(out.find("train.init_weights"), std::string::npos) << out;
  EXPECT_EQ(testing::Run(Cli() + " search --config " + wide + " --dataset " + dir.path() + "/ds3" +
                    " --init-weights " + dir.path() + "/missing.h5 --quiet 2>&1",
                &out),
            2)
      << out;
  EXPECT_NE(out.find("missing.h5"), std::string::npos) << out;
  // Not a string: refused as a config key.
  const std::string bad = WriteSpace(dir.path(), {{"train", {{"init_weights", 3}}}});
  EXPECT_EQ(testing::Run(Cli() + " search --config " + bad + " --dataset " + dir.path() + "/ds4" +
                    " --quiet 2>&1",
                &out),
            2)
      << out;
  EXPECT_NE(out.find("train.init_weights"), std::string::npos) << out;
}

// README's mpirun line, typed as written (binary and dataset substituted, a
// tiny budget appended): it must work as root on a 2-core machine.
TEST(CliStartTest, ReadmeMpirunLineRunsAsWritten) {
  std::ifstream in(std::string(XWIRES_SOURCE_DIR) + "/README.md");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string readme = ss.str();
  const std::regex line_re("\\n(mpirun [^\\n]*)\\n");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(readme, m, line_re)) << "README has no mpirun line";
  std::string line = m[1];
  TempDir dir;
  const std::string space = WriteSpace(
      dir.path(), {{"arch", "mlp"},
                   {"data", {{"train_limit", 200}, {"test_limit", 100}}},
                   {"train", {{"width", 0.125}}}});
  line = std::regex_replace(line, std::regex("\\$B"), Cli());
  line = std::regex_replace(line, std::regex("xwires-data"), dir.path() + "/ds");
  std::string out;
  ASSERT_EQ(testing::Run(line + " --config " + space + " 2>&1", &out), 0) << line << "\n" << out;
  EXPECT_NE(out.find("2 ranks"), std::string::npos) << out;
  EXPECT_EQ(Finished(dir.path() + "/ds").size(), 4u) << out;
}

}  // namespace
}  // namespace xw
