// --near by index equals --near by scan: same trials, same order, same
// distances to the bit, ties included, on random datasets with duplicated
// and unknown values, after every kind of write (add, delete, update,
// import, merge) and for targets inside and outside the stored ranges.
#include <gtest/gtest.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include <cmath>
#include <functional>
#include <limits>
#include <random>

#include "testing/temp_dir.h"
#include "xwires/dataset/bundle/bundle.h"
#include "xwires/dataset/query/query.h"
#include "xwires/dataset/store/dataset.h"
#include "xwires/dataset/store/fsck.h"

namespace xw {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Hyperparameters drawn like a search, with grids (ties), duplicates and
// unknown values.
std::vector<TrialRecord> RandomTrials(std::mt19937_64& rng, int n) {
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<TrialRecord> out;
  for (int i = 0; i < n; ++i) {
    if (!out.empty() && u(rng) < 0.05) {  // an exact duplicate
      out.push_back(out[static_cast<size_t>(u(rng) * out.size())]);
      continue;
    }
    TrialRecord t;
    t.arch = u(rng) < 0.5 ? "mlp" : "vgg16";
    t.data_spec = "synthetic";
    t.lr = u(rng) < 0.05 ? kNaN : std::pow(10.0, -5 + 4 * u(rng));
    t.adam_eps = u(rng) < 0.3 ? 1e-8 : std::pow(10.0, -8 + 8 * u(rng));
    t.batch_size = u(rng) < 0.03 ? 0 : 16 << static_cast<int>(4 * u(rng));
    t.epochs = 1 + static_cast<int64_t>(5 * u(rng));
    const double w = u(rng);
    t.weight_decay = w < 0.3 ? kNaN : w < 0.6 ? 0.0 : std::pow(10.0, -6 + 5 * u(rng));
    for (const char* p : {"a", "b"}) {
      ModelRecord m;
      m.profile = p;
      m.external = true;
      m.test_acc = 0.1 + 0.8 * u(rng);
      t.models.push_back(std::move(m));
    }
    t.divergence = std::fabs(t.models[0].test_acc - t.models[1].test_acc);
    out.push_back(std::move(t));
  }
  return out;
}

NearTarget RandomTarget(std::mt19937_64& rng) {
  static const std::vector<std::pair<std::string, std::function<double(double)>>>
      kFields = {
          {"lr", [](double x) { return std::pow(10.0, -6 + 6 * x); }},
          {"eps", [](double x) { return std::pow(10.0, -9 + 9 * x); }},
          {"bs", [](double x) { return std::round(8 + 300 * x); }},
          {"epochs", [](double x) { return std::round(7 * x); }},
          {"wd", [](double x) { return x < 0.3 ? 0.0 : 1e-3 * x; }},
      };
  std::uniform_real_distribution<double> u(0, 1);
  NearTarget t;
  while (t.values.empty()) {
    for (const auto& [name, draw] : kFields) {
      if (u(rng) < 0.5) t.values.emplace_back(name, draw(u(rng)));
    }
  }
  return t;
}

// Both plans on `target`; the index must serve it.
void ExpectSame(const Dataset& ds, NearTarget target, int64_t limit) {
  TrialQuery q;
  q.limit = limit;
  target.method = NearMethod::kScan;
  auto scan = ds.Near(target, q);
  target.method = NearMethod::kIndex;
  auto index = ds.Near(target, q);
  ASSERT_TRUE(scan.ok()) << scan.status().ToString();
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  std::string what;
  for (const auto& [name, v] : target.values) what += name + "=" + std::to_string(v) + " ";
  ASSERT_EQ(scan->size(), index->size()) << what;
  for (size_t i = 0; i < scan->size(); ++i) {
    EXPECT_EQ((*scan)[i].trial.id, (*index)[i].trial.id) << what << "row " << i;
    EXPECT_EQ((*scan)[i].distance, (*index)[i].distance) << what << "row " << i;
  }
}

class NearTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = tmp_.path() + "/ds";
    ds_ = Dataset::Open(dir_, OpenMode::kCreate).value();
  }
  void Check(std::mt19937_64& rng, int targets) {
    for (int i = 0; i < targets; ++i) {
      const int64_t limit = i % 4 == 0 ? 1 : i % 4 == 1 ? 10 : i % 4 == 2 ? 57 : -1;
      ExpectSame(*ds_, RandomTarget(rng), limit);
    }
  }
  testutil::TempDir tmp_;
  std::string dir_;
  std::unique_ptr<Dataset> ds_;
};

TEST_F(NearTest, IndexEqualsScanOnRandomDatasets) {
  for (uint64_t seed : {1u, 2u, 3u}) {
    std::mt19937_64 rng(seed);
    ASSERT_TRUE(ds_->AddTrials(RandomTrials(rng, 1500)).ok());
    Check(rng, 40);
  }
  // Many exact ties: the same point 300 times, ranked by id.
  std::mt19937_64 rng(4);
  std::vector<TrialRecord> same(300, RandomTrials(rng, 1)[0]);
  ASSERT_TRUE(ds_->AddTrials(same).ok());
  NearTarget t;
  t.values = {{"lr", same[0].lr}, {"bs", 20.0}};
  ExpectSame(*ds_, t, 100);
  Check(rng, 20);
}

