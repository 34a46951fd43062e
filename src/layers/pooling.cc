// 2-D max / average / global average pooling over NCHW planes.
#include "xwires/core/pooling.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "layer_util.h"
#include "src/kernels/pool_tiles.h"
#include "xwires/core/accel_numerics.h"
#include "xwires/core/parallel.h"

namespace xw {

Pool2dSpec Pool2dSpec::Square(int k, int s, int p, bool count_include_pad) {
  Pool2dSpec spec;
  spec.kernel_h = spec.kernel_w = k;
  spec.stride_h = spec.stride_w = s;
  spec.pad_top = spec.pad_bottom = spec.pad_left = spec.pad_right = p;
  spec.count_include_pad = count_include_pad;
  return spec;
}

void TfSamePads(int64_t in, int k, int stride, int* pad_before,
                 int* pad_after) {
  const int64_t out = (in + stride - 1) / stride;
  const int64_t total = std::max<int64_t>((out - 1) * stride + k - in, 0);
  *pad_before = static_cast<int>(total / 2);
  *pad_after = static_cast<int>(total - total / 2);
}

namespace {

std::string SpecString(const Pool2dSpec& s) {
  return "kernel " + std::to_string(s.kernel_h) + "x" +
         std::to_string(s.kernel_w) + ", stride " + std::to_string(s.stride_h) +
         "x" + std::to_string(s.stride_w) + ", pad (top " +
         std::to_string(s.pad_top) + ", bottom " +
         std::to_string(s.pad_bottom) + ", left " + std::to_string(s.pad_left) +
         ", right " + std::to_string(s.pad_right) + ")";
}

// Input and output geometry of one pooling call.
struct Geometry {
  int64_t planes, h, w, oh, ow;
};

Result<Geometry> GeometryOf(const char* op, const Shape& x,
                            const Pool2dSpec& spec) {
  auto out = Pool2dOutputShape(x, spec);
  if (!out.ok()) return out.status().WithContext(op);
  return Geometry{x[0] * x[1], x[2], x[3], (*out)[2], (*out)[3]};
}

// The window of output (oh, ow) clipped to the real input: rows [h0, h1),
// columns [w0, w1).
struct Window {
  int64_t h0, h1, w0, w1;
};

Window WindowAt(const Geometry& g, const Pool2dSpec& s, int64_t oh,
                int64_t ow) {
  const int64_t hs = oh * s.stride_h - s.pad_top;
  const int64_t ws = ow * s.stride_w - s.pad_left;
  return {std::max<int64_t>(hs, 0), std::min<int64_t>(hs + s.kernel_h, g.h),
          std::max<int64_t>(ws, 0), std::min<int64_t>(ws + s.kernel_w, g.w)};
}

float AvgDivisor(const Pool2dSpec& s, const Window& win) {
  // Without ceil mode every window lies inside the padded input, so the
  // padded-window size is the full kernel.
  if (s.count_include_pad) return static_cast<float>(s.kernel_h * s.kernel_w);
  return static_cast<float>((win.h1 - win.h0) * (win.w1 - win.w0));
}

Status CheckDy(const char* op, const Tensor& dy, const Shape& x_shape,
               const Geometry& g) {
  return layers::CheckShape(op, "dy", dy, {x_shape[0], x_shape[1], g.oh, g.ow});
}

}  // namespace

Result<Shape> Pool2dOutputShape(const Shape& x, const Pool2dSpec& s) {
  if (x.size() != 4) {
    return Status::InvalidArgument("pooling input must be NCHW (rank 4), got " +
                                   ShapeToString(x));
  }
  if (s.kernel_h < 1 || s.kernel_w < 1 || s.stride_h < 1 || s.stride_w < 1) {
    return Status::InvalidArgument("pooling kernel and stride must be >= 1: " +
                                   SpecString(s));
  }
  if (s.pad_top < 0 || s.pad_bottom < 0 || s.pad_left < 0 || s.pad_right < 0 ||
      s.pad_top >= s.kernel_h || s.pad_bottom >= s.kernel_h ||
      s.pad_left >= s.kernel_w || s.pad_right >= s.kernel_w) {
    return Status::InvalidArgument("pooling padding must be in [0, kernel): " +
                                   SpecString(s));
  }
  const int64_t ph = x[2] + s.pad_top + s.pad_bottom,
                pw = x[3] + s.pad_left + s.pad_right;
  if (ph < s.kernel_h || pw < s.kernel_w) {
    return Status::InvalidArgument(
        "pooling window larger than the padded input " + ShapeToString(x) +
        ": " + SpecString(s));
  }
  return Shape{x[0], x[1], (ph - s.kernel_h) / s.stride_h + 1,
               (pw - s.kernel_w) / s.stride_w + 1};
}

Status MaxPool2dForward(const Tensor& x, const Pool2dSpec& spec, Tensor* y,
                        std::vector<int32_t>* argmax) {
  constexpr const char* kOp = "MaxPool2dForward";
  XW_RETURN_IF_ERROR(layers::CheckNotNull(kOp, "y", y));
  XW_RETURN_IF_ERROR(layers::CheckNotNull(kOp, "argmax", argmax));
  XW_ASSIGN_OR_RETURN(const Geometry g, GeometryOf(kOp, x.shape(), spec));
  y->Resize({x.dim(0), x.dim(1), g.oh, g.ow});
  argmax->resize(y->size());
  const bool two_by_two = spec.kernel_h == 2 && spec.kernel_w == 2 && spec.stride_h == 2 &&
                          spec.stride_w == 2 && spec.pad_top == 0 && spec.pad_left == 0;
  ParallelFor(g.planes, 1, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      const float* in = x.data() + p * g.h * g.w;
      float* out = y->data() + p * g.oh * g.ow;
      int32_t* idx = argmax->data() + p * g.oh * g.ow;
      if (two_by_two) {
        kernels::MaxPool2x2Plane(in, g.w, g.oh, g.ow, out, idx);
        continue;
      }
      for (int64_t oh = 0; oh < g.oh; ++oh) {
        for (int64_t ow = 0; ow < g.ow; ++ow) {
          const Window win = WindowAt(g, spec, oh, ow);
          int64_t best = win.h0 * g.w + win.w0;
          for (int64_t h = win.h0; h < win.h1; ++h) {
            for (int64_t w = win.w0; w < win.w1; ++w) {
              const float v = in[h * g.w + w];
              // Strict > keeps the first of equal values; the first NaN wins.
              if (!std::isnan(in[best]) && (v > in[best] || std::isnan(v)))
                best = h * g.w + w;
            }
          }
          out[oh * g.ow + ow] = in[best];
          idx[oh * g.ow + ow] = static_cast<int32_t>(best);
        }
      }
    }
  });
  return Status::OK();
}

