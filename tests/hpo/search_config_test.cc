#include "xwires/hpo/search_config.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

namespace xw::hpo {
namespace {

std::string ErrorOf(const std::string& json) {
  auto c = ParseSearchConfigJson(json);
  EXPECT_FALSE(c.ok()) << json;
  return c.ok() ? "" : c.status().message();
}

TEST(SearchConfig, EmptyDocumentGivesTheStudyDefaults) {
  auto c = ParseSearchConfigJson("{}");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->space, DefaultSearchSpace());
  EXPECT_EQ(c->profiles[0], "torch");
  EXPECT_EQ(c->profiles[1], "tf");
  EXPECT_EQ(c->objective, Objective::kAbsAccDiff);
  EXPECT_EQ(c->trials_per_subspace, 25);
  EXPECT_EQ(c->overlap, 0.5);
  EXPECT_FALSE(c->no_subspaces);
  EXPECT_EQ(c->optimizer.acquisition, AcquisitionKind::kGpHedge);
  EXPECT_EQ(c->optimizer.n_initial_points, 10);
  EXPECT_EQ(c->optimizer.n_candidates, 10000);
  EXPECT_EQ(NumSearchSubspaces(*c), 16);
}

TEST(SearchConfig, ParsesEveryKey) {
  const std::string doc = R"({
    "dimensions": [{"name": "lr", "type": "real", "low": 1e-5, "high": 1e-1, "log": true},
                   {"name": "epochs", "type": "integer", "low": 1, "high": 8}],
    "arch": "tiny_mlp", "profiles": ["reference", "tf"],
    "data": {"spec": "mnist:/data/mnist", "train_limit": 2000, "test_limit": 500},
    "objective": "max_class_gap", "budget": {"max_trials": 40, "max_seconds": 300},
    "trials_per_subspace": 10, "no_subspaces": false, "overlap": 0.25, "log_split": "linear",
    "seed": 99, "acquisition": "EI", "xi": 0.05, "kappa": 2.5, "eta": 0.5,
    "initial_design": "sobol", "n_initial_points": 6, "liar": "mean", "noise": 1e-8,
    "n_candidates": 5000, "n_local_starts": 3, "refit_every": 2, "refit_dense_until": 10,
    "restart_every": 6})";
  auto c = ParseSearchConfigJson(doc);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->space.size(), 2);
  EXPECT_EQ(c->space.dim(1).type, DimType::kInteger);
  EXPECT_EQ(c->arch, "tiny_mlp");
  EXPECT_EQ(c->profiles[0], "reference");
  EXPECT_EQ(c->data, "mnist:/data/mnist");
  EXPECT_EQ(c->train_limit, 2000);
  EXPECT_EQ(c->test_limit, 500);
  EXPECT_EQ(c->objective, Objective::kMaxClassGap);
  EXPECT_EQ(c->budget, (SearchBudget{40, 300}));
  EXPECT_EQ(c->log_split, LogSplit::kLinear);
  EXPECT_EQ(c->overlap, 0.25);
  EXPECT_EQ(c->optimizer.seed, 99u);
  EXPECT_EQ(c->optimizer.acquisition, AcquisitionKind::kEI);
  EXPECT_EQ(c->optimizer.acq.kappa, 2.5);
  EXPECT_EQ(c->optimizer.initial_design, InitialDesign::kSobol);
  EXPECT_EQ(c->optimizer.liar, LiarStrategy::kMean);
  EXPECT_FALSE(c->optimizer.gp.fit_noise);
  EXPECT_EQ(c->optimizer.gp.fixed_noise, 1e-8);
  EXPECT_EQ(c->optimizer.refit_every, 2);
  EXPECT_EQ(c->optimizer.restart_every, 6);
  EXPECT_EQ(NumSearchSubspaces(*c), 4);
  // The canonical form parses back to the same configuration.
  auto again = ParseSearchConfigJson(SearchConfigToJson(*c));
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(SearchConfigToJson(*again), SearchConfigToJson(*c));
  EXPECT_EQ(again->space, c->space);
  EXPECT_EQ(again->optimizer.gp.fixed_noise, 1e-8);
}

