// Shape logic and algorithm dispatch for conv.h; the arithmetic lives in
// conv_direct.cc, conv_im2col.cc and conv_winograd.cc.
#include "xwires/core/conv.h"

#include <algorithm>
#include <string>
#include <vector>

#include "src/kernels/channel_chains.h"
#include "src/kernels/conv_internal.h"
#include "src/scratch_floats.h"
#include "xwires/core/parallel.h"
#include "xwires/core/reduce.h"

namespace xw {

namespace {

// out and (before, after) padding along one dimension.
Status AxisGeometry(const char* axis, int64_t in, int k, const Conv2dSpec& spec, int64_t* out,
                    int* before, int* after) {
  if (spec.pad_mode == PadMode::kSame) {
    *out = (in + spec.stride - 1) / spec.stride;
    const int64_t total = std::max<int64_t>((*out - 1) * spec.stride + k - in, 0);
    *before = static_cast<int>(total / 2);
    *after = static_cast<int>(total - total / 2);
  } else {
    *before = *after = spec.pad;
    const int64_t span = in + 2 * int64_t{spec.pad} - k;
    *out = span < 0 ? 0 : span / spec.stride + 1;
  }
  if (*out < 1) {
    return Status::InvalidArgument(std::string("conv: input ") + axis + " " +
                                   std::to_string(in) + " with kernel " + std::to_string(k) +
                                   " and pad " + std::to_string(spec.pad) +
                                   " gives an empty output");
  }
  return Status::OK();
}

ConvGeometry MustGeometry(const Shape& x, const Shape& w, const Conv2dSpec& spec) {
  Result<ConvGeometry> g = MakeConvGeometry(x, w, spec);
  if (!g.ok()) DieWithStatus(g.status());
  return *g;
}

void MustShape(const char* what, const Tensor& t, const Shape& want) {
  if (t.shape() != want) {
    DieWithStatus(Status::InvalidArgument(std::string("conv: ") + what + " " +
                                          ShapeToString(t.shape()) + " should be " +
                                          ShapeToString(want)));
  }
}

// db[o] = Sum over (n, oh, ow) of dy[n, o, :, :], in that index order.
// Groups of 8 channels go to batch norm's channel kernels (channel_chains.h),
// which advance the 8 channels' sums with one vector operation per term in
// the order of Sum: the same bits as gathering each channel and summing it,
// which kept one scalar chain per channel (sequential: an add's latency per
// term, 1% of a VGG-11 step under reference). Other orders, partial groups
// and planes under 8 pixels gather and Sum.
void BiasGradient(const ConvGeometry& g, const float* dy, const ReduceSpec& spec, float* db) {
  constexpr int64_t kGroup = 8;
  const int64_t plane = g.oh * g.ow;
  const bool grouped = kernels::ChannelReduce8Order(spec);
  ParallelFor(g.o, grouped ? kGroup : 1, [&](int64_t o0, int64_t o1) {
    if (o1 - o0 == kGroup &&
        kernels::ChannelReduce8(kernels::ChainKind::kSum, spec, dy + o0 * plane, nullptr, g.n,
                                g.o * plane, plane, nullptr, db + o0, nullptr)) {
      return;
    }
    ScratchFloats col(g.n * plane);  // each channel copied whole
    for (int64_t o = o0; o < o1; ++o) {
      for (int64_t n = 0; n < g.n; ++n) {
        const float* src = dy + (n * g.o + o) * plane;
        std::copy(src, src + plane, col.begin() + n * plane);
      }
      db[o] = Sum(col.data(), static_cast<int64_t>(col.size()), spec);
    }
  });
}

}  // namespace

Result<ConvGeometry> MakeConvGeometry(const Shape& x, const Shape& w, const Conv2dSpec& spec) {
  if (x.size() != 4) {
    return Status::InvalidArgument("conv: input " + ShapeToString(x) + " must be NCHW (rank 4)");
  }
  if (w.size() != 4) {
    return Status::InvalidArgument("conv: weight " + ShapeToString(w) +
                                   " must be OIHW (rank 4)");
  }
  if (w[1] != x[1]) {
    return Status::InvalidArgument("conv: weight " + ShapeToString(w) + " expects " +
                                   std::to_string(w[1]) + " input channels, input " +
                                   ShapeToString(x) + " has " + std::to_string(x[1]));
  }
  if (w[2] != spec.kernel_h || w[3] != spec.kernel_w) {
    return Status::InvalidArgument("conv: weight " + ShapeToString(w) + " does not match kernel " +
                                   std::to_string(spec.kernel_h) + "x" +
                                   std::to_string(spec.kernel_w));
  }
  if (spec.kernel_h < 1 || spec.kernel_w < 1) {
    return Status::InvalidArgument("conv: kernel size must be >= 1");
  }
  if (spec.stride < 1) {
    return Status::InvalidArgument("conv: stride " + std::to_string(spec.stride) +
                                   " must be >= 1");
  }
  if (spec.pad_mode == PadMode::kExplicit && spec.pad < 0) {
    return Status::InvalidArgument("conv: pad " + std::to_string(spec.pad) + " must be >= 0");
  }
  for (int64_t d : x) {
    if (d < 1) return Status::InvalidArgument("conv: input " + ShapeToString(x) + " is empty");
  }
  if (w[0] < 1) return Status::InvalidArgument("conv: weight " + ShapeToString(w) + " is empty");
  ConvGeometry g;
  g.n = x[0], g.c = x[1], g.h = x[2], g.w = x[3], g.o = w[0];
  g.kh = spec.kernel_h, g.kw = spec.kernel_w, g.stride = spec.stride;
  XW_RETURN_IF_ERROR(
      AxisGeometry("height", g.h, g.kh, spec, &g.oh, &g.pad_top, &g.pad_bottom));
  XW_RETURN_IF_ERROR(AxisGeometry("width", g.w, g.kw, spec, &g.ow, &g.pad_left, &g.pad_right));
  return g;
}

ConvAlgo EffectiveConvAlgo(const ConvGeometry& g, ConvAlgo requested) {
  if (requested == ConvAlgo::kWinograd && !(g.kh == 3 && g.kw == 3 && g.stride == 1)) {
    return ConvAlgo::kIm2colGemm;
  }
  return requested;
}

void Conv2dForward(const Tensor& x, const Tensor& w, const Tensor* bias, const Conv2dSpec& spec,
                   const KernelNumerics& num, Tensor* y) {
  const ConvGeometry g = MustGeometry(x.shape(), w.shape(), spec);
  if (bias != nullptr) MustShape("bias", *bias, {g.o});
  y->Resize({g.n, g.o, g.oh, g.ow});
  const float* b = bias ? bias->data() : nullptr;
  switch (EffectiveConvAlgo(g, num.conv_algo)) {
    case ConvAlgo::kDirect:
      kernels::DirectForward(g, x.data(), w.data(), b, num.reduce, y->data());
      break;
    case ConvAlgo::kIm2colGemm:
      kernels::Im2colForward(g, x.data(), w.data(), b, num, y->data());
      break;
    case ConvAlgo::kWinograd:
      kernels::WinogradForward(g, x.data(), w.data(), b, num, y->data());
      break;
  }
}

void Conv2dBackward(const Tensor& x, const Tensor& w, const Tensor& dy, const Conv2dSpec& spec,
                    const KernelNumerics& num, Tensor* dx, Tensor* dw, Tensor* db) {
  const ConvGeometry g = MustGeometry(x.shape(), w.shape(), spec);
  MustShape("dy", dy, {g.n, g.o, g.oh, g.ow});
  const ConvAlgo algo = EffectiveConvAlgo(g, num.conv_algo);
  if (dx != nullptr) {
    dx->Resize(x.shape());
    switch (algo) {
      case ConvAlgo::kDirect:
        kernels::DirectBackwardData(g, w.data(), dy.data(), num.reduce, dx->data());
        break;
      case ConvAlgo::kIm2colGemm:
        kernels::Im2colBackwardData(g, w.data(), dy.data(), num, dx->data());
        break;
      case ConvAlgo::kWinograd:
        kernels::WinogradBackwardData(g, w.data(), dy.data(), num, dx->data());
        break;
    }
  }
  if (dw != nullptr) {
    dw->Resize(w.shape());
    if (algo == ConvAlgo::kDirect) {
      kernels::DirectBackwardFilter(g, x.data(), dy.data(), num.reduce, dw->data());
    } else {  // Winograd's filter gradient is the im2col GEMM (see conv.h)
      kernels::Im2colBackwardFilter(g, x.data(), dy.data(), num, dw->data());
    }
  }
  if (db != nullptr) {
    db->Resize({g.o});
    BiasGradient(g, dy.data(), num.reduce, db->data());
  }
}

}  // namespace xw
