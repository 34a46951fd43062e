// The settings a user gives a search or a training run come back as query
// fields and `stats --by` groups (width, limits, search id, profiles, each
// model's SIMD target), `xwires searches` lists each search with its config,
// progress and best pair, and a fresh dataset's trials are numbered 1, 2, 3,
// ... across searches and runs. Two tiny real searches (one under
// XWIRES_SIMD_TARGET=SSE4) and one training run, through the CLI.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "testing/cli_runner.h"
#include "testing/temp_dir.h"

namespace xw {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

const std::string kBinary = XWIRES_BINARY_DIR "/xwires";

class SearchSettingsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    tmp_ = new testutil::TempDir("xw_search_settings");
    const std::string config = tmp_->Path("tiny.json");
    std::ofstream(config) << json{
        {"arch", "mlp"},
        {"data", {{"train_limit", 200}, {"test_limit", 100}}},
        {"dimensions",
         {{{"name", "lr"}, {"type", "real"}, {"low", 1e-4}, {"high", 0.1}, {"log", true}},
          {{"name", "epochs"}, {"type", "integer"}, {"low", 1}, {"high", 2}}}},
        {"train", {{"width", 0.125}, {"batch_size", 50}}},
        {"trials_per_subspace", 1},
        {"objective", "abs_acc_diff"},  // screened only (no replicas)
        {"budget", {{"max_seconds", 0}}}}.dump();
    // Search 1: 4 subspaces x 1 trial. Search 2: the default space, 3 trials
    // (--max-trials), on the SSE4 kernels. Then a run outside any search.
    ASSERT_EQ(Run("search --config " + config + " --dataset " + Ds() + " --jobs 2 --threads 2 --quiet --top 0"),
              0);
    ASSERT_EQ(Run("search --dataset " + Ds() +
                      " --arch mlp --profiles torch,reference --width 0.25 --train-limit 100"
                      " --test-limit 50 --max-trials 3 --objective abs_acc_diff --jobs 1 --threads 2 --quiet"
                      " --top 0",
                  "XWIRES_SIMD_TARGET=SSE4"),
              0);
    ASSERT_EQ(Run("train --dataset " + Ds() +
                  " --arch mlp --profiles tf,torch --width 0.5 --train-limit 100 --test-limit 50"
                  " --epochs 1 --threads 1 --quiet"),
              0);
  }
  static void TearDownTestSuite() { delete tmp_; }

  static std::string Ds() { return tmp_->Path("ds"); }

  static int Run(const std::string& args, const std::string& env = "") {
    const testutil::CommandResult r = testutil::Run(env + " " + kBinary + " " + args);
    if (r.exit_code != 0) std::cerr << args << ":\n" << r.err;
    return r.exit_code;
  }

  // The parsed `--format json` stdout of a command on the dataset.
  static json Json(const std::string& args) {
    const testutil::CommandResult r = testutil::XwiresMerged(args + " --format json");
    EXPECT_EQ(r.exit_code, 0) << args << "\n" << r.out;
    json j = json::parse(r.out, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << args << "\n" << r.out;
    return j;
  }

  static std::vector<int64_t> Ids(const std::string& where) {
    std::vector<int64_t> ids;
    for (const json& row : Json("query " + Ds() + " --where \"" + where + "\""))
      ids.push_back(row["id"].get<int64_t>());
    return ids;
  }

  static testutil::TempDir* tmp_;
};
testutil::TempDir* SearchSettingsTest::tmp_ = nullptr;

using IdList = std::vector<int64_t>;

TEST_F(SearchSettingsTest, TrialsAreNumberedFromOneAcrossSearchesAndRuns) {
  EXPECT_EQ(Ids(""), (IdList{1, 2, 3, 4, 5, 6, 7, 8}));
}

