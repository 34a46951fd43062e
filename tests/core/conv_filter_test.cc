// The filter gradient's summation order where it runs on vector tiles:
// im2col's (tf profile) channel-vector tiles and the direct algorithm's lanesK
// tiles, bitwise against their definitions, on every SIMD target and thread
// count.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "conv_test_util.h"
#include "grad_check.h"
#include "xwires/core/conv.h"
#include "xwires/core/parallel.h"
#include "xwires/core/reduce.h"

namespace xw {
namespace {

using convtest::Case;
using convtest::Spec;

// dw[o, t] as conv_internal.h's FilterBatches defines it for output rows
// that take the channel tiles: images in batches of per = 2048 / plane, each
// batch one FMA chain over its pixels (n, p, q) in order; the batches split
// into min(batches, 4) contiguous groups, batch results added in order
// within a group, then the groups' results added in group order.
// Under gemm "owned" every shape takes this order, the chains fused or not
// as kernels.fma says (`fma`).
int ChannelFilterMismatches(const ConvGeometry& g, const Tensor& x, const Tensor& dy,
                            const Tensor& dw, bool fma = true) {
  const int64_t taps = g.c * g.kh * g.kw, plane = g.oh * g.ow;
  const int64_t per = std::clamp<int64_t>(2048 / plane, 1, g.n);
  const int64_t batches = (g.n + per - 1) / per, groups = std::min<int64_t>(batches, 4);
  const ReduceSpec chain = *ParseReduceOrder("sequential", fma);
  std::vector<float> dys, xs;
  int bad = 0;
  for (int64_t o = 0; o < g.o; ++o) {
    for (int64_t t = 0; t < taps; ++t) {
      float total = 0.0f;
      for (int64_t gi = 0; gi < groups; ++gi) {
        float group = 0.0f;
        for (int64_t bi = gi * batches / groups; bi < (gi + 1) * batches / groups; ++bi) {
          const int64_t n1 = std::min(g.n, (bi + 1) * per);
          convtest::FilterTerms(g, x, dy, o, t, bi * per, n1, &dys, &xs);
          const float s = Dot(dys.data(), xs.data(), dys.size(), chain);
          group = bi == gi * batches / groups ? s : group + s;
        }
        total = gi == 0 ? group : total + group;
      }
      const float got = dw[o * taps + t];
      bad += std::memcmp(&total, &got, 4) != 0;
    }
  }
  return bad;
}

// Rows of 8 pixels (whole slots of 8 or 4 lanes, half slots of 16), or
// 128 taps or more, and 16k output channels: the channel tiles on every
// target. 160 images of 8 x 8
// are five batches of 32 in four groups, so the last group runs two rounds;
// 128 images of 4 x 4 are one batch, whose tiles alone run in parallel.
TEST(ConvFilterTest, Im2colChannelTilesSumBatchChainsInGroups) {
  const Case cs[] = {{160, 3, 8, 8, 16, Spec(3, 1, 1, PadMode::kExplicit)},
                     {128, 5, 4, 4, 32, Spec(3, 1, 1, PadMode::kExplicit)},
                     {40, 4, 16, 16, 16, Spec(3, 2, 0, PadMode::kSame)},
                     // 4 x 4 outputs of stride 2: batches padded channel-major,
                     // phase by phase, two batches.
                     {160, 4, 8, 8, 16, Spec(3, 2, 0, PadMode::kSame)},
                     // 32 x 32 planes with 144 taps: channel tiles too.
                     {4, 16, 32, 32, 16, Spec(3, 1, 1, PadMode::kExplicit)}};
  KernelNumerics num;
  num.conv_algo = ConvAlgo::kIm2colGemm;
  num.gemm = GemmKind::kEigen;
  convtest::ForEachTarget([&](const std::string&) {
    for (const Case& k : cs) {
      const auto [g, x, w, dy] = convtest::MakeOperands(k, 21, 22, 23);
      std::vector<Tensor> dws;
      for (int threads : {1, 2, 4}) {
        ThreadScope scope(threads);
        Tensor dw;
        Conv2dBackward(x, w, dy, k.spec, num, nullptr, &dw, nullptr);
        EXPECT_EQ(ChannelFilterMismatches(g, x, dy, dw), 0) << k.Name() << " " << threads;
        dws.push_back(std::move(dw));
      }
      EXPECT_TRUE(dws[0].BitwiseEqual(dws[1]) && dws[0].BitwiseEqual(dws[2])) << k.Name();
    }
  });
}

// The tf profile's im2col filter gradient (gemm "owned") on every shape:
// ResNet-20's on 28 x 28 images (rows of 28, 14 and 7 pixels, 4 and 8
// output channels, TF's asymmetric 'same' padding with stride 2, 1x1
// stride-2 projections), which took Eigen's sgemm or L-lane partial sums
// before, in the batches-and-groups order above, on every target and
// thread count. 80 images of 7 x 7 are two batches of 41 and 39.
TEST(ConvFilterTest, Im2colOwnedSumsBatchChainsInGroupsOnEveryShape) {
  const Case cs[] = {{3, 1, 28, 28, 4, Spec(3, 1, 1, PadMode::kSame)},
                     {6, 4, 28, 28, 8, Spec(3, 2, 0, PadMode::kSame)},
                     {6, 4, 28, 28, 8, Spec(1, 2, 0, PadMode::kSame)},
                     {80, 16, 7, 7, 16, Spec(3, 1, 1, PadMode::kSame)},
                     {160, 3, 8, 8, 16, Spec(3, 1, 1, PadMode::kExplicit)},
                     {5, 8, 2, 2, 33, Spec(3, 1, 1, PadMode::kExplicit)}};
  for (bool fma : {false, true}) {
    KernelNumerics num;
    num.conv_algo = ConvAlgo::kIm2colGemm;
    num.gemm = GemmKind::kOwned;
    num.reduce = *ParseReduceOrder("pairwise", fma);
    convtest::ForEachTarget([&](const std::string&) {
      for (const Case& k : cs) {
        const convtest::Operands op = convtest::MakeOperands(k, 51, 52, 53);
        for (int threads : {1, 3}) {
          ThreadScope scope(threads);
          Tensor dw;
          Conv2dBackward(op.x, op.w, op.dy, k.spec, num, nullptr, &dw, nullptr);
          EXPECT_EQ(ChannelFilterMismatches(op.g, op.x, op.dy, dw, fma), 0)
              << k.Name() << (fma ? " fma" : "") << " threads " << threads;
        }
      }
    });
  }
}

// lanesK orders whose K divides the output rows put the K chains in vector
// lanes (conv_filter_lanes.cc); the others keep the channel-lane tiles. Odd
// channel counts and tap counts leave partial tiles; 40 images of 8 x 8 are
// two chunks, so the chains carry across them. 4 x 4 maps take two half rows
// per vector where a vector holds 8 pixels (4 x 4 and 2 x 2 outputs of the
// strided case). 128 -> 128 channels hold a state beyond the tiles' 4 MiB
// under lanes8 and lanes16 and take the ordered products (lanes4: the tiles).
TEST(ConvFilterTest, DirectLanesOrdersAreTheirDefinition) {
  const Case cs[] = {{40, 3, 8, 8, 16, Spec(3, 1, 1, PadMode::kExplicit)},
                     {3, 4, 16, 16, 6, Spec(3, 1, 1, PadMode::kExplicit)},
                     {5, 5, 16, 16, 8, Spec(3, 2, 0, PadMode::kSame)},
                     {2, 5, 8, 8, 16, Spec(1, 1, 0, PadMode::kExplicit)},
                     {2, 3, 12, 12, 8, Spec(3, 1, 1, PadMode::kExplicit)},
                     {6, 5, 4, 4, 12, Spec(3, 1, 1, PadMode::kExplicit)},
                     {4, 3, 8, 8, 8, Spec(3, 2, 0, PadMode::kSame)},
                     {2, 128, 8, 8, 128, Spec(3, 1, 1, PadMode::kExplicit)}};
  convtest::ForEachTarget([&](const std::string&) {
    for (const char* order : {"lanes4", "lanes8", "lanes16"}) {
      for (bool fma : {true, false}) {
        KernelNumerics num;
        num.reduce = *ParseReduceOrder(order, fma);
        for (const Case& k : cs) {
          const auto [g, x, w, dy] = convtest::MakeOperands(k, 31, 32, 33);
          std::vector<Tensor> dws;
          // XWIRES_TEST_THREADS=1 (the qemu run of tests/cross) keeps one.
          const bool one = std::getenv("XWIRES_TEST_THREADS") != nullptr;
          for (int threads : one ? std::vector<int>{1} : std::vector<int>{1, 3}) {
            ThreadScope scope(threads);
            Tensor dw;
            Conv2dBackward(x, w, dy, k.spec, num, nullptr, &dw, nullptr);
            EXPECT_EQ(convtest::FilterGradMismatches(g, x, dy, dw, num.reduce), 0)
                << k.Name() << " " << order << " fma " << fma << " threads " << threads;
            dws.push_back(std::move(dw));
          }
          EXPECT_TRUE(dws[0].BitwiseEqual(dws.back())) << k.Name() << " " << order;
        }
      }
    }
  });
}

}  // namespace
}  // namespace xw
