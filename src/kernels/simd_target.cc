// Dispatch control for the Highway kernels. Compiled with the dispatched
// kernels' flags (target xwires_simd), so HWY_TARGETS here is the set of
// targets those kernels were compiled for.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <mutex>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/kernels/simd_target.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "src/kernels/ordered_gemm.h"
#include "xwires/core/simd_target.h"

HWY_BEFORE_NAMESPACE();
namespace xw {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// What a dispatched call sees: the float lanes of the target's vectors.
int FloatLanes() { return static_cast<int>(hn::Lanes(hn::ScalableTag<float>())); }

}  // namespace HWY_NAMESPACE
}  // namespace xw
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace xw {

HWY_EXPORT(FloatLanes);

int KernelFloatLanes() { return HWY_DYNAMIC_DISPATCH(FloatLanes)(); }

namespace {

// The one target SetKernelTarget restricted dispatch to; 0 = none.
int64_t g_restriction = 0;

std::mutex& TargetMutex() {
  static std::mutex m;
  return m;
}

// Targets compiled here that the CPU (or the current restriction) supports,
// best (lowest bit) first.
std::vector<int64_t> Usable() {
  std::vector<int64_t> out;
  for (int64_t t = hwy::SupportedTargets() & HWY_TARGETS; t != 0; t &= t - 1) {
    out.push_back(t & -t);
  }
  return out;
}

std::string Upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string Join(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

}  // namespace

std::string KernelTarget() {
  std::lock_guard<std::mutex> lock(TargetMutex());
  const std::vector<int64_t> t = Usable();
  return t.empty() ? "SCALAR" : hwy::TargetName(t.front());
}

std::string KernelTargetVariant() {
  const std::string t = KernelTarget();
  return kernels::SplitOpAvx3Dispatched() ? t + "+split" : t;
}

std::vector<std::string> KernelTargets() {
  std::lock_guard<std::mutex> lock(TargetMutex());
  // Lift the restriction to list what the CPU itself supports, then put it
  // back (the dispatch tables keep their chosen target meanwhile).
  hwy::SetSupportedTargetsForTest(0);
  std::vector<std::string> names;
  for (int64_t t : Usable()) names.push_back(hwy::TargetName(t));
  hwy::SetSupportedTargetsForTest(g_restriction);
  return names;
}

Status SetKernelTarget(const std::string& name) {
  std::lock_guard<std::mutex> lock(TargetMutex());
  hwy::SetSupportedTargetsForTest(0);
  int64_t chosen = 0;
  if (!name.empty()) {
    const std::string want = Upper(name);
    std::vector<std::string> names;
    for (int64_t t : Usable()) {
      names.push_back(hwy::TargetName(t));
      if (names.back() == want) chosen = t;
    }
    if (chosen == 0) {  // keep the restriction in force
      hwy::SetSupportedTargetsForTest(g_restriction);
      return Status::InvalidArgument("SIMD target '" + name +
                                     "' is not available on this CPU and build (available: " +
                                     Join(names) + ")");
    }
  }
  g_restriction = chosen;
  hwy::SetSupportedTargetsForTest(chosen);
  // Every HWY_DYNAMIC_DISPATCH table reads this mask on its next call.
  hwy::GetChosenTarget().Update(hwy::SupportedTargets());
  return Status::OK();
}

Status SetKernelTargetFromEnv() {
  const char* v = std::getenv("XWIRES_SIMD_TARGET");
  if (v == nullptr || *v == '\0') return Status::OK();
  Status s = SetKernelTarget(v);
  if (!s.ok()) return s.WithContext("XWIRES_SIMD_TARGET");
  return s;
}

}  // namespace xw
#endif  // HWY_ONCE
