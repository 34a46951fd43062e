// Degenerate-model flags (degenerate.h) of trials as the trainer records
// them: the facts in extra_json, the query fields in SQL and the C++ flags
// agree, and trials stored without the facts fall back to data_spec and the
// final losses.
#include "xwires/dataset/store/degenerate.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "testing/temp_dir.h"
#include "xwires/dataset/query/query.h"
#include "xwires/dataset/query/stats.h"
#include "xwires/dataset/store/dataset.h"

namespace xw {
namespace {

// A two-model trial on synthetic data (10 classes, 1000 test examples:
// chance threshold 0.1 + 3 sqrt(0.09/1000) = 0.12846).
TrialRecord Trial(double acc_b, double peak_loss_b, const char* status_b = "ok") {
  TrialRecord t;
  t.arch = "mlp";
  t.data_spec = "synthetic";
  t.hparams_json = "{\"test_limit\": -1}";
  t.provenance = "degenerate_test";
  for (int i = 0; i < 2; ++i) {
    ModelRecord m;
    m.profile = i == 0 ? "torch" : "tf";
    m.profile_json = "{\"name\": \"" + m.profile + "\"}";
    m.status = i == 0 ? "ok" : status_b;
    m.test_acc = i == 0 ? 0.6 : acc_b;
    m.fingerprint_json = "{}";
    EpochMetrics e1{1, 2.0, 1.9, 0.3, 2.1, 0.3};
    EpochMetrics e2{2, 1.2, 1.1, 0.6, 1.3, m.test_acc};
    if (i == 1) e1.train_loss_last = peak_loss_b;  // one batch exploded
    m.curves = {e1, e2};
    m.train_loss = e2.train_loss_mean;
    m.test_loss = e2.test_loss;
    t.models.push_back(std::move(m));
  }
  t.divergence = std::fabs(0.6 - acc_b);
  return t;
}

TEST(DegenerateTest, TrainedTrialsQueryAndCxxAgree) {
  testutil::TempDir tmp;
  auto ds = Dataset::Open(tmp.path() + "/ds", OpenMode::kCreate).value();
  struct Case {
    double acc_b, peak_b;
    const char* status_b;
    int collapsed, at_chance;
  } cases[] = {
      {0.5, 3.0, "ok", 0, 0},         // healthy
      {0.128, 3.0, "ok", 0, 1},       // just under the chance threshold
      {0.129, 3.0, "ok", 0, 0},       // just over it
      {0.5, 23.1, "ok", 1, 0},        // a batch loss above 10 ln(10)
      {0.5, 23.0, "ok", 0, 0},        // just under
      {0.5, 5.85e19, "ok", 1, 0},     // CrossedWires' largest (a stored ok run)
      {0.1, 2.3, "diverged", 1, 1},   // the trainer's diverged status
  };
  std::vector<int64_t> ids;
  for (const Case& c : cases) {
    TrialRecord t = Trial(c.acc_b, c.peak_b, c.status_b);
    RecordDegeneracyFacts(&t, 10, 1000);  // as TrainTrial does
    ids.push_back(ds->AddTrial(t).value());
  }
  for (size_t i = 0; i < std::size(cases); ++i) {
    SCOPED_TRACE(i);
    const TrialRow row = ds->GetTrial(ids[i]).value();
    const ModelFlags f = TrialFlags(DegenerateFlags(row));
    EXPECT_EQ(f.collapsed, cases[i].collapsed);
    EXPECT_EQ(f.at_chance, cases[i].at_chance);
    TrialQuery q;
    q.where = "id = " + std::to_string(ids[i]) + " and collapsed = " +
              std::to_string(cases[i].collapsed) +
              " and at_chance = " + std::to_string(cases[i].at_chance);
    EXPECT_EQ(ds->Count(q).value(), 1);
  }
  TrialQuery clean;
  clean.exclude_degenerate = true;
  EXPECT_EQ(ds->Count(clean).value(), 3);
  // Sorting by a flag works like any numeric field.
  TrialQuery sorted;
  sorted.order_by = {"-collapsed", "id"};
  EXPECT_EQ(ds->Query(sorted).value().front().id, ids[3]);
  // The table columns.
  const Table t = TrialsTable(ds->Query({}).value());
  ASSERT_GE(t.columns.size(), 2u);
  EXPECT_EQ(t.columns[t.columns.size() - 2], "collapsed");
  EXPECT_EQ(t.columns.back(), "at_chance");
}

TEST(DegenerateTest, WithoutFactsFallsBackToDataSpecAndFinalLosses) {
  testutil::TempDir tmp;
  auto ds = Dataset::Open(tmp.path() + "/ds", OpenMode::kCreate).value();
  // No RecordDegeneracyFacts: test set from data_spec + test_limit (200
  // examples: threshold 0.1 + 3 sqrt(0.09/200) = 0.16364), peak unknown, so
  // the batch loss of 100 in the curves is not seen; the final losses are.
  TrialRecord t = Trial(0.16, 100.0);
  t.hparams_json = "{\"test_limit\": 200}";
  const int64_t a = ds->AddTrial(t).value();
  t = Trial(0.17, 100.0);
  t.hparams_json = "{\"test_limit\": 200}";
  t.models[1].test_loss = 30.0;
  const int64_t b = ds->AddTrial(t).value();
  t = Trial(0.05, 2.0);
  t.data_spec = "imagenet:/data";  // unknown test set: at_chance unknown
  const int64_t c = ds->AddTrial(t).value();
  const ModelFlags fa = TrialFlags(DegenerateFlags(ds->GetTrial(a).value()));
  const ModelFlags fb = TrialFlags(DegenerateFlags(ds->GetTrial(b).value()));
  const ModelFlags fc = TrialFlags(DegenerateFlags(ds->GetTrial(c).value()));
  EXPECT_EQ(fa.collapsed, 0);
  EXPECT_EQ(fa.at_chance, 1);
  EXPECT_EQ(fb.collapsed, 1);
  EXPECT_EQ(fb.at_chance, 0);
  EXPECT_EQ(fc.collapsed, -1);
  EXPECT_EQ(fc.at_chance, -1);
  TrialQuery q;
  q.where = "at_chance is null and collapsed is null";
  EXPECT_EQ(ds->Count(q).value(), 1);
  q.where = "at_chance = 1";
  EXPECT_EQ(ds->Count(q).value(), 1);
  q.where = "collapsed = 1";
  EXPECT_EQ(ds->Count(q).value(), 1);
  // Unknown flags do not exclude.
  TrialQuery clean;
  clean.exclude_degenerate = true;
  EXPECT_EQ(ds->Count(clean).value(), 1);
}

TEST(DegenerateTest, FactsKeepOtherKeysAndRecordNonFinitePeaks) {
  TrialRecord t = Trial(0.5, 3.0);
  t.extra_json = "{\"source\": \"x\"}";
  const std::vector<std::optional<double>> peaks = {
      std::numeric_limits<double>::quiet_NaN(), std::nullopt};
  RecordDegeneracyFacts(&t, 10, 10000, &peaks);
  EXPECT_EQ(t.extra_json,
            "{\"source\":\"x\",\"test_set\":{\"classes\":10,\"examples\":10000},"
            "\"loss_peak\":{\"torch\":\"nan\"}}");
  EXPECT_FALSE(LossPeak({}, true).has_value());
  EXPECT_TRUE(std::isnan(*LossPeak({1.0, NAN, 2.0}, false)));
  EXPECT_EQ(*LossPeak({1.0, NAN, 2.0}, true), 2.0);
}

}  // namespace
}  // namespace xw