TEST_F(NearTest, IndexFollowsEveryWrite) {
  std::mt19937_64 rng(5);
  ASSERT_TRUE(ds_->AddTrials(RandomTrials(rng, 800)).ok());
  // The extremes move: delete the trial with the largest batch size and the
  // smallest lr (the bounds are recomputed), change another's values.
  {
    SQLite::Database db(dir_ + "/xwires.db", SQLite::OPEN_READWRITE);
    db.exec("PRAGMA foreign_keys = ON");
    db.exec("DELETE FROM trials WHERE id IN (SELECT id FROM trials ORDER BY "
            "batch_size DESC LIMIT 3)");
    db.exec("DELETE FROM trials WHERE id = (SELECT id FROM trials WHERE lr "
            "IS NOT NULL ORDER BY lr LIMIT 1)");
    db.exec("UPDATE trials SET lr = 0.5, batch_size = 4096, weight_decay = "
            "NULL WHERE id = 7");
  }
  Check(rng, 30);
  // Imports and merges go through the same triggers.
  std::unique_ptr<Dataset> other = Dataset::Open(tmp_.path() + "/other",
                                                  OpenMode::kCreate).value();
  ASSERT_TRUE(other->AddTrials(RandomTrials(rng, 500)).ok());
  ASSERT_TRUE(MergeDatasets(*ds_, *other).ok());
  Check(rng, 20);
  const std::string bundle = tmp_.path() + "/b.tar.zst";
  std::unique_ptr<Dataset> third = Dataset::Open(tmp_.path() + "/third",
                                                  OpenMode::kCreate).value();
  auto ids = *third->AddTrials(RandomTrials(rng, 50));
  ASSERT_TRUE(CreateBundle(*third, std::nullopt, ids, bundle).ok());
  ASSERT_TRUE(ImportBundle(*ds_, bundle, BundleCheckers{}).ok());
  Check(rng, 20);
  SQLite::Database db(dir_ + "/xwires.db");
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM trials_near").getInt64(),
            *ds_->Count({}));
  EXPECT_EQ(db.execAndGet("SELECT sum(n) FROM trials_near_bounds").getInt64(),
            *ds_->Count({}));
}

TEST_F(NearTest, FsckFindsAndRebuildsADamagedIndex) {
  std::mt19937_64 rng(7);
  ASSERT_TRUE(ds_->AddTrials(RandomTrials(rng, 400)).ok());
  ds_.reset();
  EXPECT_TRUE(Fsck(dir_, {})->Clean());
  {
    // What a writer that bypassed the triggers would leave.
    SQLite::Database db(dir_ + "/xwires.db", SQLite::OPEN_READWRITE);
    db.exec("DELETE FROM trials_near WHERE id % 3 = 0");
    db.exec("UPDATE trials_near_bounds SET lo0 = lo0 / 2");
  }
  auto r = Fsck(dir_, {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->issues.size(), 1u);
  EXPECT_EQ(r->issues[0].kind, "near-index");
  EXPECT_NE(r->issues[0].detail.find("133 trial(s) without a box"),
            std::string::npos)
      << r->issues[0].detail;
  FsckOptions repair;
  repair.repair = true;
  r = Fsck(dir_, repair);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->Clean());
  EXPECT_TRUE(Fsck(dir_, {})->Clean());
  ds_ = Dataset::Open(dir_, OpenMode::kReadOnly).value();
  Check(rng, 20);
}

TEST_F(NearTest, FiltersAndUnindexedFieldsUseTheScan) {
  std::mt19937_64 rng(6);
  ASSERT_TRUE(ds_->AddTrials(RandomTrials(rng, 300)).ok());
  NearTarget t = *ParseNearTarget("lr=0.01,epochs=3");
  TrialQuery q;
  q.archs = {"mlp"};
  t.method = NearMethod::kIndex;
  auto r = ds_->Near(t, q);
  EXPECT_EQ(r.status().code(), Status::Code::kFailedPrecondition);
  t.method = NearMethod::kAuto;
  auto automatic = ds_->Near(t, q);
  t.method = NearMethod::kScan;
  auto scan = ds_->Near(t, q);
  ASSERT_TRUE(automatic.ok() && scan.ok());
  ASSERT_EQ(automatic->size(), 10u);
  for (size_t i = 0; i < scan->size(); ++i) {
    EXPECT_EQ((*automatic)[i].trial.id, (*scan)[i].trial.id);
    EXPECT_EQ((*automatic)[i].trial.arch, "mlp");
  }
  NearTarget beta = *ParseNearTarget("beta1=0.9");
  beta.method = NearMethod::kIndex;
  EXPECT_EQ(ds_->Near(beta, {}).status().code(),
            Status::Code::kFailedPrecondition);
  // An empty dataset, a zero limit, a target off the log scale.
  std::unique_ptr<Dataset> empty = Dataset::Open(tmp_.path() + "/empty",
                                                  OpenMode::kCreate).value();
  t.method = NearMethod::kIndex;
  EXPECT_TRUE(empty->Near(t, {})->empty());
  TrialQuery none;
  none.limit = 0;
  EXPECT_TRUE(ds_->Near(t, none)->empty());
  NearTarget bad = *ParseNearTarget("lr=-1");
  EXPECT_NE(ds_->Near(bad, {}).status().message().find("must be a finite"),
            std::string::npos);
}

}  // namespace
}  // namespace xw
