#include "xwires/core/dropout.h"

#include <algorithm>
#include <string>

#include "layer_util.h"
#include "xwires/core/parallel.h"

namespace xw {

Status DropoutForward(const Tensor& x, float p, const Philox& rng,
                      uint64_t offset, bool training, Tensor* y, Tensor* mask) {
  XW_RETURN_IF_ERROR(layers::CheckNotNull("DropoutForward", "y", y));
  if (!(p >= 0.0f && p <= 1.0f)) {  // also rejects NaN
    return Status::InvalidArgument("DropoutForward: drop probability p = " +
                                   std::to_string(p) + " is outside [0, 1]");
  }
  const int64_t n = x.size();
  if (!training || p == 0.0f) {
    if (y != &x) *y = x;
    if (mask) {
      mask->Resize(x.shape());
      mask->Fill(1.0f);
    }
    return Status::OK();
  }
  if (y != &x) y->Resize(x.shape());
  if (mask) mask->Resize(x.shape());
  // p == 1 keeps nothing; the scale is then never used (and would be inf).
  const float scale = p < 1.0f ? 1.0f / (1.0f - p) : 0.0f;
  const float* in = x.data();
  float* out = y->data();
  float* m = mask ? mask->data() : nullptr;
  ParallelFor(n, layers::GrainForElements(n), [&](int64_t b, int64_t e) {
    // The uniforms of a run of elements at once: one Philox block per four.
    constexpr int64_t kRun = 256;
    float u[kRun];
    for (int64_t r = b; r < e; r += kRun) {
      const int64_t len = std::min(kRun, e - r);
      rng.UniformRange(offset + static_cast<uint64_t>(r), len, u);
      for (int64_t j = 0; j < len; ++j) {
        const int64_t i = r + j;
        const bool keep = u[j] >= p;
        out[i] = keep ? in[i] * scale : 0.0f;
        if (m) m[i] = keep ? scale : 0.0f;
      }
    }
  });
  return Status::OK();
}

Status DropoutBackward(const Tensor& dy, const Tensor& mask, Tensor* dx) {
  XW_RETURN_IF_ERROR(layers::CheckNotNull("DropoutBackward", "dx", dx));
  XW_RETURN_IF_ERROR(
      layers::CheckShape("DropoutBackward", "mask", mask, dy.shape()));
  if (dx != &dy) dx->Resize(dy.shape());
  const float* g = dy.data();
  const float* m = mask.data();
  float* out = dx->data();
  ParallelFor(dy.size(), layers::GrainForElements(dy.size()),
              [&](int64_t b, int64_t e) {
                for (int64_t i = b; i < e; ++i) out[i] = g[i] * m[i];
              });
  return Status::OK();
}

}  // namespace xw