Status MaxPool2dBackward(const Tensor& dy, const std::vector<int32_t>& argmax,
                         const Shape& x_shape, const Pool2dSpec& spec,
                         Tensor* dx) {
  return MaxPool2dBackward(dy, argmax, x_shape, spec, PoolScatterOrder{}, dx);
}

namespace {

// One plane's random scatter: the addends of every input element listed in
// output row-major order (counting sort by destination), then each element
// with two or more of them summed into +0 in its Philox permutation.
void RandomScatterPlane(const float* grad, const int32_t* idx, int64_t outputs, int64_t plane,
                        int64_t first_element, const PoolScatterOrder& order, float* out,
                        std::vector<int32_t>* offsets, std::vector<int32_t>* sources,
                        std::vector<int64_t>* perm) {
  offsets->assign(static_cast<size_t>(plane + 1), 0);
  for (int64_t o = 0; o < outputs; ++o) ++(*offsets)[idx[o] + 1];
  for (int64_t i = 0; i < plane; ++i) (*offsets)[i + 1] += (*offsets)[i];
  sources->resize(static_cast<size_t>(outputs));
  std::vector<int32_t> fill(offsets->begin(), offsets->end() - 1);
  for (int64_t o = 0; o < outputs; ++o) (*sources)[fill[idx[o]]++] = static_cast<int32_t>(o);
  for (int64_t i = 0; i < plane; ++i) {
    const int32_t begin = (*offsets)[i], count = (*offsets)[i + 1] - begin;
    if (count == 0) continue;
    float r = 0.0f;
    if (count == 1) {
      r = r + grad[(*sources)[begin]];
    } else {
      ScatterPermutation(order.seed, order.step, order.tensor,
                         static_cast<uint64_t>(first_element + i), count, perm);
      for (int32_t k = 0; k < count; ++k) r = r + grad[(*sources)[begin + (*perm)[k]]];
    }
    out[i] = r;
  }
}

}  // namespace

