#include "xwires/core/parallel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <set>
#include <utility>
#include <vector>

namespace xw {
namespace {

TEST(ParallelTest, ChunksDependOnlyOnSizeAndGrain) {
  for (int threads : {1, 2, 4}) {
    ThreadScope scope(threads);
    EXPECT_EQ(NumThreads(), threads);
    std::mutex mu;
    std::set<std::pair<int64_t, int64_t>> chunks;
    ParallelFor(103, 10, [&](int64_t b, int64_t e) {
      std::lock_guard<std::mutex> l(mu);
      chunks.insert({b, e});
    });
    ASSERT_EQ(chunks.size(), 11u);
    EXPECT_EQ(chunks.begin()->second, 10);
    EXPECT_EQ(chunks.rbegin()->first, 100);
    EXPECT_EQ(chunks.rbegin()->second, 103);
  }
}

TEST(ParallelTest, NestedCallsCoverEverything) {
  ThreadScope scope(2);
  std::vector<std::atomic<int>> hits(64 * 64);
  ParallelFor(64, 4, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      ParallelFor(64, 8, [&](int64_t b2, int64_t e2) {
        for (int64_t j = b2; j < e2; ++j) hits[i * 64 + j]++;
      });
    }
  });
  for (auto& h : hits) ASSERT_EQ(h.load(), 1);
}

TEST(ParallelTest, GrainForIsPure) {
  EXPECT_EQ(GrainFor(1000, 1, 64), 16);
  EXPECT_EQ(GrainFor(10, 32, 64), 32);
}

}  // namespace
}  // namespace xw
