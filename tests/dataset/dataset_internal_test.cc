// The store's internal Dataset interface that fsck and the bundles use
// (dataset/store/dataset_internal.h): stored profile definitions by model id,
// every stored trial, a stored trial as a record, and batches that add
// searches, trials and analyses in one transaction.
#include "dataset/store/dataset_internal.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "testing/file_tree.h"
#include "testing/temp_dir.h"
#include "xwires/dataset/query/query.h"
#include "xwires/dataset/store/analysis.h"
#include "xwires/dataset/store/dataset.h"

namespace xw {
namespace {

namespace fs = std::filesystem;

TrialRecord Trial(int seed, std::optional<int64_t> search_id) {
  TrialRecord t;
  t.arch = "simple_cnn";
  t.data_spec = "synthetic";
  t.seed = seed;
  t.search_id = search_id;
  ModelRecord own;
  own.profile = "torch";
  own.profile_json =
      R"({"name": "torch", "seed": )" + std::to_string(seed) + "}";
  own.test_acc = 0.5;
  ModelRecord ext;
  ext.profile = "tensorflow";
  ext.external = true;
  ext.test_acc = 0.25;
  t.models = {own, ext};
  return t;
}

class DatasetInternalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (fs::path(tmp_.path()) / "ds").string();
    auto ds = Dataset::Open(dir_, OpenMode::kCreate);
    ASSERT_TRUE(ds.ok()) << ds.status().ToString();
    ds_ = std::move(ds).value();
  }
  testutil::TempDir tmp_;
  std::string dir_;
  std::unique_ptr<Dataset> ds_;
};

TEST_F(DatasetInternalTest, ModelProfileDefinitionsByModelId) {
  auto empty = internal::ModelProfileDefinitions(*ds_);
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_TRUE(empty->empty());
  const int64_t t1 = *ds_->AddTrial(Trial(1, std::nullopt));
  const int64_t t2 = *ds_->AddTrial(Trial(2, std::nullopt));
  auto defs = internal::ModelProfileDefinitions(*ds_);
  ASSERT_TRUE(defs.ok()) << defs.status().ToString();
  ASSERT_EQ(defs->size(), 4u);
  for (int64_t trial : {t1, t2}) {
    const TrialRow row = *ds_->GetTrial(trial);
    ASSERT_EQ(row.models.size(), 2u);
    const int seed = trial == t1 ? 1 : 2;
    EXPECT_EQ(defs->at(row.models[0].id),
              R"({"name": "torch", "seed": )" + std::to_string(seed) + "}");
    EXPECT_EQ(defs->at(row.models[1].id), "");  // external: no definition
  }
}

TEST_F(DatasetInternalTest, AllTrialsIsTheUnfilteredQuery) {
  auto none = internal::AllTrials(*ds_);
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_TRUE(none->empty());
  for (int seed : {3, 1, 2}) {
    ASSERT_TRUE(ds_->AddTrial(Trial(seed, std::nullopt)).ok());
  }
  auto all = internal::AllTrials(*ds_);
  auto queried = ds_->Query(TrialQuery{});
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  ASSERT_TRUE(queried.ok()) << queried.status().ToString();
  ASSERT_EQ(all->size(), 3u);
  ASSERT_EQ(all->size(), queried->size());
  for (size_t k = 0; k < all->size(); ++k) {
    const TrialRow& a = (*all)[k];
    const TrialRow& q = (*queried)[k];
    EXPECT_EQ(a.id, q.id);
    EXPECT_EQ(a.seed, q.seed);
    EXPECT_EQ(a.created_at, q.created_at);
    ASSERT_EQ(a.models.size(), 2u);
    ASSERT_EQ(a.models.size(), q.models.size());
    for (size_t m = 0; m < a.models.size(); ++m) {
      EXPECT_EQ(a.models[m].id, q.models[m].id);
      EXPECT_EQ(a.models[m].profile, q.models[m].profile);
    }
  }
  EXPECT_EQ((*all)[0].seed, 3);  // id order, not seed order
}

TEST_F(DatasetInternalTest, RecordFromRowGivesTheStoredRecordBack) {
  TrialRecord in = Trial(7, std::nullopt);
  in.lr = 0.01;
  in.models[0].curves = {EpochMetrics{}};
  in.models[0].curves[0].epoch = 1;
  in.models[0].curves[0].train_loss_mean = 1.5;
  const int64_t id = *ds_->AddTrial(in);
  auto profiles = internal::ModelProfileDefinitions(*ds_);
  ASSERT_TRUE(profiles.ok()) << profiles.status().ToString();
  auto out = internal::RecordFromRow(*ds_, *ds_->GetTrial(id), *profiles,
                                     /*curves=*/true, /*weights=*/false);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->arch, in.arch);
  EXPECT_EQ(out->seed, in.seed);
  EXPECT_EQ(out->lr, in.lr);
  ASSERT_EQ(out->models.size(), 2u);
  EXPECT_EQ(out->models[0].profile_json, in.models[0].profile_json);
  EXPECT_EQ(out->models[1].profile_json, "");
  EXPECT_TRUE(out->models[1].external);
  ASSERT_EQ(out->models[0].curves.size(), 1u);
  EXPECT_EQ(out->models[0].curves[0].train_loss_mean, 1.5);
  auto cheap = internal::RecordFromRow(*ds_, *ds_->GetTrial(id), *profiles,
                                       /*curves=*/false, /*weights=*/false);
  ASSERT_TRUE(cheap.ok()) << cheap.status().ToString();
  EXPECT_TRUE(cheap->models[0].curves.empty());
}

