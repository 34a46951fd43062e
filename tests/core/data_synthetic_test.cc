// The built-in synthetic dataset: determinism, thread independence, balance,
// pixel grid, and a learnability sanity bound (neither chance nor trivial).
#include <algorithm>
#include <cmath>
#include <vector>

#include "gtest/gtest.h"
#include "xwires/core/data.h"
#include "xwires/core/parallel.h"

namespace xw {
namespace {

DataSplits Make(int64_t train, int64_t test, uint64_t seed) {
  SyntheticOptions o;
  o.train_size = train;
  o.test_size = test;
  o.seed = seed;
  return MakeSynthetic(o);
}

TEST(SyntheticTest, ShapesAndDefaults) {
  const DataSplits s = Make(30, 20, 1);
  EXPECT_EQ(s.name, "synthetic");
  EXPECT_EQ(s.train.images.shape(), (Shape{30, 3, 32, 32}));
  EXPECT_EQ(s.test.images.shape(), (Shape{20, 3, 32, 32}));
  EXPECT_EQ(s.train.num_classes, 10);
  EXPECT_EQ(SyntheticOptions{}.train_size, 5000);
  EXPECT_EQ(SyntheticOptions{}.test_size, 1000);
}

TEST(SyntheticTest, SameSeedSameBitsDifferentSeedDifferent) {
  const DataSplits a = Make(40, 20, 7), b = Make(40, 20, 7),
                   c = Make(40, 20, 8);
  EXPECT_TRUE(a.train.images.BitwiseEqual(b.train.images));
  EXPECT_TRUE(a.test.images.BitwiseEqual(b.test.images));
  EXPECT_EQ(a.train.labels, b.train.labels);
  EXPECT_FALSE(a.train.images.BitwiseEqual(c.train.images));
  EXPECT_FALSE(a.test.images.BitwiseEqual(c.test.images));
  EXPECT_NE(a.train.labels, c.train.labels);
  // Train and test are different streams, not copies of each other.
  Tensor head(Shape{20, 3, 32, 32});
  std::copy(a.train.images.data(), a.train.images.data() + head.size(),
            head.data());
  EXPECT_FALSE(head.BitwiseEqual(a.test.images));
}

TEST(SyntheticTest, IdenticalForAnyThreadCount) {
  DataSplits ref;
  {
    ThreadScope one(1);
    ref = Make(64, 16, 3);
  }
  for (int threads : {2, 4}) {
    ThreadScope scope(threads);
    const DataSplits s = Make(64, 16, 3);
    EXPECT_TRUE(s.train.images.BitwiseEqual(ref.train.images))
        << threads << " threads";
    EXPECT_TRUE(s.test.images.BitwiseEqual(ref.test.images))
        << threads << " threads";
    EXPECT_EQ(s.train.labels, ref.train.labels);
  }
}

TEST(SyntheticTest, SmallerSetIsPrefixOfLarger) {
  const DataSplits small = Make(25, 5, 11), large = Make(100, 30, 11);
  EXPECT_TRUE(std::equal(small.train.images.data(),
                         small.train.images.data() + small.train.images.size(),
                         large.train.images.data()));
  EXPECT_TRUE(std::equal(small.train.labels.begin(), small.train.labels.end(),
                         large.train.labels.begin()));
  // LoadDataSpec("synthetic") maps limits to sizes.
  DataOptions opts;
  opts.train_limit = 25;
  opts.test_limit = 5;
  opts.seed = 11;
  auto r = LoadDataSpec("synthetic", opts);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->train.images.BitwiseEqual(small.train.images));
  EXPECT_TRUE(r->test.images.BitwiseEqual(small.test.images));
}

TEST(SyntheticTest, BalancedClassesInEveryBlockOfTen) {
  const DataSplits s = Make(500, 100, 5);
  for (const ImageDataset* ds : {&s.train, &s.test}) {
    std::vector<int> count(10, 0);
    for (int64_t b = 0; b < ds->size() / 10; ++b) {
      std::vector<int> block(ds->labels.begin() + b * 10,
                             ds->labels.begin() + b * 10 + 10);
      std::sort(block.begin(), block.end());
      for (int c = 0; c < 10; ++c) ASSERT_EQ(block[c], c) << "block " << b;
    }
    for (int32_t l : ds->labels) ++count[l];
    for (int c = 0; c < 10; ++c) EXPECT_EQ(count[c], ds->size() / 10);
  }
  // Labels are shuffled, not 0, 1, 2, ... in order.
  EXPECT_NE(
      std::vector<int32_t>(s.train.labels.begin(), s.train.labels.begin() + 10),
      (std::vector<int32_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
}

TEST(SyntheticTest, PixelsInUnitRangeOnEightBitGrid) {
  const DataSplits s = Make(100, 0, 2);
  double sum = 0;
  int zeros = 0, ones = 0;
  for (int64_t i = 0; i < s.train.images.size(); ++i) {
    const float v = s.train.images[i];
    ASSERT_GE(v, 0.0f);
    ASSERT_LE(v, 1.0f);
    const long q = std::lround(v * 255.0f);
    ASSERT_EQ(v, static_cast<float>(q) / 255.0f) << "index " << i;
    sum += v;
    zeros += v == 0.0f;
    ones += v == 1.0f;
  }
  const double mean = sum / static_cast<double>(s.train.images.size());
  EXPECT_GT(mean, 0.3);
  EXPECT_LT(mean, 0.7);
  // Clipping stays rare (noise does not saturate the images).
  EXPECT_LT(zeros + ones, s.train.images.size() / 50);
}

TEST(GatherBatchTest, CopiesSamplesInIndexOrder) {
  const DataSplits s = Make(20, 0, 4);
  const int64_t idx[] = {5, 0, 19, 5};
  Tensor images(Shape{7, 3, 32, 32}, 9.0f);  // wrong shape: must be resized
  std::vector<int32_t> labels;
  GatherBatch(s.train, idx, 4, &images, &labels);
  ASSERT_EQ(images.shape(), (Shape{4, 3, 32, 32}));
  ASSERT_EQ(labels.size(), 4u);
  for (int k = 0; k < 4; ++k) {
    EXPECT_EQ(labels[k], s.train.labels[idx[k]]);
    EXPECT_TRUE(std::equal(images.data() + k * 3072,
                           images.data() + (k + 1) * 3072,
                           s.train.images.data() + idx[k] * 3072))
        << "sample " << k;
  }
}

// Features: 4x4 average pooling (3x8x8 = 192 values), standardised.
std::vector<double> PooledFeatures(const ImageDataset& ds, int64_t i) {
  std::vector<double> f(192, 0.0);
  for (int c = 0; c < 3; ++c) {
    for (int y = 0; y < 32; ++y) {
      for (int x = 0; x < 32; ++x) {
        f[(c * 8 + y / 4) * 8 + x / 4] += ds.images.at(i, c, y, x) / 16.0;
      }
    }
  }
  return f;
}

// Softmax regression by full-batch gradient descent: a deliberately weak
// learner. On the synthetic set it must beat chance (10%) clearly but stay
// far from perfect: shapes, not pixel averages, carry most of the label.
TEST(SyntheticTest, LinearModelBeatsChanceButDoesNotSaturate) {
  const DataSplits s = Make(2000, 500, 0);
  const int d = 192, k = 10;
  auto features = [&](const ImageDataset& ds) {
    std::vector<std::vector<double>> f;
    for (int64_t i = 0; i < ds.size(); ++i) f.push_back(PooledFeatures(ds, i));
    return f;
  };
  auto train = features(s.train), test = features(s.test);
  std::vector<double> mu(d, 0.0), sd(d, 0.0);
  for (const auto& f : train)
    for (int j = 0; j < d; ++j) mu[j] += f[j] / train.size();
  for (const auto& f : train)
    for (int j = 0; j < d; ++j)
      sd[j] += std::pow(f[j] - mu[j], 2) / train.size();
  for (auto* set : {&train, &test}) {
    for (auto& f : *set)
      for (int j = 0; j < d; ++j)
        f[j] = (f[j] - mu[j]) / (std::sqrt(sd[j]) + 1e-6);
  }
  std::vector<double> w((d + 1) * k, 0.0);
  auto logits = [&](const std::vector<double>& f, double* z) {
    for (int c = 0; c < k; ++c) {
      z[c] = w[d * k + c];
      for (int j = 0; j < d; ++j) z[c] += f[j] * w[j * k + c];
    }
  };
  for (int it = 0; it < 150; ++it) {
    std::vector<double> g(w.size(), 0.0);
    for (size_t i = 0; i < train.size(); ++i) {
      double z[10], m = -1e300, tot = 0;
      logits(train[i], z);
      for (double v : z) m = std::max(m, v);
      for (double& v : z) tot += (v = std::exp(v - m));
      for (int c = 0; c < k; ++c) {
        const double e = z[c] / tot - (c == s.train.labels[i] ? 1.0 : 0.0);
        for (int j = 0; j < d; ++j) g[j * k + c] += e * train[i][j];
        g[d * k + c] += e;
      }
    }
    for (size_t j = 0; j < w.size(); ++j) w[j] -= 0.5 * g[j] / train.size();
  }
  int correct = 0;
  for (size_t i = 0; i < test.size(); ++i) {
    double z[10];
    logits(test[i], z);
    correct += std::max_element(z, z + k) - z == s.test.labels[i];
  }
  const double acc = static_cast<double>(correct) / test.size();
  std::printf("linear test accuracy %.3f\n", acc);
  EXPECT_GT(acc, 0.17);  // chance is 0.10; 0.17 is > 5 standard errors above
  EXPECT_LT(acc, 0.60);
}

}  // namespace
}  // namespace xw
