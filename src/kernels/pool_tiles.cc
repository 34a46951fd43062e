// Max pooling's common case, 2x2 windows of stride 2 (pool_tiles.h), on
// Highway: one output per lane, the window's four values compared in
// row-major order with masks instead of branches (random activations make
// the comparisons unpredictable). Selection only, so every target gives the
// same outputs and indices.
#include <cmath>
#include <cstdint>

#include "src/kernels/pool_tiles.h"

#ifndef XWIRES_POOL_TILES_SHARED_
#define XWIRES_POOL_TILES_SHARED_
namespace xw {
namespace kernels {
namespace {

// One step of the scan for one output: v (at index i) replaces the best so
// far when it is greater, or NaN, and the best is not NaN.
inline void Take(float v, int32_t i, float* best, int32_t* at) {
  if (!std::isnan(*best) && (v > *best || std::isnan(v))) {
    *best = v;
    *at = i;
  }
}

// Outputs [ow0, ow) of output row r of a plane w floats wide.
inline void ScalarRow(const float* in, int64_t w, int64_t r, int64_t ow0, int64_t ow,
                      float* out, int32_t* idx) {
  const int32_t r0 = static_cast<int32_t>(2 * r * w), r1 = r0 + static_cast<int32_t>(w);
  for (int64_t o = ow0; o < ow; ++o) {
    const int32_t c = static_cast<int32_t>(2 * o);
    float best = in[r0 + c];
    int32_t at = r0 + c;
    Take(in[r0 + c + 1], r0 + c + 1, &best, &at);
    Take(in[r1 + c], r1 + c, &best, &at);
    Take(in[r1 + c + 1], r1 + c + 1, &best, &at);
    out[o] = best;
    idx[o] = at;
  }
}

}  // namespace
}  // namespace kernels
}  // namespace xw
#endif  // XWIRES_POOL_TILES_SHARED_

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/kernels/pool_tiles.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "src/kernels/hwy_ops.h"

HWY_BEFORE_NAMESPACE();
namespace xw {
namespace kernels {
namespace HWY_NAMESPACE {

void MaxPool2x2PlaneT(const float* in, int64_t w, int64_t oh, int64_t ow, float* out,
                      int32_t* idx) {
#if HWY_TARGET == HWY_SCALAR
  for (int64_t r = 0; r < oh; ++r) ScalarRow(in, w, r, 0, ow, out + r * ow, idx + r * ow);
#else
  const DF d;
  const hn::RebindToSigned<DF> di;
  using VI = hn::Vec<decltype(di)>;
  const int64_t lanes = hn::Lanes(d);
  // Index of the first window entry of lane j, relative to the vector's
  // first output: 2j.
  const VI pair = hn::Add(hn::Iota(di, 0), hn::Iota(di, 0));
  for (int64_t r = 0; r < oh; ++r) {
    const float* row0 = in + 2 * r * w;
    const float* row1 = row0 + w;
    int64_t o = 0;
    // Each vector of outputs reads 2L floats of each row: in bounds while
    // 2 (o + L) <= 2 ow <= w.
    for (; o + lanes <= ow; o += lanes) {
      const VF lo0 = hn::LoadU(d, row0 + 2 * o), hi0 = hn::LoadU(d, row0 + 2 * o + lanes);
      const VF lo1 = hn::LoadU(d, row1 + 2 * o), hi1 = hn::LoadU(d, row1 + 2 * o + lanes);
      // The window's entries in row-major order: even and odd columns.
      const VF a = hn::ConcatEven(d, hi0, lo0), b = hn::ConcatOdd(d, hi0, lo0);
      const VF c = hn::ConcatEven(d, hi1, lo1), e = hn::ConcatOdd(d, hi1, lo1);
      const VI ia = hn::Add(pair, hn::Set(di, static_cast<int32_t>(2 * r * w + 2 * o)));
      VF best = a;
      VI at = ia;
      auto take = [&](VF v, VI iv) HWY_ATTR {
        const auto m = hn::And(hn::Not(hn::IsNaN(best)), hn::Or(hn::Gt(v, best), hn::IsNaN(v)));
        best = hn::IfThenElse(m, v, best);
        at = hn::IfThenElse(hn::RebindMask(di, m), iv, at);
      };
      take(b, hn::Add(ia, hn::Set(di, 1)));
      take(c, hn::Add(ia, hn::Set(di, static_cast<int32_t>(w))));
      take(e, hn::Add(ia, hn::Set(di, static_cast<int32_t>(w + 1))));
      hn::StoreU(best, d, out + r * ow + o);
      hn::StoreU(at, di, idx + r * ow + o);
    }
    ScalarRow(in, w, r, o, ow, out + r * ow, idx + r * ow);
  }
#endif
}

}  // namespace HWY_NAMESPACE
}  // namespace kernels
}  // namespace xw
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace xw {
namespace kernels {

HWY_EXPORT(MaxPool2x2PlaneT);

void MaxPool2x2Plane(const float* in, int64_t w, int64_t oh, int64_t ow, float* out,
                     int32_t* idx) {
  HWY_DYNAMIC_DISPATCH(MaxPool2x2PlaneT)(in, w, oh, ow, out, idx);
}

}  // namespace kernels
}  // namespace xw
#endif  // HWY_ONCE