AnalysisRecord Compare() {
  AnalysisRecord a;
  a.kind = "compare";
  a.created_at = "2026-01-02T03:04:05Z";
  a.summary = "tensors differ";
  a.result_json = R"({"tier1": {"verdict": "differ"}})";
  return a;
}

TEST_F(DatasetInternalTest, AddBatchStoresSearchTrialsAndAnalysesTogether) {
  const int64_t stored = *ds_->AddTrial(Trial(1, std::nullopt));
  std::vector<TrialRecord> trials = {Trial(2, 999), Trial(3, std::nullopt)};
  internal::BatchExtras x;
  SearchRecord s;
  s.config_json = R"({"b": 1, "a": 2})";
  s.objective = "abs_acc_diff";
  x.searches = {s};
  x.trial_search = {0, std::nullopt};  // overrides trial 0's search_id 999
  x.analyses.push_back({Compare(), {}, {0}});
  AnalysisRecord mi;
  mi.kind = "mi";
  mi.result_json = "{}";
  x.analyses.push_back({mi, {stored}, {1}});
  auto r = internal::AddBatch(*ds_, trials, x);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->trial_ids.size(), 2u);
  EXPECT_EQ(r->searches_added, 1);
  EXPECT_EQ(r->analyses_added, 2);
  const auto searches = *ds_->Searches();
  ASSERT_EQ(searches.size(), 1u);
  EXPECT_EQ(ds_->GetTrial(r->trial_ids[0])->search_id, searches[0].id);
  EXPECT_FALSE(ds_->GetTrial(r->trial_ids[1])->search_id.has_value());
  const auto analyses = *LoadAnalyses(*ds_);
  ASSERT_EQ(analyses.size(), 2u);
  EXPECT_EQ(analyses[0].trial_ids, std::vector<int64_t>{r->trial_ids[0]});
  EXPECT_EQ(analyses[0].result_json, R"({"tier1":{"verdict":"differ"}})");
  EXPECT_EQ(analyses[1].trial_ids,
            (std::vector<int64_t>{stored, r->trial_ids[1]}));

  // The same search (as JSON) is found again, and an analysis equal to a
  // stored one (all its trials stored) is skipped.
  internal::BatchExtras again;
  s.config_json = R"({"a": 2, "b": 1})";
  again.searches = {s};
  again.trial_search = {0};
  again.analyses.push_back({Compare(), {r->trial_ids[0]}, {}});
  auto r2 = internal::AddBatch(*ds_, {Trial(4, std::nullopt)}, again);
  ASSERT_TRUE(r2.ok()) << r2.status().ToString();
  EXPECT_EQ(r2->searches_added, 0);
  EXPECT_EQ(r2->analyses_added, 0);
  EXPECT_EQ(r2->analyses_skipped, 1);
  EXPECT_EQ(ds_->GetTrial(r2->trial_ids[0])->search_id, searches[0].id);
}

TEST_F(DatasetInternalTest, AFailingBatchLeavesNoSearchTrialOrFile) {
  ASSERT_TRUE(ds_->AddTrial(Trial(1, std::nullopt)).ok());
  ds_.reset();
  const std::string before = testutil::HashTree(dir_);
  auto ds = Dataset::Open(dir_, OpenMode::kReadWrite);
  ASSERT_TRUE(ds.ok());
  std::vector<TrialRecord> trials = {Trial(2, std::nullopt)};
  trials[0].models[0].curves = {{1, 2.0, 1.9, 0.2, 2.1, 0.15}};  // an HDF5 file
  internal::BatchExtras x;
  x.searches = {SearchRecord{}};
  x.trial_search = {0};
  // Fails inside the transaction, after the search and the trial rows.
  x.analyses.push_back({Compare(), {4242}, {}});
  auto r = internal::AddBatch(**ds, trials, x);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kNotFound) << r.status().ToString();
  EXPECT_NE(r.status().message().find("no trial with id 4242"),
            std::string::npos)
      << r.status().ToString();
  // Fails before anything is written: a trial index out of range.
  x.analyses = {{Compare(), {}, {5}}};
  r = internal::AddBatch(**ds, trials, x);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("describes trial 5 of 1"),
            std::string::npos)
      << r.status().ToString();
  EXPECT_TRUE((*ds)->Searches()->empty());
  EXPECT_EQ(*(*ds)->Count({}), 1);
  ds->reset();
  EXPECT_EQ(testutil::HashTree(dir_), before);
}

TEST_F(DatasetInternalTest, AddBatchRefusesReadOnly) {
  ds_.reset();
  auto ro = Dataset::Open(dir_, OpenMode::kReadOnly);
  ASSERT_TRUE(ro.ok()) << ro.status().ToString();
  auto r = internal::AddBatch(**ro, {Trial(1, std::nullopt)}, {});
  EXPECT_EQ(r.status().code(), Status::Code::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("read-only"), std::string::npos);
}

}  // namespace
}  // namespace xw
