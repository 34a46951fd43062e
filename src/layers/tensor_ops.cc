#include "xwires/core/tensor_ops.h"

#include <cmath>
#include <cstring>
#include <string>

#include "layer_util.h"
#include "src/fma_scalar.h"
#include "xwires/core/parallel.h"

namespace xw {

namespace {

// y = a + b, then ReLU'd (as ReluForward: NaN passes) when kRelu.
template <bool kRelu>
Status Add(const char* op, const Tensor& a, const Tensor& b, Tensor* y) {
  XW_RETURN_IF_ERROR(layers::CheckNotNull(op, "y", y));
  XW_RETURN_IF_ERROR(layers::CheckShape(op, "b", b, a.shape()));
  if (y != &a && y != &b) y->Resize(a.shape());
  const float* pa = a.data();
  const float* pb = b.data();
  float* out = y->data();
  ParallelFor(a.size(), layers::GrainForElements(a.size()),
              [pa, pb, out](int64_t s, int64_t e) {  // by value: vectorizes
                for (int64_t i = s; i < e; ++i) {
                  const float sum = pa[i] + pb[i];
                  out[i] = (kRelu && sum < 0.0f) ? 0.0f : sum;
                }
              });
  return Status::OK();
}

}  // namespace

Status AddForward(const Tensor& a, const Tensor& b, Tensor* y) {
  return Add<false>("AddForward", a, b, y);
}

Status AddReluForward(const Tensor& a, const Tensor& b, Tensor* y) {
  return Add<true>("AddReluForward", a, b, y);
}

Status AddBackward(const Tensor& dy, Tensor* da, Tensor* db) {
  if (da && da != &dy) *da = dy;
  if (db && db != &dy) *db = dy;
  return Status::OK();
}

namespace {

// [N, C, H, W] with rank 4 or an error naming the op and the argument.
Status CheckNchw(const char* op, const std::string& what, const Tensor& t) {
  if (t.rank() == 4) return Status::OK();
  return Status::InvalidArgument(std::string(op) + ": " + what +
                                 " must be NCHW (rank 4), got " +
                                 ShapeToString(t.shape()));
}

// Copies `channels` planes per sample between tensors with different C:
// dst[n, dst_c0 + k] = src[n, src_c0 + k] for k < channels.
void CopyChannels(const float* src, int64_t src_c, int64_t src_c0, float* dst,
                  int64_t dst_c, int64_t dst_c0, int64_t n, int64_t channels,
                  int64_t plane) {
  ParallelFor(n, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      std::memcpy(dst + (i * dst_c + dst_c0) * plane,
                  src + (i * src_c + src_c0) * plane,
                  sizeof(float) * channels * plane);
    }
  });
}

}  // namespace

Status ChannelConcat(const std::vector<const Tensor*>& inputs, Tensor* y) {
  constexpr const char* kOp = "ChannelConcat";
  XW_RETURN_IF_ERROR(layers::CheckNotNull(kOp, "y", y));
  if (inputs.empty())
    return Status::InvalidArgument("ChannelConcat: no inputs");
  int64_t total_c = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::string name = "input " + std::to_string(i);
    XW_RETURN_IF_ERROR(layers::CheckNotNull(kOp, name.c_str(), inputs[i]));
    if (inputs[i] == y)
      return Status::InvalidArgument("ChannelConcat: y is also " + name);
    XW_RETURN_IF_ERROR(CheckNchw(kOp, name, *inputs[i]));
    const Shape& s = inputs[i]->shape();
    const Shape& s0 = inputs[0]->shape();
    if (s[0] != s0[0] || s[2] != s0[2] || s[3] != s0[3]) {
      return Status::InvalidArgument(
          "ChannelConcat: " + name + " has shape " + ShapeToString(s) +
          ", incompatible with input 0 " + ShapeToString(s0) +
          " (N, H, W must match)");
    }
    total_c += s[1];
  }
  const Shape& s0 = inputs[0]->shape();
  y->Resize({s0[0], total_c, s0[2], s0[3]});
  const int64_t plane = s0[2] * s0[3];
  int64_t c0 = 0;
  for (const Tensor* in : inputs) {
    CopyChannels(in->data(), in->dim(1), 0, y->data(), total_c, c0, s0[0],
                 in->dim(1), plane);
    c0 += in->dim(1);
  }
  return Status::OK();
}

Status ChannelSplit(const Tensor& dy, const std::vector<int64_t>& channels,
                    const std::vector<Tensor*>& dxs) {
  constexpr const char* kOp = "ChannelSplit";
  XW_RETURN_IF_ERROR(CheckNchw(kOp, "dy", dy));
  if (channels.size() != dxs.size()) {
    return Status::InvalidArgument(
        "ChannelSplit: " + std::to_string(channels.size()) +
        " channel counts but " + std::to_string(dxs.size()) + " outputs");
  }
  int64_t total_c = 0;
  for (int64_t c : channels) {
    if (c < 0)
      return Status::InvalidArgument("ChannelSplit: negative channel count");
    total_c += c;
  }
  if (total_c != dy.dim(1)) {
    return Status::InvalidArgument("ChannelSplit: channel counts sum to " +
                                   std::to_string(total_c) + " but dy " +
                                   ShapeToString(dy.shape()) + " has " +
                                   std::to_string(dy.dim(1)));
  }
  const int64_t plane = dy.dim(2) * dy.dim(3);
  int64_t c0 = 0;
  for (size_t i = 0; i < dxs.size(); ++i) {
    if (dxs[i]) {
      if (dxs[i] == &dy)
        return Status::InvalidArgument("ChannelSplit: an output is dy");
      dxs[i]->Resize({dy.dim(0), channels[i], dy.dim(2), dy.dim(3)});
      CopyChannels(dy.data(), total_c, c0, dxs[i]->data(), channels[i], 0,
                   dy.dim(0), channels[i], plane);
    }
    c0 += channels[i];
  }
  return Status::OK();
}

Status Flatten(Tensor* x) {
  XW_RETURN_IF_ERROR(layers::CheckNotNull("Flatten", "x", x));
  if (x->rank() < 1) return Status::InvalidArgument("Flatten: x has rank 0");
  int64_t rest = 1;  // product of the trailing dims (well defined when N == 0)
  for (int i = 1; i < x->rank(); ++i) rest *= x->dim(i);
  Shape flat = {x->dim(0), rest};
  x->Reshape(flat);
  return Status::OK();
}

void Scale(float* x, int64_t n, float alpha) {
  ParallelFor(n, layers::GrainForElements(n), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) x[i] *= alpha;
  });
}

void Axpy(float alpha, const float* x, int64_t n, float* y, bool fma) {
  ParallelFor(n, layers::GrainForElements(n), [&](int64_t b, int64_t e) {
    if (fma) {
      for (int64_t i = b; i < e; ++i) y[i] = FmaF(alpha, x[i], y[i]);
    } else {
      for (int64_t i = b; i < e; ++i) y[i] += alpha * x[i];
    }
  });
}

void Scale(Tensor* x, float alpha) { Scale(x->data(), x->size(), alpha); }

Status Axpy(float alpha, const Tensor& x, Tensor* y, bool fma) {
  XW_RETURN_IF_ERROR(layers::CheckNotNull("Axpy", "y", y));
  XW_RETURN_IF_ERROR(layers::CheckShape("Axpy", "y", *y, x.shape()));
  Axpy(alpha, x.data(), x.size(), y->data(), fma);
  return Status::OK();
}

}  // namespace xw
