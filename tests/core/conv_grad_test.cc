// Conv gradients by finite differences, thread-count determinism and the
// effect of the reduction order.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "conv_test_util.h"
#include "grad_check.h"
#include "xwires/core/conv.h"
#include "xwires/core/parallel.h"

namespace xw {
namespace {

using convtest::Case;
using convtest::Spec;
using gradcheck::RandomTensor;

// Central differences of L = sum(y .* r) for dx, dw, db of every algorithm,
// both padding modes, strides 1 and 2, odd sizes. L is bilinear in (x, w),
// so central differences are exact up to float rounding of y.
TEST(ConvGradTest, FiniteDifferencesEveryAlgorithm) {
  const Case cs[] = {
      {2, 3, 7, 5, 4, Spec(3, 1, 1, PadMode::kExplicit)},
      {2, 3, 7, 5, 4, Spec(3, 1, 0, PadMode::kSame)},
      {2, 3, 7, 5, 4, Spec(3, 2, 1, PadMode::kExplicit)},
      {2, 3, 7, 5, 4, Spec(3, 2, 0, PadMode::kSame)},
      {1, 2, 5, 7, 3, Spec(1, 2, 0, PadMode::kSame)},
      {1, 2, 4, 16, 3, Spec(3, 1, 1, PadMode::kExplicit)},  // rows of 16: no patch matrix
      {2, 2, 8, 8, 3, Spec(3, 1, 0, PadMode::kSame)},       // rows of 8: two per vector
      {1, 2, 8, 8, 16, Spec(3, 1, 1, PadMode::kExplicit)},  // rows of 8, channel vectors
  };
  for (const Case& k : cs) {
    Tensor x = RandomTensor({k.n, k.c, k.h, k.w}, 21);
    Tensor w = RandomTensor({k.o, k.c, k.spec.kernel_h, k.spec.kernel_w}, 22);
    Tensor b = RandomTensor({k.o}, 23);
    for (const convtest::Config& cfg : convtest::AlgoConfigs()) {
      Tensor y;
      Conv2dForward(x, w, &b, k.spec, cfg.num, &y);
      Tensor r = RandomTensor(y.shape(), 24);
      auto loss = [&] {
        Conv2dForward(x, w, &b, k.spec, cfg.num, &y);
        return gradcheck::WeightedSum(y, r);
      };
      Tensor dx, dw, db;
      Conv2dBackward(x, w, r, k.spec, cfg.num, &dx, &dw, &db);
      const std::string id = cfg.name + " " + k.Name();
      EXPECT_TRUE(gradcheck::CheckGradient("dx " + id, &x, dx, loss));
      EXPECT_TRUE(gradcheck::CheckGradient("dw " + id, &w, dw, loss));
      EXPECT_TRUE(gradcheck::CheckGradient("db " + id, &b, db, loss));
    }
  }
}

// Large enough for several tasks/chunks per kernel: every algorithm and
// reduction order gives the same bits on 1, 2 and 4 threads.
TEST(ConvGradTest, BitwiseIdenticalForOneTwoFourThreads) {
  const Case cs[] = {{8, 8, 12, 12, 40, Spec(3, 1, 1, PadMode::kExplicit)},
                     {6, 8, 12, 11, 24, Spec(3, 2, 0, PadMode::kSame)},
                     {8, 8, 16, 16, 24, Spec(3, 1, 1, PadMode::kExplicit)},
                     {10, 8, 16, 16, 24, Spec(3, 2, 0, PadMode::kSame)},
                     {9, 8, 8, 8, 32, Spec(3, 1, 1, PadMode::kExplicit)},
                     // Winograd's two schedules: 5 groups of 3 images (a
                     // group per task), and the cases above (fewer groups:
                     // every group's transforms, then their 16 GEMMs each).
                     {15, 4, 18, 18, 8, Spec(3, 1, 1, PadMode::kExplicit)}};
  convtest::ForEachTarget([&](const std::string&) {
  for (const Case& k : cs) {
    Tensor x = RandomTensor({k.n, k.c, k.h, k.w}, 31);
    Tensor w = RandomTensor({k.o, k.c, 3, 3}, 32);
    Tensor b = RandomTensor({k.o}, 33);
    for (const convtest::Config& cfg : convtest::AllConfigs()) {
      std::vector<Tensor> outs[4];
      for (int threads : {1, 2, 4}) {
        ThreadScope scope(threads);
        Tensor y, dx, dw, db;
        Conv2dForward(x, w, &b, k.spec, cfg.num, &y);
        Conv2dBackward(x, w, y, k.spec, cfg.num, &dx, &dw, &db);
        outs[0].push_back(std::move(y));
        outs[1].push_back(std::move(dx));
        outs[2].push_back(std::move(dw));
        outs[3].push_back(std::move(db));
      }
      const char* names[] = {"y", "dx", "dw", "db"};
      for (int i = 0; i < 4; ++i) {
        EXPECT_TRUE(outs[i][0].BitwiseEqual(outs[i][1])) << names[i] << " " << cfg.name;
        EXPECT_TRUE(outs[i][0].BitwiseEqual(outs[i][2])) << names[i] << " " << cfg.name;
      }
    }
  }
  });
}

// Convolutions called concurrently from ParallelFor bodies (as when several
// models train in one process) give the same bits as serial calls: scratch
// buffers are per thread and never held across a nested wait.
TEST(ConvGradTest, ConcurrentCallsMatchSerialCalls) {
  const Conv2dSpec spec = Spec(3, 1, 1, PadMode::kExplicit);
  const int kJobs = 6;
  // Patch-matrix paths (rows of 10), pixel-vector tiles (rows of 16) and
  // channel-vector tiles (rows of 8, 16 output channels).
  const Shape shapes[][2] = {{{4, 6, 10, 10}, {12, 6, 3, 3}},
                             {{4, 6, 8, 16}, {16, 6, 3, 3}},
                             {{4, 8, 8, 8}, {16, 8, 3, 3}}};
  convtest::ForEachTarget([&](const std::string&) {
  for (const auto& shape : shapes) {
    std::vector<Tensor> xs, ws;
    for (int j = 0; j < kJobs; ++j) {
      xs.push_back(RandomTensor(shape[0], 50 + j));
      ws.push_back(RandomTensor(shape[1], 60 + j));
    }
    for (const convtest::Config& cfg : convtest::AlgoConfigs()) {
      std::vector<Tensor> serial(kJobs), serial_dx(kJobs), serial_dw(kJobs);
      std::vector<Tensor> par(kJobs), par_dx(kJobs), par_dw(kJobs);
      for (int j = 0; j < kJobs; ++j) {
        Conv2dForward(xs[j], ws[j], nullptr, spec, cfg.num, &serial[j]);
        Conv2dBackward(xs[j], ws[j], serial[j], spec, cfg.num, &serial_dx[j], &serial_dw[j],
                       nullptr);
      }
      ParallelFor(kJobs, 1, [&](int64_t b, int64_t e) {
        for (int64_t j = b; j < e; ++j) {
          Conv2dForward(xs[j], ws[j], nullptr, spec, cfg.num, &par[j]);
          Conv2dBackward(xs[j], ws[j], par[j], spec, cfg.num, &par_dx[j], &par_dw[j], nullptr);
        }
      });
      for (int j = 0; j < kJobs; ++j) {
        const std::string id = cfg.name + " " + ShapeToString(shape[0]) + " job " +
                               std::to_string(j);
        EXPECT_TRUE(serial[j].BitwiseEqual(par[j])) << id;
        EXPECT_TRUE(serial_dx[j].BitwiseEqual(par_dx[j])) << id;
        EXPECT_TRUE(serial_dw[j].BitwiseEqual(par_dw[j])) << id;
      }
    }
  }
  });
}

// Different reduction orders round differently on random data, but every
// order and algorithm agrees to float accuracy.
TEST(ConvGradTest, ReduceOrdersDifferInBitsNotInValue) {
  const Conv2dSpec spec = Spec(3, 1, 1, PadMode::kExplicit);
  Tensor x = RandomTensor({2, 32, 8, 8}, 41), w = RandomTensor({8, 32, 3, 3}, 42);
  Tensor dy = RandomTensor({2, 8, 8, 8}, 43);
  std::vector<convtest::Config> cfgs = convtest::AllConfigs();
  std::vector<std::vector<Tensor>> res;  // per config: y, dx, dw
  for (const convtest::Config& cfg : cfgs) {
    Tensor y, dx, dw;
    Conv2dForward(x, w, nullptr, spec, cfg.num, &y);
    Conv2dBackward(x, w, dy, spec, cfg.num, &dx, &dw, nullptr);
    res.push_back({std::move(y), std::move(dx), std::move(dw)});
  }
  ASSERT_EQ(cfgs[0].name, "direct/sequential");
  for (size_t c = 1; c < cfgs.size(); ++c) {
    for (int t = 0; t < 3; ++t) {
      const Tensor& ref = res[0][t];
      const Tensor& got = res[c][t];
      double rms = 0;
      for (int64_t i = 0; i < ref.size(); ++i) rms += double(ref[i]) * ref[i];
      rms = std::sqrt(rms / ref.size());
      int64_t differ = 0;
      double worst = 0;
      for (int64_t i = 0; i < ref.size(); ++i) {
        const float a = ref[i], b = got[i];
        differ += std::memcmp(&a, &b, 4) != 0;
        worst = std::max(worst, std::fabs(double(ref[i]) - got[i]) / rms);
      }
      // Each direct order changes the last bits of a sizeable share of
      // outputs. (Eigen's order is ISA-dependent: without FMA/AVX its sgemm
      // can coincide with the sequential order for small K, so the GEMM-based
      // algorithms are only held to the tolerance.)
      if (cfgs[c].num.conv_algo == ConvAlgo::kDirect) {
        EXPECT_GT(differ, ref.size() / 20) << cfgs[c].name << " tensor " << t;
      }
      // ...while staying within a few float32 ulps of the output scale.
      EXPECT_LT(worst, 2e-5) << cfgs[c].name << " tensor " << t;
    }
  }
}

}  // namespace
}  // namespace xw
