// The filter language (SQL, parameters, error positions) and the query
// engine's results against a brute-force filter over the inserted records.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <set>
#include <sstream>

#include "dataset/query/filter_parser.h"
#include "testing/temp_dir.h"
#include "xwires/dataset/query/export.h"
#include "xwires/dataset/query/query.h"
#include "xwires/dataset/query/stats.h"
#include "xwires/dataset/store/dataset.h"

namespace xw {
namespace {

TEST(FilterParser, BuildsParameterizedSqlAndBox) {
  auto c = filter::Parse("lr >= 1e-3 and batch_size < 500 and diff > 0.3");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->sql, "t.lr >= ? AND t.batch_size < ? AND t.divergence > ?");
  ASSERT_EQ(c->params.size(), 3u);
  EXPECT_EQ(std::get<double>(c->params[0]), 1e-3);
  EXPECT_EQ(std::get<double>(c->params[1]), 500.0);
  EXPECT_EQ(c->lo[filter::kLr], 1e-3);
  EXPECT_EQ(c->hi[filter::kBatchSize], 500.0);
  EXPECT_EQ(c->lo[filter::kDivergence], 0.3);
  EXPECT_TRUE(std::isinf(c->hi[filter::kLr]));
}

TEST(FilterParser, OrAndNotDoNotBoundTheBox) {
  auto c =
      filter::Parse("(lr > 1 or eps < 2) and not epochs = 3 && diff >= .5");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->sql,
            "((t.lr > ? OR t.adam_eps < ?)) AND (NOT t.epochs = ?) AND "
            "t.divergence >= ?");
  EXPECT_TRUE(std::isinf(c->lo[filter::kLr]));
  EXPECT_TRUE(std::isinf(c->lo[filter::kEpochs]));
  EXPECT_EQ(c->lo[filter::kDivergence], 0.5);
}

TEST(FilterParser, AnyFloatSyntax) {
  for (const char* text :
       {"lr > 1e-3", "lr > 1E-3", "lr > .001", "lr > 0.001", "lr > +1e-3",
        "lr > 0x1.0624dd2f1a9fcp-10", "lr>1e-3"}) {
    auto c = filter::Parse(text);
    ASSERT_TRUE(c.ok()) << text << ": " << c.status().ToString();
    EXPECT_NEAR(std::get<double>(c->params[0]), 1e-3, 1e-15) << text;
  }
  auto neg = filter::Parse("seed > -5");
  ASSERT_TRUE(neg.ok());
  EXPECT_EQ(std::get<double>(neg->params[0]), -5.0);
}

TEST(FilterParser, ProfileFieldsBindTheProfileName) {
  auto c = filter::Parse("acc_torch > 0.5 and arch = 'vgg16'");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->sql,
            "(SELECT m.test_acc FROM models m WHERE m.trial_id = t.id AND "
            "m.profile = ?) > ? AND "
            "t.arch = ?");
  ASSERT_EQ(c->params.size(), 3u);
  EXPECT_EQ(std::get<std::string>(c->params[0]), "torch");
  EXPECT_EQ(std::get<std::string>(c->params[2]), "vgg16");
}

TEST(FilterParser, InjectionStaysData) {
  auto c = filter::Parse("arch = \"x' OR 1=1 --\"");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->sql, "t.arch = ?");
  EXPECT_EQ(std::get<std::string>(c->params[0]), "x' OR 1=1 --");
  EXPECT_FALSE(filter::Parse("lr > 1; DROP TABLE trials").ok());
}