TEST(SearchConfig, ErrorsNameTheField) {
  EXPECT_NE(ErrorOf(R"({"trials_per_subspace": "ten"})")
                .find("trials_per_subspace: expected an integer"),
            std::string::npos);
  EXPECT_NE(ErrorOf(R"({"overlap": 1.5})")
                .find("overlap: value 1.5 is outside [0, 1]"),
            std::string::npos);
  EXPECT_NE(ErrorOf(R"({"overlpa": 0.5})").find("overlpa: unknown key"),
            std::string::npos);
  EXPECT_NE(
      ErrorOf(
          R"({"dimensions": [{"name": "lr", "low": 0, "high": 1, "log": true}]})")
          .find("dimensions[0]: dimension 'lr': a log dimension needs low > 0"),
      std::string::npos);
  EXPECT_NE(ErrorOf(R"({"dimensions": [{"name": "lr", "high": 1}]})")
                .find("dimensions[0].low: missing"),
            std::string::npos);
  EXPECT_NE(
      ErrorOf(
          R"({"dimensions": [{"name": "a", "low": 0, "high": 1, "typ": "real"}]})")
          .find("dimensions[0].typ: unknown key"),
      std::string::npos);
  EXPECT_NE(
      ErrorOf(
          R"({"dimensions": [{"name": "a", "type": "float", "low": 0, "high": 1}]})")
          .find("dimensions[0].type"),
      std::string::npos);
  EXPECT_NE(ErrorOf(R"({"profiles": ["torch"]})")
                .find("profiles: expected an array of two"),
            std::string::npos);
  EXPECT_NE(ErrorOf(R"({"objective": "kl"})")
                .find("objective: unknown objective 'kl'"),
            std::string::npos);
  EXPECT_NE(ErrorOf(R"({"acquisition": "UCB"})")
                .find("acquisition: unknown acquisition"),
            std::string::npos);
  EXPECT_NE(
      ErrorOf(R"({"noise": "poisson"})").find("noise: expected \"gaussian\""),
      std::string::npos);
  EXPECT_NE(
      ErrorOf(R"({"budget": {"max_trials": -3}})").find("budget.max_trials"),
      std::string::npos);
  EXPECT_NE(
      ErrorOf(R"({"data": {"spec": 5}})").find("data.spec: expected a string"),
      std::string::npos);
  EXPECT_NE(ErrorOf(R"({"seed": 1.5})").find("seed: expected an integer"),
            std::string::npos);
  EXPECT_NE(ErrorOf("[1, 2]").find("document: expected an object"),
            std::string::npos);
  EXPECT_NE(ErrorOf(R"({"arch": "cnn",})").find("JSON syntax error"),
            std::string::npos);
}

TEST(SearchConfig, LoadNamesTheFile) {
  auto missing = LoadSearchConfig("/nonexistent/search.json");
  EXPECT_EQ(missing.status().code(), Status::Code::kNotFound);
  EXPECT_NE(missing.status().message().find("/nonexistent/search.json"),
            std::string::npos);
  const std::string path = ::testing::TempDir() + "/xw_search_config_test.json";
  {
    std::ofstream out(path);
    out << R"({"seed": 7, "liar": "maximum"})";
  }
  auto bad = LoadSearchConfig(path);
  EXPECT_NE(bad.status().message().find(path), std::string::npos);
  EXPECT_NE(bad.status().message().find("liar"), std::string::npos);
  // The file is only read, never rewritten.
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  EXPECT_EQ(text, R"({"seed": 7, "liar": "maximum"})");
  std::remove(path.c_str());
}

TEST(SearchConfig, SubspacesAndTheirSeeds) {
  SearchConfig c;
  auto s3 = SearchSubspace(c, 3);
  ASSERT_TRUE(s3.ok());
  EXPECT_EQ(s3->dim(1).low, 14);  // epochs, high half
  EXPECT_NE(SubspaceOptions(c, 0).seed, SubspaceOptions(c, 1).seed);
  EXPECT_EQ(SubspaceOptions(c, 1).seed, SubspaceOptions(c, 1).seed);
  c.no_subspaces = true;
  EXPECT_EQ(NumSearchSubspaces(c), 1);
  EXPECT_EQ(*SearchSubspace(c, 0), c.space);
  EXPECT_FALSE(SearchSubspace(c, 1).ok());
}

}  // namespace
}  // namespace xw::hpo
