// The dynamic loss-scale state machines (loss_scaler.h).
#include "xwires/trainers/loss_scaler.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "xwires/core/parallel.h"

namespace xw {
namespace {
constexpr int64_t kGrowthInterval = 2000;  // all three: growth_interval / dynamic_growth_steps
}  // namespace

std::string LossScalingName(LossScaling s) {
  switch (s) {
    case LossScaling::kNone: return "none";
    case LossScaling::kTorchDynamic: return "torch_dynamic";
    case LossScaling::kKeras3Dynamic: return "keras3_dynamic";
    case LossScaling::kKeras2Dynamic: return "keras2_dynamic";
  }
  return "none";
}

Result<LossScaling> ParseLossScaling(const std::string& name) {
  for (auto s : {LossScaling::kNone, LossScaling::kTorchDynamic, LossScaling::kKeras3Dynamic,
                 LossScaling::kKeras2Dynamic}) {
    if (LossScalingName(s) == name) return s;
  }
  return Status::InvalidArgument("unknown value '" + name +
                                 "' (expected none, torch_dynamic, keras3_dynamic or "
                                 "keras2_dynamic)");
}

LossScaler::LossScaler(LossScaling kind) : kind_(kind) {
  switch (kind) {
    case LossScaling::kNone: scale_ = 1.0f; break;
    case LossScaling::kTorchDynamic: scale_ = 65536.0f; break;  // init_scale=2.**16
    case LossScaling::kKeras3Dynamic:                           // initial_scale=2.0**15
    case LossScaling::kKeras2Dynamic: scale_ = 32768.0f; break;  // _DEFAULT_INITIAL_SCALE
  }
}

namespace {

// One pass over g: every value's finiteness (exponent field all ones: Inf
// or NaN), or-ed without a branch so that the loop vectorises, and the
// unscaled value. Chunks through xw::ParallelFor; the flag is an or of the
// chunks' flags and every value is its own, so the thread count changes no
// bit. Returns true when all were finite.
template <typename Unscale>
bool CheckAndUnscale(float* g, int64_t n, Unscale unscale) {
  const int64_t grain = 1 << 15;
  const int64_t chunks = (n + grain - 1) / grain;
  std::vector<uint8_t> bad(static_cast<size_t>(std::max<int64_t>(chunks, 1)), 0);
  ParallelFor(n, grain, [&](int64_t i0, int64_t i1) {
    uint32_t any = 0;
    for (int64_t i = i0; i < i1; ++i) {
      uint32_t u;
      std::memcpy(&u, g + i, sizeof(u));
      any |= static_cast<uint32_t>((u & 0x7f800000u) == 0x7f800000u);
      g[i] = unscale(g[i]);
    }
    bad[static_cast<size_t>(i0 / grain)] |= static_cast<uint8_t>(any);
  });
  for (uint8_t b : bad) {
    if (b != 0) return false;
  }
  return true;
}

}  // namespace

bool LossScaler::UnscaleAndCheck(float* g, int64_t n) const {
  switch (kind_) {
    case LossScaling::kNone: break;
    case LossScaling::kTorchDynamic: {
      // inv = reciprocal in double, cast to fp32; every grad is scaled even
      // after an inf, and not at all when inv == 1 (AmpKernels.cu).
      const float inv = static_cast<float>(1.0 / static_cast<double>(scale_));
      if (inv != 1.0f) return CheckAndUnscale(g, n, [inv](float v) { return v * inv; });
      break;
    }
    case LossScaling::kKeras3Dynamic: {
      const float scale = scale_;
      return CheckAndUnscale(g, n, [scale](float v) { return v / scale; });
    }
    case LossScaling::kKeras2Dynamic: {
      const float inv = 1.0f / scale_;
      return CheckAndUnscale(g, n, [inv](float v) { return v * inv; });
    }
  }
  return CheckAndUnscale(g, n, [](float v) { return v; });
}

bool LossScaler::Update(bool found_inf) {
  if (!enabled()) return false;
  if (found_inf) {
    ++skipped_;
    counter_ = 0;
    switch (kind_) {
      case LossScaling::kTorchDynamic:
        scale_ = static_cast<float>(static_cast<double>(scale_) * 0.5);  // backoff_factor
        break;
      case LossScaling::kKeras3Dynamic: scale_ = scale_ / 2.0f; break;
      case LossScaling::kKeras2Dynamic: scale_ = std::max(scale_ / 2.0f, 1.0f); break;
      case LossScaling::kNone: break;
    }
    return true;
  }
  switch (kind_) {
    case LossScaling::kTorchDynamic: {
      const int64_t s = counter_ + 1;
      if (s == kGrowthInterval) {
        const float grown = static_cast<float>(static_cast<double>(scale_) * 2.0);
        if (std::isfinite(grown)) scale_ = grown;
        counter_ = 0;
      } else {
        counter_ = s;
      }
      break;
    }
    case LossScaling::kKeras3Dynamic:
      if (counter_ == kGrowthInterval - 1) {
        scale_ = scale_ * 2.0f;
        counter_ = 0;
      } else {
        ++counter_;
      }
      break;
    case LossScaling::kKeras2Dynamic:
      if (counter_ + 1 >= kGrowthInterval) {
        const float grown = scale_ * 2.0f;
        if (std::isfinite(grown)) scale_ = grown;
        counter_ = 0;
      } else {
        ++counter_;
      }
      break;
    case LossScaling::kNone: break;
  }
  return false;
}

}  // namespace xw
