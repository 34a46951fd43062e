// The module-internal Dataset interface the bundles use (dataset/
// dataset_internal.h): stored profile definitions by model id, and removing a
// search only while no trial refers to it.
#include "dataset_internal.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "test_util.h"
#include "xwires/dataset/dataset.h"

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

TEST_F(DatasetInternalTest, DeleteSearchIfUnusedKeepsSearchesInUse) {
  SearchRecord s;
  s.objective = "abs_acc_diff";
  const int64_t used = *ds_->AddSearch(s);
  const int64_t unused = *ds_->AddSearch(s);
  ASSERT_TRUE(ds_->AddTrial(Trial(1, used)).ok());
  EXPECT_TRUE(internal::DeleteSearchIfUnused(*ds_, used).ok());
  EXPECT_TRUE(internal::DeleteSearchIfUnused(*ds_, unused).ok());
  EXPECT_TRUE(internal::DeleteSearchIfUnused(*ds_, 999).ok());  // unknown id
  auto searches = ds_->Searches();
  ASSERT_TRUE(searches.ok()) << searches.status().ToString();
  ASSERT_EQ(searches->size(), 1u);
  EXPECT_EQ((*searches)[0].id, used);
}

TEST_F(DatasetInternalTest, DeleteSearchIfUnusedRefusesReadOnly) {
  const int64_t id = *ds_->AddSearch(SearchRecord{});
  ds_.reset();
  auto ro = Dataset::Open(dir_, OpenMode::kReadOnly);
  ASSERT_TRUE(ro.ok()) << ro.status().ToString();
  const Status st = internal::DeleteSearchIfUnused(**ro, id);
  EXPECT_EQ(st.code(), Status::Code::kFailedPrecondition) << st.ToString();
  EXPECT_NE(st.message().find("read-only"), std::string::npos) << st.ToString();
  EXPECT_EQ((*ro)->Searches()->size(), 1u);
}

}  // namespace
}  // namespace xw
