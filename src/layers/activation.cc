#include "xwires/core/activation.h"

#include "layer_util.h"
#include "xwires/core/parallel.h"

namespace xw {

Status ReluForward(const Tensor& x, Tensor* y) {
  XW_RETURN_IF_ERROR(layers::CheckNotNull("ReluForward", "y", y));
  if (y != &x) y->Resize(x.shape());
  const float* in = x.data();
  float* out = y->data();
  ParallelFor(x.size(), layers::GrainForElements(x.size()),
              // Pointers by value: through a reference the loop reloads them
              // after every store (they might alias) and never vectorizes.
              [in, out](int64_t b, int64_t e) {
                // A NaN compares false, so it passes through (NaN propagates).
                for (int64_t i = b; i < e; ++i)
                  out[i] = in[i] < 0.0f ? 0.0f : in[i];
              });
  return Status::OK();
}

Status ReluBackward(const Tensor& ref, const Tensor& dy, Tensor* dx) {
  XW_RETURN_IF_ERROR(layers::CheckNotNull("ReluBackward", "dx", dx));
  XW_RETURN_IF_ERROR(layers::CheckShape("ReluBackward", "dy", dy, ref.shape()));
  if (dx != &dy) dx->Resize(dy.shape());
  const float* r = ref.data();
  const float* g = dy.data();
  float* out = dx->data();
  ParallelFor(dy.size(), layers::GrainForElements(dy.size()),
              [r, g, out](int64_t b, int64_t e) {
                // Both loads unconditional, so the select is branch-free
                // and vectorizes (the mask is data-dependent: a branch on it
                // mispredicts half the time).
                for (int64_t i = b; i < e; ++i) {
                  const float gi = g[i];
                  out[i] = r[i] > 0.0f ? gi : 0.0f;
                }
              });
  return Status::OK();
}

}  // namespace xw
