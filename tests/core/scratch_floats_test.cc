#include "src/scratch_floats.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace xw {
namespace {

// ScratchFloats only skips the zero-fill of value-initialization: values
// given explicitly are set, growth keeps the old contents, blocks stay
// aligned, and a reused large block comes back from the pool unzeroed
// (which is why no kernel may read scratch it did not write; the
// XWIRES_POISON_SCRATCH build makes such a read NaN).
TEST(ScratchFloatsTest, SetsGivenValuesKeepsContentsAndAlignment) {
  ScratchFloats a(1000, 2.5f);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a.data()) % 64, 0u);
  for (float v : a) ASSERT_EQ(v, 2.5f);
  a[999] = -1.0f;
  a.resize(5000);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a.data()) % 64, 0u);
  EXPECT_EQ(a[0], 2.5f);
  EXPECT_EQ(a[999], -1.0f);
  a.resize(6000, 4.0f);
  for (size_t i = 5000; i < 6000; ++i) ASSERT_EQ(a[i], 4.0f);
#ifdef XWIRES_POISON_SCRATCH
  for (size_t i = 1000; i < 5000; ++i) ASSERT_TRUE(std::isnan(a[i]));
#endif
  // 8 MiB: a pooled block. Written, freed, then taken again unzeroed.
  const size_t n = size_t{8} << 20 >> 2;
  const float* first;
  {
    ScratchFloats big(n);
    first = big.data();
    std::fill(big.begin(), big.end(), 3.0f);
  }
  ScratchFloats again(n);
  if (again.data() == first) {
#ifdef XWIRES_POISON_SCRATCH
    EXPECT_TRUE(std::isnan(again[n / 2]));
#else
    EXPECT_EQ(again[n / 2], 3.0f);
#endif
  }
}

}  // namespace
}  // namespace xw
