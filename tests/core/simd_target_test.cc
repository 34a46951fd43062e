// Dispatch control (simd_target.h): every listed target can be chosen, a
// dispatched call then runs on it, and a bad name changes nothing.
#include "xwires/core/simd_target.h"

#include <gtest/gtest.h>

#include <cctype>
#include <map>

namespace xw {
namespace {

// Float lanes each Highway target's vectors have (x86 and ARM).
const std::map<std::string, int>& ExpectedLanes() {
  static const std::map<std::string, int> m = {
      {"AVX3_DL", 16}, {"AVX3", 16}, {"AVX2", 8},   {"SSE4", 4},    {"SSSE3", 4},
      {"NEON", 4},     {"EMU128", 4}, {"SCALAR", 1}};
  return m;
}

class SimdTargetTest : public ::testing::Test {
 protected:
  void TearDown() override { ASSERT_TRUE(SetKernelTarget("").ok()); }
};

TEST_F(SimdTargetTest, BestTargetIsTheDefault) {
  const std::vector<std::string> all = KernelTargets();
  ASSERT_FALSE(all.empty());
  EXPECT_EQ(KernelTarget(), all.front());
}

TEST_F(SimdTargetTest, EveryTargetCanBeChosenAndDispatchFollows) {
  const std::vector<std::string> all = KernelTargets();
#if defined(__x86_64__)
  // The portable kernels are compiled for SSE4 and AVX2 at least; this
  // suite runs on x86-64 machines with AVX2 (CI) or AVX-512.
  EXPECT_GE(all.size(), 3u);
#endif
  for (const std::string& t : all) {
    ASSERT_TRUE(SetKernelTarget(t).ok()) << t;
    EXPECT_EQ(KernelTarget(), t);
    EXPECT_EQ(KernelTargets(), all) << "listing ignores the restriction";
    auto it = ExpectedLanes().find(t);
    ASSERT_NE(it, ExpectedLanes().end()) << "unexpected target " << t;
    EXPECT_EQ(KernelFloatLanes(), it->second) << t;
  }
  ASSERT_TRUE(SetKernelTarget("").ok());
  EXPECT_EQ(KernelTarget(), all.front());
}

TEST_F(SimdTargetTest, UnknownTargetIsRejectedAndChangesNothing) {
  const std::vector<std::string> all = KernelTargets();
  const std::string last = all.back();
  ASSERT_TRUE(SetKernelTarget(last).ok());
  const Status s = SetKernelTarget("avx1024");
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.message().find("'avx1024' is not available"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find(all.front()), std::string::npos) << "lists the available ones";
  EXPECT_EQ(KernelTarget(), last);
}

TEST_F(SimdTargetTest, NamesAreCaseInsensitive) {
  const std::string best = KernelTargets().front();
  std::string lower = best;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  ASSERT_TRUE(SetKernelTarget(lower).ok());
  EXPECT_EQ(KernelTarget(), best);
}

}  // namespace
}  // namespace xw
