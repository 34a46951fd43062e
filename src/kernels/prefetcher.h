// Internal: software prefetches spread over the steps of a loop, for
// kernels whose next input lies where the hardware prefetchers do not
// follow (another image, a whole image ahead). Target-independent.
#ifndef XWIRES_SRC_KERNELS_PREFETCHER_H_
#define XWIRES_SRC_KERNELS_PREFETCHER_H_

#include <algorithm>
#include <cstdint>

#include "hwy/cache_control.h"

namespace xw {
namespace kernels {

// Software prefetches of a run of floats, spread over a loop's steps: e.g.
// the next image's source over the current image's tiles, where padding is
// bound by memory and the tiles by FMA throughput, so the fetch hides
// behind the arithmetic. Touches nothing.
class Prefetcher {
 public:
  // Fetches floats [data, data + floats) in `steps` about equal steps;
  // data == nullptr fetches nothing.
  Prefetcher(const float* data, int64_t floats, int64_t steps)
      : p_(reinterpret_cast<const char*>(data)),
        end_(data ? p_ + floats * static_cast<int64_t>(sizeof(float)) : p_),
        per_step_(data ? (floats * 4 / 64 + steps - 1) / std::max<int64_t>(steps, 1) : 0) {}
  void Step() {
    for (int64_t i = 0; i < per_step_ && p_ < end_; ++i, p_ += 64) {
      hwy::Prefetch(p_);
    }
  }

 private:
  const char* p_;
  const char* end_;
  int64_t per_step_;
};

}  // namespace kernels
}  // namespace xw

#endif  // XWIRES_SRC_KERNELS_PREFETCHER_H_