Status MaxPool2dBackward(const Tensor& dy, const std::vector<int32_t>& argmax,
                         const Shape& x_shape, const Pool2dSpec& spec,
                         const PoolScatterOrder& order, Tensor* dx) {
  constexpr const char* kOp = "MaxPool2dBackward";
  XW_RETURN_IF_ERROR(layers::CheckNotNull(kOp, "dx", dx));
  XW_ASSIGN_OR_RETURN(const Geometry g, GeometryOf(kOp, x_shape, spec));
  XW_RETURN_IF_ERROR(CheckDy(kOp, dy, x_shape, g));
  if (static_cast<int64_t>(argmax.size()) != dy.size()) {
    return Status::InvalidArgument(
        "MaxPool2dBackward: argmax has " + std::to_string(argmax.size()) +
        " entries, dy has " + std::to_string(dy.size()));
  }
  dx->Resize(x_shape);
  dx->SetZero();
  const int64_t plane = g.h * g.w;
  for (int32_t i : argmax) {
    if (i < 0 || i >= plane) {
      return Status::InvalidArgument(
          "MaxPool2dBackward: argmax index " + std::to_string(i) +
          " outside the input plane of " + std::to_string(plane));
    }
  }
  // Windows overlap only where a stride is below its kernel size.
  const bool overlap = spec.stride_h < spec.kernel_h || spec.stride_w < spec.kernel_w;
  if (order.random && overlap) {
    ParallelFor(g.planes, 1, [&](int64_t p0, int64_t p1) {
      std::vector<int32_t> offsets, sources;
      std::vector<int64_t> perm;
      for (int64_t p = p0; p < p1; ++p) {
        RandomScatterPlane(dy.data() + p * g.oh * g.ow, argmax.data() + p * g.oh * g.ow,
                           g.oh * g.ow, plane, p * plane, order, dx->data() + p * plane,
                           &offsets, &sources, &perm);
      }
    });
    return Status::OK();
  }
  ParallelFor(g.planes, 1, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      float* out = dx->data() + p * plane;
      const float* grad = dy.data() + p * g.oh * g.ow;
      const int32_t* idx = argmax.data() + p * g.oh * g.ow;
      for (int64_t o = 0; o < g.oh * g.ow; ++o) out[idx[o]] += grad[o];
    }
  });
  return Status::OK();
}

