// Batch-norm statistics accumulated in double, as PyTorch 1.13's CPU kernels
// do for float32 input (BatchNormAccumulate::kDouble, xwires/core/batchnorm.h).
// Internal to the layers group; callers validate shapes first.
#ifndef XWIRES_SRC_LAYERS_BATCHNORM_ACC64_H_
#define XWIRES_SRC_LAYERS_BATCHNORM_ACC64_H_

#include <cstdint>

#include "xwires/core/reduce.h"

namespace xw::layers {

// x viewed as [n, c, s]; the channels [c0, c0 + k) of one worker.
struct Acc64Channels {
  const float* x = nullptr;
  int64_t n = 0, c = 0, s = 0;
  int64_t c0 = 0;
  int k = 0;
};

// batch_norm_cpu_collect_stats_contiguous_impl: for each channel j, sum +=
// x and then var_sum += float((x - mean) * (x - mean)), each one double
// accumulated sequentially over (n, s); mean[j] = float(sum / (n * s)),
// var_sum[j] = float(var_sum). mean and var_sum hold k floats.
void Acc64Stats(const Acc64Channels& ch, float* mean, float* var_sum);

// batch_norm_cpu_backward_contiguous_impl's two reductions: for each image
// and channel j, the plane's Sum(dy) and Dot(x - mean[j], dy) in `plane`'s
// float order (kLanes on a plane shorter than its width: sequential,
// products rounded, as ATen's vec_reduce_all), each added to a double.
// mean, sum_dy and dotp hold k values.
void Acc64Grads(const Acc64Channels& ch, const float* dy, const float* mean,
                const ReduceSpec& plane, double* sum_dy, double* dotp);

// The double PyTorch receives for eps: that of the float's shortest
// round-trip decimal (the profile's "1e-05" is the Python float 1e-5).
double EpsAsWritten(float eps);

}  // namespace xw::layers

#endif  // XWIRES_SRC_LAYERS_BATCHNORM_ACC64_H_