void ExpectError(const std::string& text, const std::string& fragment) {
  auto c = filter::Parse(text);
  ASSERT_FALSE(c.ok()) << text;
  EXPECT_EQ(c.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(c.status().message().find(fragment), std::string::npos)
      << text << " -> " << c.status().message();
}

TEST(FilterParser, ErrorsNameFieldOrPosition) {
  ExpectError("lrr > 1", "unknown field 'lrr' at position 1");
  ExpectError("lr > 1 and foo < 2", "unknown field 'foo' at position 12");
  ExpectError("lr 3",
              "expected a comparison operator (<, <=, >, >=, =, !=) after 'lr' "
              "at position 4");
  ExpectError("lr > ",
              "expected a number for field 'lr' at position 6, found end of "
              "expression");
  ExpectError("lr > 1e-3x", "malformed number '1e-3x' at position 6");
  ExpectError("(lr > 1", "missing ')' for '(' at position 1");
  ExpectError("lr > 1)", "unmatched ')' at position 7");
  ExpectError("lr > 1 lr < 2", "unexpected 'lr' at position 8");
  ExpectError("arch = 'vgg", "unterminated string starting at position 8");
  ExpectError("arch > 'a'", "text field 'arch' only supports = and !=");
  ExpectError("lr > 'a'", "expected a number for field 'lr'");
  ExpectError("lr > 1 $ 2", "unexpected character '$' at position 8");
  ExpectError("lr is 3", "expected 'null' after 'is' at position 7");
}

// A dataset of n random trials whose records the test keeps for brute force.
class QueryFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    auto ds = Dataset::Open(tmp_.path() + "/ds", OpenMode::kCreate);
    ASSERT_TRUE(ds.ok()) << ds.status().ToString();
    ds_ = std::move(ds).value();
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> u(0, 1);
    for (int i = 0; i < 400; ++i) {
      TrialRecord t;
      t.arch = i % 3 == 0 ? "vgg16" : "resnet50";
      t.lr = std::pow(10.0, -5 + 4 * u(rng));
      t.adam_eps = std::pow(10.0, -8 + 8 * u(rng));
      t.batch_size = 10 + static_cast<int64_t>(990 * u(rng));
      t.epochs = 1 + static_cast<int64_t>(49 * u(rng));
      t.divergence = i % 37 == 0 ? kUnknown : 0.7 * u(rng) * u(rng);
      // Accuracies whose difference is the divergence (the store checks it).
      const double a = u(rng), d = std::isnan(t.divergence) ? u(rng) - a : t.divergence;
      for (const double acc : {a * (1 - std::fabs(d)), a * (1 - std::fabs(d)) + std::fabs(d)}) {
        ModelRecord m;
        m.profile = t.models.empty() ? "torch" : "tf";
        m.test_acc = acc;
        m.status = i % 50 == 0 ? "diverged" : "ok";
        t.models.push_back(m);
      }
      records_.push_back(t);
    }
    ids_ = ds_->AddTrials(records_).value();
  }

  // Ids of the records satisfying `pred`, ascending.
  std::vector<int64_t> Expected(
      const std::function<bool(const TrialRecord&)>& pred) {
    std::vector<int64_t> out;
    for (size_t i = 0; i < records_.size(); ++i) {
      if (pred(records_[i])) out.push_back(ids_[i]);
    }
    return out;
  }

  std::vector<int64_t> Ids(const TrialQuery& q) {
    auto rows = ds_->Query(q);
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    std::vector<int64_t> out;
    for (const auto& r : *rows) out.push_back(r.id);
    return out;
  }

  testutil::TempDir tmp_;
  std::unique_ptr<Dataset> ds_;
  std::vector<TrialRecord> records_;
  std::vector<int64_t> ids_;
};

TEST_F(QueryFixture, RangeFilterMatchesBruteForce) {
  TrialQuery q;
  q.where = "lr >= 1e-3 and batch_size < 500 and diff > 0.1";
  auto want = Expected([](const TrialRecord& t) {
    return t.lr >= 1e-3 && t.batch_size < 500 &&
           t.divergence > 0.1;  // NaN > x is false
  });
  ASSERT_GT(want.size(), 3u);  // the test must exercise something
  EXPECT_EQ(Ids(q), want);
  EXPECT_EQ(ds_->Count(q).value(), static_cast<int64_t>(want.size()));
}

TEST_F(QueryFixture, OrNotAndProfilesMatchBruteForce) {
  TrialQuery q;
  q.where =
      "(lr < 1e-4 or epochs >= 40) and not acc_torch < 0.5 and arch = vgg16";
  auto want = Expected([](const TrialRecord& t) {
    return (t.lr < 1e-4 || t.epochs >= 40) && !(t.models[0].test_acc < 0.5) &&
           t.arch == "vgg16";
  });
  ASSERT_GT(want.size(), 3u);
  EXPECT_EQ(Ids(q), want);
}

TEST_F(QueryFixture, BuilderRangesArchStatusSortLimit) {
  TrialQuery q = QueryBuilder()
                     .Arch("resnet50")
                     .Range("adam_eps", 1e-6, 1e-2)
                     .MinDivergence(0.05)
                     .OrderBy("-diff")
                     .Limit(5)
                     .Build();
  auto want = Expected([](const TrialRecord& t) {
    return t.arch == "resnet50" && t.adam_eps >= 1e-6 && t.adam_eps <= 1e-2 &&
           t.divergence >= 0.05;
  });
  std::sort(want.begin(), want.end(), [&](int64_t a, int64_t b) {
    return records_[a - ids_[0]].divergence > records_[b - ids_[0]].divergence;
  });
  want.resize(5);
  EXPECT_EQ(Ids(q), want);
  TrialQuery s;
  s.statuses = {"diverged"};
  EXPECT_EQ(Ids(s), Expected([](const TrialRecord& t) {
              return t.models[0].status == "diverged";
            }));
  TrialQuery nulls;
  nulls.where = "diff is null";
  EXPECT_EQ(Ids(nulls), Expected([](const TrialRecord& t) {
              return std::isnan(t.divergence);
            }));
}

