#include "xwires/core/dense.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "grad_check.h"
#include "xwires/core/parallel.h"
#include "xwires/core/reduce.h"

namespace xw {
namespace {

using gradcheck::RandomTensor;

std::vector<KernelNumerics> Numerics() {
  std::vector<KernelNumerics> out;
  for (const char* order : {"sequential", "pairwise", "kahan", "lanes8"}) {
    KernelNumerics num;
    num.gemm = GemmKind::kOwned;
    num.reduce = *ParseReduceOrder(order, std::string(order) == "lanes8");
    out.push_back(num);
  }
  KernelNumerics eigen;
  eigen.gemm = GemmKind::kEigen;
  out.push_back(eigen);
  return out;
}

std::string Name(const KernelNumerics& n) {
  return GemmKindName(n.gemm) + "/" + ReduceOrderName(n.reduce);
}

TEST(DenseTest, ForwardMatchesDoubleAndOwnedIsDotPlusBias) {
  Tensor x = RandomTensor({5, 37}, 1), w = RandomTensor({11, 37}, 2), b = RandomTensor({11}, 3);
  std::vector<double> ref;
  for (int64_t i = 0; i < 5; ++i) {
    for (int64_t j = 0; j < 11; ++j) {
      double s = b[j];
      for (int64_t k = 0; k < 37; ++k) s += double(x[i * 37 + k]) * w[j * 37 + k];
      ref.push_back(s);
    }
  }
  for (const KernelNumerics& num : Numerics()) {
    Tensor y;
    DenseForward(x, w, &b, num, &y);
    ASSERT_EQ(y.shape(), (Shape{5, 11}));
    EXPECT_TRUE(gradcheck::AllClose("y " + Name(num), y, ref, 1e-5, 1e-5));
    if (num.gemm != GemmKind::kOwned) continue;
    for (int64_t i = 0; i < 5; ++i) {
      for (int64_t j = 0; j < 11; ++j) {
        const float want = Dot(x.data() + i * 37, w.data() + j * 37, 37, num.reduce) + b[j];
        EXPECT_EQ(std::memcmp(&want, &y[i * 11 + j], 4), 0) << Name(num) << " " << i << "," << j;
      }
    }
  }
}

TEST(DenseTest, FiniteDifferenceGradients) {
  for (const KernelNumerics& num : Numerics()) {
    // A rank-4 input is flattened to [N, C*H*W]; dx keeps x's shape.
    Tensor x = RandomTensor({3, 2, 2, 3}, 4), w = RandomTensor({5, 12}, 5);
    Tensor b = RandomTensor({5}, 6), y;
    DenseForward(x, w, &b, num, &y);
    ASSERT_EQ(y.shape(), (Shape{3, 5}));
    Tensor r = RandomTensor(y.shape(), 7);
    auto loss = [&] {
      DenseForward(x, w, &b, num, &y);
      return gradcheck::WeightedSum(y, r);
    };
    Tensor dx, dw, db;
    DenseBackward(x, w, r, num, &dx, &dw, &db);
    EXPECT_EQ(dx.shape(), x.shape());
    EXPECT_TRUE(gradcheck::CheckGradient("dx " + Name(num), &x, dx, loss));
    EXPECT_TRUE(gradcheck::CheckGradient("dw " + Name(num), &w, dw, loss));
    EXPECT_TRUE(gradcheck::CheckGradient("db " + Name(num), &b, db, loss));
    // db is the batch sum of dy through xw::Sum with the profile's order.
    for (int64_t j = 0; j < 5; ++j) EXPECT_EQ(db[j], Sum(r.data() + j, 3, num.reduce, 5));
  }
}

// The backward's bits per element: db[j] is xw::Sum over column j of dy
// (stride out) and, for the owned GEMM, dw[j][k] is xw::Dot over the batch of
// dy's column j and x's column k, whatever layout the kernels read them in.
// Batches that are and are not multiples of 8 (the transposes' fast path),
// and one row.
TEST(DenseTest, BackwardIsSumAndDotPerElementBitwise) {
  std::vector<KernelNumerics> nums = Numerics();
  for (const char* order : {"lanes4", "lanes16"}) {
    KernelNumerics num;
    num.gemm = GemmKind::kOwned;
    num.reduce = *ParseReduceOrder(order, false);
    nums.push_back(num);
  }
  for (int64_t rows : {128, 37, 1}) {
    const int64_t in = 45, out = 70;
    Tensor x = RandomTensor({rows, in}, 20 + rows), w = RandomTensor({out, in}, 21);
    Tensor dy = RandomTensor({rows, out}, 22 + rows);
    for (const KernelNumerics& num : nums) {
      Tensor dw({1}, 5.0f), db({1}, 5.0f);  // wrong shapes and stale values on purpose
      DenseBackward(x, w, dy, num, nullptr, &dw, &db);
      ASSERT_EQ(dw.shape(), (Shape{out, in}));
      ASSERT_EQ(db.shape(), (Shape{out}));
      int bad_db = 0, bad_dw = 0;
      std::vector<float> a(rows), b(rows);
      for (int64_t j = 0; j < out; ++j) {
        const float want = Sum(dy.data() + j, rows, num.reduce, out);
        if (std::memcmp(&want, &db[j], 4) != 0) ++bad_db;
        if (num.gemm != GemmKind::kOwned) continue;
        for (int64_t k = 0; k < in; ++k) {
          for (int64_t r = 0; r < rows; ++r) a[r] = dy[r * out + j], b[r] = x[r * in + k];
          const float dot = Dot(a.data(), b.data(), rows, num.reduce);
          if (std::memcmp(&dot, &dw[j * in + k], 4) != 0) ++bad_dw;
        }
      }
      EXPECT_EQ(bad_db, 0) << Name(num) << " rows=" << rows;
      EXPECT_EQ(bad_dw, 0) << Name(num) << " rows=" << rows;
    }
  }
}

TEST(DenseTest, NullOutputsAreSkippedAndThreadsDoNotChangeBits) {
  Tensor x = RandomTensor({64, 100}, 8), w = RandomTensor({70, 100}, 9);
  Tensor dy = RandomTensor({64, 70}, 10);
  for (const KernelNumerics& num : Numerics()) {
    std::vector<Tensor> dws;
    for (int threads : {1, 2, 4}) {
      ThreadScope scope(threads);
      Tensor dw;
      DenseBackward(x, w, dy, num, nullptr, &dw, nullptr);
      dws.push_back(std::move(dw));
    }
    EXPECT_TRUE(dws[0].BitwiseEqual(dws[1])) << Name(num);
    EXPECT_TRUE(dws[0].BitwiseEqual(dws[2])) << Name(num);
  }
}

TEST(DenseDeathTest, FeatureMismatchAborts) {
  Tensor x({2, 6}), w({3, 5}), y;
  EXPECT_DEATH(DenseForward(x, w, nullptr, {}, &y), "6 features per row");
}

}  // namespace
}  // namespace xw
