// Kernel golden bits: the exact-order kernels (direct convolution forward
// and backward, owned GEMM, reductions) under every reduction order, on fixed
// Philox operands, hashed and compared with literals produced by the original
// AVX-512 kernels. Every SIMD target this CPU can run must reproduce them on
// 1 and 2 threads, so the guarantee is checked per target on any machine
// (and, cross-compiled, on ARM: docs/profiles.md). The shapes cover output
// rows that are and are not multiples of every target's lanes, stride 2, 1x1
// kernels and term counts around the pairwise 256-term block.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <string>
#include <tuple>
#include <string_view>
#include <vector>

#include "src/kernels/ordered_gemm.h"
#include "xwires/core/conv.h"
#include "xwires/core/matmul.h"
#include "xwires/core/parallel.h"
#include "xwires/core/reduce.h"
#include "xwires/core/rng.h"
#include "xwires/core/simd_target.h"
#include "xwires/core/tensor.h"

namespace xw {
namespace {

struct SpecCase {
  const char* order;
  bool fma;
  const char* conv, *gemm, *reduce;  // expected hashes
};

const SpecCase kSpecs[] = {
    {"sequential", false, "d8091bbcfbf178fa", "5161d34ea7a5e26b", "743eeac5a28c1c15"},
    {"sequential", true, "b93b29632a76c552", "23b87d4ec941d556", "cea903f0062973a8"},
    {"lanes4", false, "b04471757d77d756", "7343ccd732ddc3ad", "72b33d89b2f63e97"},
    {"lanes4", true, "e342bfc9bf21080e", "58696e3d191e5650", "fbc8689c327b86ff"},
    {"lanes8", false, "c31ac48cde5dcdbb", "0f5690f18a5ba5ab", "01a46505392ccf5c"},
    {"lanes8", true, "e76b4c8d8e22d2fb", "da7b0bc236bc6690", "90e08fc6357cb0b7"},
    {"lanes16", false, "0231f2c558123f22", "215801d2cf751065", "bed666a6665ed316"},
    {"lanes16", true, "f252093294c1a996", "bd32d8b7b5fc288d", "b50a69c0f75550de"},
    {"pairwise", false, "bc35f2653e2b6222", "d48ca2687c0b8edb", "5ec155e585da10cf"},
    {"pairwise", true, "c52a13ef4ed690f2", "c7d34d7edde0215c", "159cdd409a8bcb55"},
    {"kahan", false, "d4dbc052f0056fc6", "8645fca5641a79d5", "389a099ce9c7bb15"},
};

// Folds the bytes of n floats into h (FNV-1a via StreamId, then mixed).
uint64_t Mix(uint64_t h, const float* p, int64_t n) {
  return MixStream(h, StreamId(std::string_view(reinterpret_cast<const char*>(p),
                                               static_cast<size_t>(n) * sizeof(float))));
}

Tensor Random(const Shape& s, uint64_t seed) {
  Tensor t(s);
  Philox(seed, StreamId("golden")).FillUniform(t.data(), t.size(), -1.0f, 1.0f);
  return t;
}

std::string Hex(uint64_t h) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

struct ConvCase {
  int64_t n, c, h, w, o;
  int k, stride, pad;
};

std::string ConvHash(const ReduceSpec& spec) {
  const ConvCase cases[] = {{3, 5, 16, 16, 16, 3, 1, 1}, {2, 8, 8, 8, 32, 3, 2, 1},
                            {2, 3, 32, 32, 8, 3, 1, 1},  {2, 16, 8, 8, 16, 1, 1, 0},
                            {2, 4, 13, 13, 6, 3, 1, 1},  {1, 6, 12, 12, 48, 5, 1, 2}};
  KernelNumerics num;
  num.conv_algo = ConvAlgo::kDirect;
  num.gemm = GemmKind::kOwned;
  num.reduce = spec;
  uint64_t h = 0;
  uint64_t seed = 1;
  for (const ConvCase& cc : cases) {
    Conv2dSpec cs;
    cs.kernel_h = cs.kernel_w = cc.k;
    cs.stride = cc.stride;
    cs.pad = cc.pad;
    const Tensor x = Random({cc.n, cc.c, cc.h, cc.w}, seed++);
    const Tensor w = Random({cc.o, cc.c, cc.k, cc.k}, seed++);
    const Tensor b = Random({cc.o}, seed++);
    Tensor y;
    Conv2dForward(x, w, &b, cs, num, &y);
    const Tensor dy = Random(y.shape(), seed++);
    Tensor dx, dw, db;
    Conv2dBackward(x, w, dy, cs, num, &dx, &dw, &db);
    for (const Tensor* t : {&y, &dx, &dw, &db}) h = Mix(h, t->data(), t->size());
  }
  return Hex(h);
}

std::string GemmHash(const ReduceSpec& spec) {
  KernelNumerics num;
  num.gemm = GemmKind::kOwned;
  num.reduce = spec;
  uint64_t h = 0;
  uint64_t seed = 100;
  for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{37, 70, 300}, {8, 32, 1000},
                         {1, 5, 9}, {64, 10, 513}}) {
    for (int trans = 0; trans < 4; ++trans) {
      const Tensor a = Random({m * k}, seed++), b = Random({k * n}, seed++);
      Tensor c = Random({m * n}, seed++);
      Matmul(a.data(), b.data(), c.data(), m, n, k, trans & 1, trans & 2, trans == 3, num);
      h = Mix(h, c.data(), c.size());
    }
  }
  return Hex(h);
}

