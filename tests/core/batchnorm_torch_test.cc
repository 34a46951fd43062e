// Batch norm under BatchNormAccumulate::kDouble against PyTorch 1.13's CPU
// kernels bit for bit (fixtures from
// tests/fixtures/make_torch_batchnorm_fixtures.py): forward statistics,
// output and running statistics, backward dx, dgamma, dbeta. The channels
// have large means and small spreads, so float32 accumulation without fused
// multiply-adds (the `torch` profile's batch norm before: kFloat, reduce
// order lanes8) gives other bits: the test checks that it does, so it
// cannot pass by accident.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "xwires/core/batchnorm.h"
#include "xwires/core/parallel.h"
#include "xwires/core/simd_target.h"

namespace xw {
namespace {

Tensor FromBits(const Shape& shape, const nlohmann::json& bits) {
  Tensor t(shape);
  EXPECT_EQ(static_cast<int64_t>(bits.size()), t.size());
  for (int64_t i = 0; i < t.size(); ++i) {
    const uint32_t b = bits[i].get<uint32_t>();
    std::memcpy(t.data() + i, &b, sizeof b);
  }
  return t;
}

int Mismatches(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.size(), b.size());
  int n = 0;
  for (int64_t i = 0; i < a.size(); ++i) {
    if (std::memcmp(a.data() + i, b.data() + i, sizeof(float)) != 0) ++n;
  }
  return n;
}

struct Outputs {
  Tensor y, running_mean, running_var, dx, dgamma, dbeta, y_eval;
  BatchNormCache cache;
};

class TorchBatchNormTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    const std::string path = std::string(XWIRES_SOURCE_DIR) + "/tests/fixtures/torch/" +
                             GetParam() + ".json";
    std::ifstream in(path);
    ASSERT_TRUE(in) << path;
    c_ = nlohmann::json::parse(in);
    shape_ = c_["shape"].get<Shape>();
    channels_ = {shape_[1]};
  }

  Tensor Get(const char* key, const Shape& shape) const { return FromBits(shape, c_[key]); }

  // The torch profile's batch norm (accumulate double, fma) or the float
  // form it had before (accumulate float, no fma).
  Outputs Run(BatchNormAccumulate accumulate) const {
    BatchNormSpec spec;  // PyTorch's: eps 1e-5, momentum 0.1, unbiased, lerp
    spec.eps = c_["eps"].get<float>();
    spec.momentum = c_["momentum"].get<float>();
    spec.accumulate = accumulate;
    spec.fma = accumulate == BatchNormAccumulate::kDouble;
    ReduceSpec reduce;  // the torch profile's kernels.reduce: lanes8, fma
    reduce.order = ReduceOrder::kLanes;
    reduce.lanes = 8;
    reduce.fma = true;
    Outputs o;
    const Tensor x = Get("x", shape_), gamma = Get("weight", channels_),
                 beta = Get("bias", channels_), dy = Get("dy", shape_);
    o.running_mean = Get("running_mean", channels_);
    o.running_var = Get("running_var", channels_);
    EXPECT_TRUE(BatchNormForwardTrain(x, gamma, beta, spec, reduce, &o.y, &o.running_mean,
                                      &o.running_var, &o.cache)
                    .ok());
    EXPECT_TRUE(
        BatchNormBackward(x, gamma, dy, o.cache, reduce, &o.dx, &o.dgamma, &o.dbeta).ok());
    EXPECT_TRUE(BatchNormForwardEval(x, gamma, beta, o.running_mean, o.running_var, spec,
                                     &o.y_eval)
                    .ok());
    return o;
  }

  nlohmann::json c_;
  Shape shape_, channels_;
};

TEST_P(TorchBatchNormTest, DoubleAccumulationMatchesPyTorchBitwise) {
  const Outputs o = Run(BatchNormAccumulate::kDouble);
  EXPECT_EQ(Mismatches(o.cache.mean, Get("save_mean", channels_)), 0);
  EXPECT_EQ(Mismatches(o.cache.invstd, Get("save_invstd", channels_)), 0);
  EXPECT_EQ(Mismatches(o.running_mean, Get("running_mean_after", channels_)), 0);
  EXPECT_EQ(Mismatches(o.running_var, Get("running_var_after", channels_)), 0);
  EXPECT_EQ(Mismatches(o.y, Get("y", shape_)), 0);
  EXPECT_EQ(Mismatches(o.dbeta, Get("dbias", channels_)), 0);
  EXPECT_EQ(Mismatches(o.dgamma, Get("dweight", channels_)), 0);
  EXPECT_EQ(Mismatches(o.dx, Get("dx", shape_)), 0);
  EXPECT_EQ(Mismatches(o.y_eval, Get("y_eval", shape_)), 0);
}

TEST_P(TorchBatchNormTest, FloatAccumulationDiffersFromPyTorch) {
  const Outputs o = Run(BatchNormAccumulate::kFloat);
  EXPECT_GT(Mismatches(o.cache.mean, Get("save_mean", channels_)) +
                Mismatches(o.cache.invstd, Get("save_invstd", channels_)),
            0);
  EXPECT_GT(Mismatches(o.dx, Get("dx", shape_)), 0);
}

// The same bits for every thread count and on every SIMD target this CPU
// runs (the dispatched-kernel rule).
TEST_P(TorchBatchNormTest, DoubleAccumulationIsTheSameOnEveryTargetAndThreadCount) {
  const Outputs ref = Run(BatchNormAccumulate::kDouble);
  for (int threads : {1, 2, 3}) {
    SetNumThreads(threads);
    for (const std::string& target : KernelTargets()) {
      ASSERT_TRUE(SetKernelTarget(target).ok());
      const Outputs o = Run(BatchNormAccumulate::kDouble);
      EXPECT_EQ(Mismatches(o.y, ref.y) + Mismatches(o.dx, ref.dx) +
                    Mismatches(o.dgamma, ref.dgamma) + Mismatches(o.running_var, ref.running_var),
                0)
          << target << " threads " << threads;
    }
  }
  ASSERT_TRUE(SetKernelTarget("").ok());
  SetNumThreads(0);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, TorchBatchNormTest,
                         ::testing::Values("batch_norm_planes100", "batch_norm_planes4"));

}  // namespace
}  // namespace xw