TEST_F(SearchSettingsTest, StoredSettingsAreQueryFields) {
  EXPECT_EQ(Ids("width == 0.25"), (IdList{5, 6, 7}));
  EXPECT_EQ(Ids("width == 0.125 and train_limit == 200 and test_limit == 100"),
            (IdList{1, 2, 3, 4}));
  EXPECT_EQ(Ids("train_limit == 100 and depth == 0 and dropout == 0.5"), (IdList{5, 6, 7, 8}));
  EXPECT_EQ(Ids("search_id == 2"), (IdList{5, 6, 7}));
  EXPECT_EQ(Ids("search_id is null"), (IdList{8}));
  EXPECT_EQ(Ids("profiles = 'torch,reference'"), (IdList{5, 6, 7}));
  EXPECT_EQ(Ids("profiles = 'tf,torch'"), (IdList{8}));
  EXPECT_EQ(Ids("init_weights is null and data_seed == 0"), (IdList{1, 2, 3, 4, 5, 6, 7, 8}));
  // Each model's machine: the SSE4 search's kernel target, and a profile
  // the trial does not have gives no value.
  EXPECT_EQ(Ids("simd_torch = 'hwy:SSE4'"), (IdList{5, 6, 7}));
  EXPECT_EQ(Ids("simd_reference = 'hwy:SSE4'"), (IdList{5, 6, 7}));
  EXPECT_EQ(Ids("simd_torch != 'hwy:SSE4'"), (IdList{1, 2, 3, 4, 8}));
  EXPECT_EQ(Ids("simd_tf is null"), (IdList{5, 6, 7}));
  // Threads: 2 jobs of 1 thread in search 1, 1 job of 2 in search 2.
  EXPECT_EQ(Ids("cpu_torch is not null and isa_torch is not null and threads_torch == 1"),
            (IdList{1, 2, 3, 4, 8}));
  EXPECT_EQ(Ids("threads_reference == 2"), (IdList{5, 6, 7}));
  // Sorting by a setting.
  const json rows = Json("query " + Ds() + " --sort -width --sort id --limit 2");
  EXPECT_EQ(rows[0]["id"], 8);
  EXPECT_EQ(rows[1]["id"], 5);
}

TEST_F(SearchSettingsTest, StatsGroupByAnySetting) {
  auto groups = [](const json& rows, const std::string& by) {
    std::vector<std::pair<std::string, int64_t>> out;
    for (const json& r : rows) out.emplace_back(r[by].get<std::string>(), r["trials"].get<int64_t>());
    return out;
  };
  using G = std::vector<std::pair<std::string, int64_t>>;
  // Numeric groups in numeric order, then all.
  EXPECT_EQ(groups(Json("stats " + Ds() + " --by width"), "width"),
            (G{{"0.125", 4}, {"0.25", 3}, {"0.5", 1}, {"all", 8}}));
  EXPECT_EQ(groups(Json("stats " + Ds() + " --by search_id"), "search_id"),
            (G{{"1", 4}, {"2", 3}, {"(none)", 1}, {"all", 8}}));
  EXPECT_EQ(groups(Json("stats " + Ds() + " --by profiles"), "profiles"),
            (G{{"tf,torch", 1}, {"torch,reference", 3}, {"torch,tf", 4}, {"all", 8}}));
  const json simd = Json("stats " + Ds() + " --by simd_torch");
  ASSERT_EQ(simd.size(), 3u);  // this machine's target, SSE4, all
  EXPECT_EQ(simd[1]["simd_torch"], "hwy:SSE4");
  EXPECT_EQ(simd[1]["trials"], 3);
}

TEST_F(SearchSettingsTest, SearchesListConfigProgressAndBestPair) {
  const json s = Json("searches " + Ds());
  ASSERT_EQ(s.size(), 2u);
  const json want1 = {{"id", 1},          {"status", "done"},   {"arch", "mlp"},
                      {"profiles", "torch,tf"}, {"data", "synthetic"}, {"train_limit", 200},
                      {"test_limit", 100}, {"width", 0.125},    {"done", 4},
                      {"failed", 0},      {"pending", 0},       {"planned", 4}};
  const json want2 = {{"id", 2},           {"status", "done"},    {"arch", "mlp"},
                      {"profiles", "torch,reference"}, {"train_limit", 100},
                      {"test_limit", 50},  {"width", 0.25},       {"done", 3},
                      {"planned", 3},      {"objective", "abs_acc_diff(torch,reference)"}};
  for (const auto& [row, want] : {std::pair{s[0], want1}, std::pair{s[1], want2}}) {
    for (const auto& [key, value] : want.items()) EXPECT_EQ(row[key], value) << key;
  }
  // The best pair is the search's most divergent finished trial.
  for (int k = 0; k < 2; ++k) {
    const json top = Json("query " + Ds() + " --where \"search_id == " + std::to_string(k + 1) +
                          "\" --sort -diff --sort id --limit 1");
    EXPECT_EQ(s[k]["best_trial"], top[0]["id"]);
    EXPECT_EQ(s[k]["best_diff"], top[0]["diff"]);
  }
}

}  // namespace
}  // namespace xw