std::string ReduceHash(const ReduceSpec& spec) {
  uint64_t h = 0;
  const Tensor a = Random({9000}, 200), b = Random({9000}, 201);
  for (int64_t n : {1, 7, 9, 255, 256, 257, 777, 1024, 4096, 9000}) {
    const float r[4] = {Sum(a.data(), n, spec), Dot(a.data(), b.data(), n, spec),
                        Sum(a.data(), n / 2, spec, 2), Dot(a.data(), b.data(), n / 3, spec, 3, 2)};
    h = Mix(h, r, 4);
    for (int64_t seg : {1, 16, 60, 64, 300}) {
      Segmented sa{a.data(), seg, seg + 5, 0.25f}, sb{b.data(), seg, seg + 5, -0.5f};
      float sum = 0, dot = 0;
      const int64_t terms = std::min<int64_t>(n, 9000 / (seg + 5) * seg);
      SegmentedSumAndDot(sa, sb, terms, spec, &sum, &dot);
      const float s[3] = {SegmentedSum(sa, terms, spec), sum, dot};
      h = Mix(h, s, 3);
    }
  }
  return Hex(h);
}

class KernelGoldenTest : public ::testing::Test {
 protected:
  void TearDown() override {
    kernels::SetSplitWideOpsTiles(-1);
    ASSERT_TRUE(SetKernelTarget("").ok());
  }
};

// Thread counts to check: 1 and 2, or XWIRES_TEST_THREADS=1 alone (the
// aarch64 run under qemu-user, where oneTBB's worker pool crawls).
std::vector<int> ThreadCounts() {
  const char* v = std::getenv("XWIRES_TEST_THREADS");
  if (v != nullptr && std::string(v) == "1") return {1};
  return {1, 2};
}

TEST_F(KernelGoldenTest, EveryTargetAndThreadCountReproducesTheLiterals) {
  for (const std::string& target : KernelTargets()) {
    ASSERT_TRUE(SetKernelTarget(target).ok());
    // AVX3 picks its GEMM tiles by CPU (SplitWideOpsTiles): check both sets.
    for (int split : target == "AVX3" ? std::vector<int>{0, 1} : std::vector<int>{-1}) {
      kernels::SetSplitWideOpsTiles(split);
      for (int threads : ThreadCounts()) {
        ThreadScope scope(threads);
        for (const SpecCase& sc : kSpecs) {
          auto spec = ParseReduceOrder(sc.order, sc.fma);
          ASSERT_TRUE(spec.ok());
          const std::string where = std::string(sc.order) + (sc.fma ? "+fma" : "") + " on " +
                                    target + (split == 1 ? " (split-op GEMM tiles)" : "") + ", " +
                                    std::to_string(threads) + " threads";
          EXPECT_EQ(ConvHash(*spec), sc.conv) << "direct conv, " << where;
          EXPECT_EQ(GemmHash(*spec), sc.gemm) << "owned gemm, " << where;
          EXPECT_EQ(ReduceHash(*spec), sc.reduce) << "reductions, " << where;
        }
      }
    }
  }
}

}  // namespace
}  // namespace xw
