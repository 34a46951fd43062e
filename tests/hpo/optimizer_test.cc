#include "xwires/hpo/optimizer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "test_functions.h"
#include "xwires/core/parallel.h"
#include "xwires/hpo/sobol.h"

namespace xw::hpo {
namespace {

using testing::Branin;

SearchSpace BraninSpace() {
  return SearchSpace::Create({{"x1", DimType::kReal, -5, 10, false},
                              {"x2", DimType::kReal, 0, 15, false}})
      .value();
}

double UnitDistance(const SearchSpace& s, const std::vector<double>& a,
                    const std::vector<double>& b) {
  const auto ua = s.ToUnit(a), ub = s.ToUnit(b);
  double d2 = 0;
  for (size_t j = 0; j < ua.size(); ++j)
    d2 += (ua[j] - ub[j]) * (ua[j] - ub[j]);
  return std::sqrt(d2);
}

// Runs `steps` sequential ask/tell rounds on Branin.
void RunBranin(GpOptimizer* opt, int steps) {
  for (int i = 0; i < steps; ++i) {
    auto x = opt->Ask(1);
    ASSERT_TRUE(x.ok()) << x.status().ToString();
    ASSERT_TRUE(opt->Tell((*x)[0], Branin((*x)[0])).ok());
  }
}

TEST(GpOptimizer, SobolInitialDesignIsTheShiftedSequence) {
  OptimizerOptions o;
  o.initial_design = InitialDesign::kSobol;
  o.seed = 3;
  GpOptimizer opt = GpOptimizer::Create(BraninSpace(), o).value();
  const Sobol sobol = Sobol::Create(2).value();
  double p0[2];
  sobol.Point(0, p0);
  std::vector<std::vector<double>> us;
  for (int i = 0; i < 8; ++i) {
    auto x = opt.Ask(1);
    ASSERT_TRUE(x.ok());
    us.push_back(opt.space().ToUnit((*x)[0]));
    ASSERT_TRUE(opt.Tell((*x)[0], Branin((*x)[0])).ok());
  }
  // A digital shift preserves the net: the first 8 points fall one per 1/8 bin.
  for (int j = 0; j < 2; ++j) {
    std::set<int> bins;
    for (const auto& u : us) bins.insert(static_cast<int>(u[j] * 8));
    EXPECT_EQ(bins.size(), 8u);
  }
}

TEST(GpOptimizer, LatinHypercubeDesignIsStratified) {
  OptimizerOptions o;
  o.initial_design = InitialDesign::kLatinHypercube;
  GpOptimizer opt = GpOptimizer::Create(BraninSpace(), o).value();
  auto xs = opt.Ask(10);  // all ten initial points at once
  ASSERT_TRUE(xs.ok());
  for (int j = 0; j < 2; ++j) {
    std::set<int> bins;
    for (const auto& x : *xs)
      bins.insert(static_cast<int>(opt.space().ToUnit(j, x[j]) * 10));
    EXPECT_EQ(bins.size(), 10u) << "dimension " << j;
  }
}

TEST(GpOptimizer, ConcurrentAsksNeverRepeatAPendingPoint) {
  for (AcquisitionKind k : {AcquisitionKind::kEI, AcquisitionKind::kLCB,
                            AcquisitionKind::kGpHedge}) {
    for (LiarStrategy liar :
         {LiarStrategy::kMin, LiarStrategy::kMean, LiarStrategy::kMax}) {
      OptimizerOptions o;
      o.acquisition = k;
      o.liar = liar;
      o.n_candidates = 2000;
      GpOptimizer opt = GpOptimizer::Create(BraninSpace(), o).value();
      RunBranin(&opt, 15);
      // Four workers: each Ask sees everything still running as pending.
      std::vector<std::vector<double>> pending;
      for (int w = 0; w < 4; ++w) {
        auto x = opt.Ask(1, pending);
        ASSERT_TRUE(x.ok());
        pending.push_back((*x)[0]);
      }
      auto batch = opt.Ask(6, pending);
      ASSERT_TRUE(batch.ok());
      std::vector<std::vector<double>> all = pending;
      all.insert(all.end(), batch->begin(), batch->end());
      for (size_t a = 0; a < all.size(); ++a) {
        for (size_t b = a + 1; b < all.size(); ++b) {
          EXPECT_GT(UnitDistance(opt.space(), all[a], all[b]), 1e-3)
              << AcquisitionName(k) << "/" << LiarName(liar) << " points " << a
              << ", " << b;
        }
        for (int i = 0; i < opt.num_observations(); ++i) {
          EXPECT_GT(UnitDistance(opt.space(), all[a], opt.observation(i)),
                    1e-3);
        }
      }
    }
  }
}

TEST(GpOptimizer, IntegerSpaceBatchesAreDistinctAfterRounding) {
  auto space = SearchSpace::Create({{"a", DimType::kInteger, 1, 6, false},
                                    {"b", DimType::kInteger, 1, 5, false}});
  OptimizerOptions o;
  o.n_candidates = 500;
  GpOptimizer opt = GpOptimizer::Create(space.value(), o).value();
  std::set<std::vector<double>> seen;
  for (int round = 0; round < 7; ++round) {
    auto xs = opt.Ask(4);
    ASSERT_TRUE(xs.ok()) << xs.status().ToString();
    for (const auto& x : *xs) {
      EXPECT_TRUE(seen.insert(x).second) << "repeated " << x[0] << "," << x[1];
      ASSERT_TRUE(
          opt.Tell(x, (x[0] - 3) * (x[0] - 3) + (x[1] - 2) * (x[1] - 2)).ok());
    }
  }
  // 28 of the 30 grid points are taken; 3 more do not fit.
  auto full = opt.Ask(3);
  EXPECT_EQ(full.status().code(), Status::Code::kFailedPrecondition);
  EXPECT_NE(full.status().message().find("exhausted"), std::string::npos);
}

TEST(GpOptimizer, SameSeedAndObservationsGiveSameSuggestionsForAnyThreadCount) {
  OptimizerOptions o;
  o.acquisition = AcquisitionKind::kGpHedge;
  o.seed = 11;
  std::vector<std::vector<double>> a, b;
  for (int threads : {1, 2}) {
    ThreadScope scope(threads);
    GpOptimizer opt = GpOptimizer::Create(BraninSpace(), o).value();
    RunBranin(&opt, 20);
    auto xs = opt.Ask(3, {{1.0, 1.0}});
    ASSERT_TRUE(xs.ok());
    auto& out = threads == 1 ? a : b;
    for (int i = 0; i < opt.num_observations(); ++i)
      out.push_back(opt.observation(i));
    out.insert(out.end(), xs->begin(), xs->end());
  }
  EXPECT_EQ(a, b);  // bitwise
}

TEST(GpOptimizer, RebuiltFromObservationsSuggestsTheSame) {
  for (AcquisitionKind k : {AcquisitionKind::kEI, AcquisitionKind::kGpHedge}) {
    OptimizerOptions o;
    o.acquisition = k;
    o.seed = 5;
    o.refit_dense_until = 12;  // exercise the sparse refit schedule too
    o.refit_every = 3;
    GpOptimizer live = GpOptimizer::Create(BraninSpace(), o).value();
    RunBranin(&live, 22);
    GpOptimizer rebuilt = GpOptimizer::Create(BraninSpace(), o).value();
    for (int i = 0; i < live.num_observations(); ++i) {
      ASSERT_TRUE(rebuilt.Tell(live.observation(i), live.target(i)).ok());
    }
    ASSERT_TRUE(rebuilt.set_hedge_state(live.hedge_state()).ok());
    const std::vector<std::vector<double>> pending = {{2.0, 3.0}};
    auto x1 = live.Ask(2, pending);
    auto x2 = rebuilt.Ask(2, pending);
    ASSERT_TRUE(x1.ok() && x2.ok());
    EXPECT_EQ(*x1, *x2) << AcquisitionName(k);
    EXPECT_EQ(live.hyperparameters(), rebuilt.hyperparameters());
  }
}

TEST(GpOptimizer, SparseScheduleWithoutEarlyRefitPoints) {
  OptimizerOptions o;
  o.refit_dense_until = 0;
  o.refit_every = 10;
  o.n_initial_points = 3;
  GpOptimizer a = GpOptimizer::Create(BraninSpace(), o).value();
  RunBranin(&a, 13);  // models at 3..9 observations come before refit point 10
  GpOptimizer b = GpOptimizer::Create(BraninSpace(), o).value();
  for (int i = 0; i < a.num_observations(); ++i)
    ASSERT_TRUE(b.Tell(a.observation(i), a.target(i)).ok());
  ASSERT_TRUE(b.set_hedge_state(a.hedge_state()).ok());
  EXPECT_EQ(*a.Ask(2), *b.Ask(2));
}

TEST(GpOptimizer, BadTellsAreRejectedAndNotRecorded) {
  GpOptimizer opt =
      GpOptimizer::Create(DefaultSearchSpace(), OptimizerOptions{}).value();
  Status s = opt.Tell(std::vector<double>{1e-3, 60, 1e-4, 100}, 0.5);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.message().find("'epochs' value 60 is outside [1, 50]"),
            std::string::npos)
      << s.message();
  s = opt.Tell(std::vector<double>{1e-3, 6, 1e-4, 100}, NAN);
  EXPECT_NE(s.message().find("not finite"), std::string::npos);
  EXPECT_EQ(opt.num_observations(), 0);
  auto bad = opt.Ask(1, {{1e-3, 6, 1e-4}});
  EXPECT_NE(bad.status().message().find("pending point 0"), std::string::npos);
  EXPECT_FALSE(opt.Ask(0).ok());
  ASSERT_TRUE(opt.Tell(std::vector<double>{1e-3, 6, 1e-4, 100}, -0.25).ok());
  EXPECT_EQ(opt.num_observations(), 1);
  EXPECT_EQ(opt.observation(0)[1], 6.0);
  EXPECT_EQ(opt.best_index(), 0);
}

TEST(GpOptimizer, SuggestionsLieInsideTheSpace) {
  GpOptimizer opt =
      GpOptimizer::Create(DefaultSearchSpace(), OptimizerOptions{}).value();
  for (int i = 0; i < 14; ++i) {
    auto xs = opt.Ask(1);
    ASSERT_TRUE(xs.ok());
    const auto& x = (*xs)[0];
    ASSERT_TRUE(opt.space().CheckPoint(x).ok());
    // A smooth stand-in objective in log(lr), epochs, log(eps), batch size.
    const double y = std::pow(std::log10(x[0]) + 3, 2) + 0.01 * x[1] +
                     0.1 * std::abs(std::log10(x[2]) + 6) + x[3] / 1e4;
    ASSERT_TRUE(opt.Tell(x, y).ok());
  }
  EXPECT_TRUE(opt.hyperparameters().has_value());
}

TEST(GpOptimizer, OptionsAreValidatedByName) {
  OptimizerOptions o;
  o.n_initial_points = 0;
  EXPECT_NE(ValidateOptions(o).message().find("n_initial_points"),
            std::string::npos);
  o = OptimizerOptions{};
  o.acq.xi = -1;
  EXPECT_NE(ValidateOptions(o).message().find("xi = -1"), std::string::npos);
  o = OptimizerOptions{};
  o.gp.length_scale_low = 0;
  EXPECT_NE(ValidateOptions(o).message().find("gp.length_scale"),
            std::string::npos);
  EXPECT_FALSE(GpOptimizer::Create(BraninSpace(), o).ok());
  EXPECT_EQ(*ParseInitialDesign("lhs"), InitialDesign::kLatinHypercube);
  EXPECT_EQ(*ParseLiar("max"), LiarStrategy::kMax);
  EXPECT_FALSE(ParseLiar("median").ok());
}

}  // namespace
}  // namespace xw::hpo