Status AvgPool2dForward(const Tensor& x, const Pool2dSpec& spec,
                        const ReduceSpec& reduce, Tensor* y) {
  constexpr const char* kOp = "AvgPool2dForward";
  XW_RETURN_IF_ERROR(layers::CheckNotNull(kOp, "y", y));
  XW_ASSIGN_OR_RETURN(const Geometry g, GeometryOf(kOp, x.shape(), spec));
  y->Resize({x.dim(0), x.dim(1), g.oh, g.ow});
  ParallelFor(g.planes, 1, [&](int64_t p0, int64_t p1) {
    std::vector<float> buf(static_cast<size_t>(spec.kernel_h) * spec.kernel_w);
    for (int64_t p = p0; p < p1; ++p) {
      const float* in = x.data() + p * g.h * g.w;
      float* out = y->data() + p * g.oh * g.ow;
      for (int64_t oh = 0; oh < g.oh; ++oh) {
        for (int64_t ow = 0; ow < g.ow; ++ow) {
          const Window win = WindowAt(g, spec, oh, ow);
          int64_t k = 0;
          for (int64_t h = win.h0; h < win.h1; ++h) {
            for (int64_t w = win.w0; w < win.w1; ++w)
              buf[k++] = in[h * g.w + w];
          }
          out[oh * g.ow + ow] =
              Sum(buf.data(), k, reduce) / AvgDivisor(spec, win);
        }
      }
    }
  });
  return Status::OK();
}

Status AvgPool2dBackward(const Tensor& dy, const Shape& x_shape,
                         const Pool2dSpec& spec, Tensor* dx) {
  constexpr const char* kOp = "AvgPool2dBackward";
  XW_RETURN_IF_ERROR(layers::CheckNotNull(kOp, "dx", dx));
  XW_ASSIGN_OR_RETURN(const Geometry g, GeometryOf(kOp, x_shape, spec));
  XW_RETURN_IF_ERROR(CheckDy(kOp, dy, x_shape, g));
  dx->Resize(x_shape);
  dx->SetZero();
  ParallelFor(g.planes, 1, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      float* out = dx->data() + p * g.h * g.w;
      const float* grad = dy.data() + p * g.oh * g.ow;
      for (int64_t oh = 0; oh < g.oh; ++oh) {
        for (int64_t ow = 0; ow < g.ow; ++ow) {
          const Window win = WindowAt(g, spec, oh, ow);
          const float share = grad[oh * g.ow + ow] / AvgDivisor(spec, win);
          for (int64_t h = win.h0; h < win.h1; ++h) {
            for (int64_t w = win.w0; w < win.w1; ++w) out[h * g.w + w] += share;
          }
        }
      }
    }
  });
  return Status::OK();
}

Status GlobalAvgPoolForward(const Tensor& x, const ReduceSpec& reduce,
                            Tensor* y) {
  XW_RETURN_IF_ERROR(layers::CheckNotNull("GlobalAvgPoolForward", "y", y));
  if (x.rank() != 4 || x.dim(2) * x.dim(3) == 0) {
    return Status::InvalidArgument(
        "GlobalAvgPoolForward: x must be NCHW with H, W >= 1, got " +
        ShapeToString(x.shape()));
  }
  const int64_t plane = x.dim(2) * x.dim(3);
  const float count = static_cast<float>(plane);
  y->Resize({x.dim(0), x.dim(1)});
  ParallelFor(y->size(), GrainFor(y->size()), [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p)
      (*y)[p] = Sum(x.data() + p * plane, plane, reduce) / count;
  });
  return Status::OK();
}

Status GlobalAvgPoolBackward(const Tensor& dy, const Shape& x_shape,
                             Tensor* dx) {
  XW_RETURN_IF_ERROR(layers::CheckNotNull("GlobalAvgPoolBackward", "dx", dx));
  if (x_shape.size() != 4 || x_shape[2] * x_shape[3] == 0) {
    return Status::InvalidArgument(
        "GlobalAvgPoolBackward: x must be NCHW with H, W >= 1, got " +
        ShapeToString(x_shape));
  }
  XW_RETURN_IF_ERROR(layers::CheckShape("GlobalAvgPoolBackward", "dy", dy,
                                        {x_shape[0], x_shape[1]}));
  const int64_t plane = x_shape[2] * x_shape[3];
  const float count = static_cast<float>(plane);
  dx->Resize(x_shape);
  ParallelFor(dy.size(), GrainFor(dy.size()), [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) {
      const float share = dy[p] / count;
      std::fill(dx->data() + p * plane, dx->data() + (p + 1) * plane, share);
    }
  });
  return Status::OK();
}

}  // namespace xw
