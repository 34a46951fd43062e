// Double-accumulated batch-norm statistics (batchnorm_acc64.h). Each channel
// is one sequential double chain, so the bits depend on neither the SIMD
// target nor the thread count; up to 8 channels advance together so that
// the adds' latency of one chain hides behind the others'.
#include "batchnorm_acc64.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <string>

namespace xw::layers {

namespace {

constexpr int kMaxChains = 8;

// acc[j] += term(j, x of channel c0 + j at (image, pixel)) for every image
// and pixel in order, j < ch.k <= kMaxChains.
template <typename Term>
void Chains(const Acc64Channels& ch, const Term& term, double* acc) {
  double a[kMaxChains] = {};
  for (int64_t img = 0; img < ch.n; ++img) {
    const float* base = ch.x + (img * ch.c + ch.c0) * ch.s;
    for (int64_t i = 0; i < ch.s; ++i) {
      for (int j = 0; j < ch.k; ++j) a[j] += term(j, base[j * ch.s + i]);
    }
  }
  for (int j = 0; j < ch.k; ++j) acc[j] = a[j];
}

}  // namespace

void Acc64Stats(const Acc64Channels& ch, float* mean, float* var_sum) {
  for (int j0 = 0; j0 < ch.k; j0 += kMaxChains) {
    Acc64Channels part = ch;
    part.c0 = ch.c0 + j0;
    part.k = std::min(kMaxChains, ch.k - j0);
    double sum[kMaxChains], sq[kMaxChains];
    Chains(part, [](int, float v) { return static_cast<double>(v); }, sum);
    const double count = static_cast<double>(ch.n * ch.s);
    float m[kMaxChains];
    for (int j = 0; j < part.k; ++j) m[j] = static_cast<float>(sum[j] / count);
    // The square in float (ATen's `(x - mean) * (x - mean)` on floats),
    // then widened: no contraction across the conversion.
    Chains(part,
           [&m](int j, float v) {
             const float d = v - m[j];
             const float d2 = d * d;
             return static_cast<double>(d2);
           },
           sq);
    for (int j = 0; j < part.k; ++j) {
      mean[j0 + j] = m[j];
      var_sum[j0 + j] = static_cast<float>(sq[j]);
    }
  }
}

void Acc64Grads(const Acc64Channels& ch, const float* dy, const float* mean,
                const ReduceSpec& plane, double* sum_dy, double* dotp) {
  ReduceSpec spec = plane;
  if (spec.order == ReduceOrder::kLanes && ch.s < spec.lanes) {
    spec = ReduceSpec{ReduceOrder::kSequential, 1, /*fma=*/false};
  }
  for (int j = 0; j < ch.k; ++j) {
    sum_dy[j] = 0.0;
    dotp[j] = 0.0;
  }
  for (int64_t img = 0; img < ch.n; ++img) {
    for (int j = 0; j < ch.k; ++j) {
      const int64_t base = (img * ch.c + ch.c0 + j) * ch.s;
      const Segmented xs{ch.x + base, ch.s, ch.s, mean[j]};
      const Segmented gs{dy + base, ch.s, ch.s, 0.0f};
      float s = 0.0f, d = 0.0f;
      SegmentedSumAndDot(xs, gs, ch.s, spec, &s, &d);
      sum_dy[j] += s;
      dotp[j] += d;
    }
  }
}

double EpsAsWritten(float eps) {
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof(buf), eps);
  return std::strtod(std::string(buf, res.ptr).c_str(), nullptr);
}

}  // namespace xw::layers
