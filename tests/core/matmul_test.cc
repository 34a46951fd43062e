#include "xwires/core/matmul.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "grad_check.h"
#include "src/kernels/ordered_gemm.h"
#include "xwires/core/parallel.h"
#include "xwires/core/reduce.h"
#include "xwires/core/simd_target.h"

namespace xw {
namespace {

using gradcheck::RandomTensor;

std::vector<ReduceSpec> AllSpecs() {
  std::vector<ReduceSpec> specs;
  for (const char* n : {"sequential", "pairwise", "kahan", "lanes4", "lanes8", "lanes16"}) {
    for (bool fma : {false, true}) specs.push_back(*ParseReduceOrder(n, fma));
  }
  return specs;
}

KernelNumerics Owned(const ReduceSpec& r) {
  KernelNumerics num;
  num.gemm = GemmKind::kOwned;
  num.reduce = r;
  return num;
}

// op(A)(i, t) and op(B)(t, j) gathered into contiguous vectors for xw::Dot.
struct Operands {
  int64_t m, n, k;
  bool ta, tb;
  Tensor a, b;
  Operands(int64_t m_, int64_t n_, int64_t k_, bool ta_, bool tb_, uint64_t seed)
      : m(m_), n(n_), k(k_), ta(ta_), tb(tb_),
        a(RandomTensor(ta_ ? Shape{k_, m_} : Shape{m_, k_}, seed)),
        b(RandomTensor(tb_ ? Shape{n_, k_} : Shape{k_, n_}, seed + 1)) {}
  float A(int64_t i, int64_t t) const { return ta ? a[t * m + i] : a[i * k + t]; }
  float B(int64_t t, int64_t j) const { return tb ? b[j * k + t] : b[t * n + j]; }
  float DotRef(int64_t i, int64_t j, const ReduceSpec& s) const {
    std::vector<float> ra(k), cb(k);
    for (int64_t t = 0; t < k; ++t) ra[t] = A(i, t), cb[t] = B(t, j);
    return Dot(ra.data(), cb.data(), k, s);
  }
  double DoubleRef(int64_t i, int64_t j) const {
    double s = 0;
    for (int64_t t = 0; t < k; ++t) s += static_cast<double>(A(i, t)) * B(t, j);
    return s;
  }
};

// Elements of Matmul(op, s) that differ from xw::Dot's bits.
int CountNotDot(const Operands& op, const ReduceSpec& s) {
  std::vector<float> c(op.m * op.n);
  Matmul(op.a.data(), op.b.data(), c.data(), op.m, op.n, op.k, op.ta, op.tb, false, Owned(s));
  int bad = 0;
  for (int64_t i = 0; i < op.m; ++i) {
    for (int64_t j = 0; j < op.n; ++j) {
      const float ref = op.DotRef(i, j, s);
      if (std::memcmp(&ref, &c[i * op.n + j], 4) != 0) ++bad;
    }
  }
  return bad;
}

// Owned matmul is exactly xw::Dot per element, for every order, every
// transpose combination, and sizes that leave partial panels, row blocks and
// term chunks (k > 1024 crosses the engine's chunk boundary, and 2100
// leaves a partial last chunk).
TEST(MatmulTest, OwnedEqualsDotPerElementBitwise) {
  const int64_t shapes[][3] = {{7, 37, 13}, {13, 5, 300}, {1, 1, 1}, {6, 40, 2100}};
  for (const auto& sh : shapes) {
    for (int tr = 0; tr < 4; ++tr) {
      Operands op(sh[0], sh[1], sh[2], tr & 1, tr & 2, 11 + tr);
      for (const ReduceSpec& s : AllSpecs()) {
        EXPECT_EQ(CountNotDot(op, s), 0) << ReduceOrderName(s) << " fma=" << s.fma
                                         << " m=" << op.m << " n=" << op.n << " k=" << op.k
                                         << " trans=" << tr;
      }
    }
  }
}

// Products of one term chunk fold each row tile's lanes as they finish
// (OneChunkLanes): on every target and tile set, with row counts that leave
// several full row tiles and a partial one whatever the tile height (8, 6,
// 4, 3 or 1 rows), and term counts below, at and between the lane counts,
// up to the 1024 terms of one chunk.
TEST(MatmulTest, OneChunkProductsEqualDotOnEveryTarget) {
  const int64_t shapes[][3] = {{29, 40, 100}, {17, 33, 3}, {25, 8, 256}, {9, 64, 17},
                               {11, 40, 1000}};
  for (const std::string& target : KernelTargets()) {
    ASSERT_TRUE(SetKernelTarget(target).ok());
    for (int split : target == "AVX3" ? std::vector<int>{0, 1} : std::vector<int>{-1}) {
      kernels::SetSplitWideOpsTiles(split);
      for (const auto& sh : shapes) {
        Operands op(sh[0], sh[1], sh[2], true, false, 40 + sh[2]);  // a weight gradient's
        for (const ReduceSpec& s : AllSpecs()) {
          EXPECT_EQ(CountNotDot(op, s), 0) << ReduceOrderName(s) << " fma=" << s.fma << " on "
                                           << target << " split=" << split << " m=" << op.m
                                           << " n=" << op.n << " k=" << op.k;
        }
      }
    }
  }
  kernels::SetSplitWideOpsTiles(-1);
  ASSERT_TRUE(SetKernelTarget("").ok());
}

TEST(MatmulTest, EigenAndOwnedMatchDoubleReference) {
  for (int tr = 0; tr < 4; ++tr) {
    Operands op(19, 23, 71, tr & 1, tr & 2, 3);
    for (GemmKind g : {GemmKind::kEigen, GemmKind::kOwned}) {
      KernelNumerics num;
      num.gemm = g;
      Tensor c({op.m, op.n});
      Matmul(op.a.data(), op.b.data(), c.data(), op.m, op.n, op.k, op.ta, op.tb, false, num);
      std::vector<double> ref;
      for (int64_t i = 0; i < op.m; ++i)
        for (int64_t j = 0; j < op.n; ++j) ref.push_back(op.DoubleRef(i, j));
      EXPECT_TRUE(gradcheck::AllClose(GemmKindName(g), c, ref, 1e-4, 1e-5)) << tr;
    }
  }
}

TEST(MatmulTest, AccumulateAddsOnceAfterTheDot) {
  Operands op(5, 9, 33, false, true, 21);
  for (GemmKind g : {GemmKind::kEigen, GemmKind::kOwned}) {
    KernelNumerics num;
    num.gemm = g;
    Tensor c0 = RandomTensor({op.m, op.n}, 5), c = c0, fresh({op.m, op.n});
    Matmul(op.a.data(), op.b.data(), c.data(), op.m, op.n, op.k, false, true, true, num);
    Matmul(op.a.data(), op.b.data(), fresh.data(), op.m, op.n, op.k, false, true, false, num);
    for (int64_t i = 0; i < c.size(); ++i) {
      if (g == GemmKind::kOwned) {
        EXPECT_EQ(c[i], c0[i] + fresh[i]) << i;  // exactly one rounded add
      } else {
        EXPECT_NEAR(c[i], c0[i] + fresh[i], 1e-5) << i;
      }
    }
  }
  // k == 0: accumulate leaves C alone, overwrite gives zeros.
  std::vector<float> c(6, 2.0f);
  Matmul(nullptr, nullptr, c.data(), 2, 3, 0, false, false, true, KernelNumerics{});
  EXPECT_EQ(c[5], 2.0f);
  Matmul(nullptr, nullptr, c.data(), 2, 3, 0, false, false, false, KernelNumerics{});
  EXPECT_EQ(c[5], 0.0f);
}

// d/dA of sum(C .* R) is R op(B)^T; checked by central differences for every
// transpose combination with the product itself as the analytic gradient.
TEST(MatmulTest, FiniteDifferenceGradients) {
  for (int tr = 0; tr < 4; ++tr) {
    Operands op(4, 6, 5, tr & 1, tr & 2, 40 + tr);
    KernelNumerics num;
    Tensor r = RandomTensor({op.m, op.n}, 99);
    Tensor c({op.m, op.n});
    auto loss = [&] {
      Matmul(op.a.data(), op.b.data(), c.data(), op.m, op.n, op.k, op.ta, op.tb, false, num);
      return gradcheck::WeightedSum(c, r);
    };
    // dA = R op(B)^T, laid out like A (transposed back when trans_a).
    Tensor da(op.a.shape()), db(op.b.shape());
    for (int64_t i = 0; i < op.m; ++i) {
      for (int64_t t = 0; t < op.k; ++t) {
        double s = 0;
        for (int64_t j = 0; j < op.n; ++j) s += r[i * op.n + j] * op.B(t, j);
        da[op.ta ? t * op.m + i : i * op.k + t] = static_cast<float>(s);
      }
    }
    // The same gradient through Matmul itself: dB = op(A)^T R.
    Tensor dbm({op.k, op.n});
    Matmul(op.a.data(), r.data(), dbm.data(), op.k, op.n, op.m, !op.ta, false, false, num);
    for (int64_t t = 0; t < op.k; ++t)
      for (int64_t j = 0; j < op.n; ++j) db[op.tb ? j * op.k + t : t * op.n + j] = dbm[t * op.n + j];
    EXPECT_TRUE(gradcheck::CheckGradient("dA", &op.a, da, loss)) << tr;
    EXPECT_TRUE(gradcheck::CheckGradient("dB", &op.b, db, loss)) << tr;
  }
}

TEST(MatmulTest, BitwiseIdenticalForOneTwoFourThreads) {
  Operands op(70, 90, 150, false, false, 8);
  for (GemmKind g : {GemmKind::kEigen, GemmKind::kOwned}) {
    for (const ReduceSpec& s : {*ParseReduceOrder("lanes8", true), ReduceSpec{}}) {
      KernelNumerics num = Owned(s);
      num.gemm = g;
      std::vector<Tensor> out;
      for (int threads : {1, 2, 4}) {
        ThreadScope scope(threads);
        Tensor c({op.m, op.n});
        Matmul(op.a.data(), op.b.data(), c.data(), op.m, op.n, op.k, false, false, false, num);
        out.push_back(std::move(c));
      }
      EXPECT_TRUE(out[0].BitwiseEqual(out[1])) << GemmKindName(g);
      EXPECT_TRUE(out[0].BitwiseEqual(out[2])) << GemmKindName(g);
    }
  }
}

}  // namespace
}  // namespace xw
