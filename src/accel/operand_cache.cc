#include "src/accel/operand_cache.h"

namespace xw {
namespace accel {

void RoundInto(const Tensor& t, OperandRounding mode, bool flush_bf16_subnormals, Tensor* dst) {
  dst->Resize(t.shape());  // keeps the floats when the shape is unchanged
  RoundOperands(t.data(), dst->data(), t.size(), mode, flush_bf16_subnormals);
}

RoundedPair RoundForward(const Tensor& x, const Tensor& w, OperandRounding mode, bool flush,
                         AccelOperandCache* cache, AccelOperandCache* local) {
  AccelOperandCache* into = cache != nullptr ? cache : local;
  RoundInto(x, mode, flush, &into->x);
  RoundInto(w, mode, flush, &into->w);
  into->x_source = x.data();
  into->w_source = w.data();
  into->valid = true;
  return {&into->x, &into->w};
}

RoundedPair RoundBackward(const Tensor& x, const Tensor& w, OperandRounding mode, bool flush,
                          AccelOperandCache* cache, AccelOperandCache* local) {
  if (cache != nullptr && cache->valid && cache->x_source == x.data() &&
      cache->w_source == w.data() && cache->x.shape() == x.shape() &&
      cache->w.shape() == w.shape()) {
    cache->valid = false;
    return {&cache->x, &cache->w};
  }
  if (cache != nullptr) cache->valid = false;
  return RoundForward(x, w, mode, flush, nullptr, local);
}

}  // namespace accel
}  // namespace xw