TEST_F(QueryFixture, BadSortAndRangeAreErrors) {
  TrialQuery q;
  q.order_by = {"-nonsense"};
  EXPECT_NE(ds_->Query(q).status().message().find("nonsense"),
            std::string::npos);
  TrialQuery r = QueryBuilder().Range("arch", 0, 1).Build();
  EXPECT_EQ(ds_->Query(r).status().code(), Status::Code::kInvalidArgument);
}

TEST_F(QueryFixture, NearFindsTheClosestInNormalisedSpace) {
  // Aim exactly at one stored trial: it must come first with distance 0.
  const TrialRecord& target = records_[123];
  NearTarget t;
  t.values = {{"lr", target.lr},
              {"adam_eps", target.adam_eps},
              {"batch_size", double(target.batch_size)},
              {"epochs", double(target.epochs)}};
  TrialQuery q;
  q.limit = 3;
  auto near = ds_->Near(t, q);
  ASSERT_TRUE(near.ok()) << near.status().ToString();
  ASSERT_EQ(near->size(), 3u);
  EXPECT_EQ((*near)[0].trial.id, ids_[123]);
  EXPECT_NEAR((*near)[0].distance, 0.0, 1e-12);
  EXPECT_LE((*near)[1].distance, (*near)[2].distance);
  auto parsed =
      ParseNearTarget("lr=0.05, adam_eps=0.2,batch_size=200,epochs=20");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->values.size(), 4u);
  EXPECT_FALSE(ParseNearTarget("lr=abc").ok());
  EXPECT_FALSE(ParseNearTarget("diff=0.3").ok());
  EXPECT_FALSE(ParseNearTarget("bogus=1").ok());
}

TEST_F(QueryFixture, StatsMatchBruteForce) {
  StatsOptions opt;
  auto stats = ComputeStats(*ds_, opt);
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  ASSERT_EQ(stats->size(), 3u);  // resnet50, vgg16, all
  const GroupStats& all = stats->back();
  EXPECT_EQ(all.group, "all");
  std::vector<double> d;
  for (const auto& r : records_) {
    if (!std::isnan(r.divergence)) d.push_back(r.divergence);
  }
  std::sort(d.begin(), d.end());
  EXPECT_EQ(all.trials, 400);
  EXPECT_EQ(all.with_divergence, static_cast<int64_t>(d.size()));
  EXPECT_DOUBLE_EQ(all.div_min, d.front());
  EXPECT_DOUBLE_EQ(all.div_max, d.back());
  double median = d.size() % 2 ? d[d.size() / 2]
                               : 0.5 * (d[d.size() / 2 - 1] + d[d.size() / 2]);
  EXPECT_DOUBLE_EQ(all.div_median, median);
  int64_t n =
      std::count_if(d.begin(), d.end(), [](double v) { return v >= 0.05; });
  EXPECT_EQ(all.at_least_threshold, n);
}

TEST_F(QueryFixture, StreamedExportDoesNotDependOnThePageSize) {
  for (TableFormat f : {TableFormat::kCsv, TableFormat::kJson}) {
    std::ostringstream small, big;
    ASSERT_TRUE(ExportTrials(*ds_, "diff > 0.05", f, small, 7).ok());
    ASSERT_TRUE(ExportTrials(*ds_, "diff > 0.05", f, big, 100000).ok());
    EXPECT_EQ(small.str(), big.str());
    if (f == TableFormat::kCsv) {
      auto want =
          Expected([](const TrialRecord& t) { return t.divergence > 0.05; });
      const std::string text = small.str();
      EXPECT_EQ(
          std::count(text.begin(), text.end(), '\n'),
          static_cast<long>(want.size() + 1));  // header + one line per trial
    }
  }
  std::ostringstream none;
  ASSERT_TRUE(ExportTrials(*ds_, "diff > 5", TableFormat::kJson, none).ok());
  EXPECT_EQ(none.str(), "[]\n");
  std::ostringstream bad;
  Status s = ExportTrials(*ds_, "diff >", TableFormat::kCsv, bad);
  EXPECT_NE(s.message().find("at position 7"), std::string::npos)
      << s.message();
  EXPECT_TRUE(bad.str().empty());
}

}  // namespace
}  // namespace xw
