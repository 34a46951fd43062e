// The dispatched data-movement kernels (tap_gather.cc, winograd_tiles.cc) on
// every SIMD target the CPU runs: the tap gathers, col2im, the tap-row
// transpose and the implicit convolutions' padded images bit for bit against
// element-by-element references written from their definitions, including
// what they must leave untouched; Winograd's tile transforms through the public convolution, identical bits on every
// target and close to a double-precision convolution.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "conv_test_util.h"
#include "grad_check.h"
#include "src/kernels/conv_internal.h"
#include "src/kernels/implicit_internal.h"
#include "xwires/core/simd_target.h"

namespace xw {
namespace kernels {
namespace {

using convtest::Spec;
using gradcheck::RandomTensor;

constexpr float kSentinel = -12345.0f;

// Runs body once per target with dispatch restricted to it, then restores it.
template <typename F>
void ForEachTarget(F body) {
  const std::vector<std::string> targets = KernelTargets();
#if defined(__x86_64__)
  ASSERT_GE(targets.size(), 3u) << "x86-64 compiles at least AVX2, SSE4 and a scalar target";
#endif
  for (const std::string& t : targets) {
    ASSERT_TRUE(SetKernelTarget(t).ok()) << t;
    body(t + " (" + std::to_string(KernelFloatLanes()) + " lanes)");
  }
  ASSERT_TRUE(SetKernelTarget("").ok());
}

bool SameBits(float a, float b) { return std::memcmp(&a, &b, sizeof(float)) == 0; }

// Tap t = (c, a, b) of flattened output i = (n, p, q) of s, from its definition.
float TapAt(const TapSource& s, int64_t t, int64_t i) {
  const int64_t c = t / (s.kh * s.kw), a = t / s.kw % s.kh, b = t % s.kw;
  const int64_t n = i / (s.oh * s.ow), p = i / s.ow % s.oh, q = i % s.ow;
  const int64_t u = p * s.stride + a - s.pad_top, v = q * s.stride + b - s.pad_left;
  if (u < 0 || u >= s.h || v < 0 || v >= s.w) return 0.0f;
  return s.data[((n * s.channels + c) * s.h + u) * s.w + v];
}

struct GatherCase {
  int64_t images, channels, h, w;
  int kh, kw, stride, pad_top, pad_left;
  int64_t oh, ow, begin, end, t0, t1;
};

TEST(TapGatherTest, TapRowsEqualTheDefinitionOnEveryTarget) {
  // Row widths around every target's lanes (1, 4, 8, 16), partial ranges that
  // start and end mid-row and span images, strides 1-3, pads larger than the
  // kernel and negative (the data gradient's shifted windows).
  const GatherCase cases[] = {
      {2, 3, 9, 7, 3, 3, 1, 1, 1, 9, 7, 0, 126, 0, 27},
      {2, 2, 16, 16, 3, 3, 1, 1, 1, 16, 16, 5, 480, 0, 18},
      {1, 2, 6, 33, 3, 3, 1, 1, 1, 6, 33, 30, 130, 4, 17},
      {3, 1, 5, 40, 3, 5, 1, 0, 2, 5, 40, 17, 590, 0, 15},
      {2, 2, 17, 17, 3, 3, 2, 1, 1, 9, 9, 0, 162, 0, 18},
      {1, 2, 34, 34, 3, 3, 2, 0, 0, 16, 16, 3, 250, 2, 18},
      {1, 3, 40, 40, 1, 1, 2, 0, 0, 20, 20, 0, 400, 0, 3},
      {2, 2, 11, 10, 3, 3, 3, 1, 1, 4, 4, 0, 32, 0, 18},
      {1, 2, 6, 6, 3, 3, 1, 3, 3, 8, 8, 0, 64, 0, 18},      // pad > k-1
      {1, 2, 7, 12, 2, 2, 1, -1, -1, 6, 11, 1, 66, 0, 8},   // shifted window
      {1, 1, 3, 1, 3, 3, 1, 1, 1, 3, 1, 0, 3, 0, 9},        // one-pixel rows
      // Whole images of at most 16 pixels (the tiny-plane copy): VGG's
      // 2x2 layers, tap ranges starting and ending inside a channel, a
      // first image other than 0, stride 2, 1x1 planes and a 5x5 kernel.
      {3, 4, 2, 2, 3, 3, 1, 1, 1, 2, 2, 0, 12, 5, 31},
      {3, 3, 4, 4, 3, 3, 1, 1, 1, 4, 4, 16, 48, 0, 27},
      {2, 2, 4, 4, 3, 3, 2, 1, 1, 2, 2, 4, 8, 1, 17},
      {2, 3, 1, 1, 3, 3, 1, 1, 1, 1, 1, 0, 2, 4, 22},
      {2, 2, 3, 3, 5, 5, 1, 2, 2, 3, 3, 9, 18, 0, 50},
      {2, 2, 2, 2, 3, 3, 1, 1, 1, 2, 2, 2, 7, 0, 18},       // not whole: the runs
  };
  for (const GatherCase& k : cases) {
    const Tensor x = RandomTensor({k.images, k.channels, k.h, k.w}, 3);
    const TapSource s{x.data(), k.channels, k.h, k.w, k.kh, k.kw, k.stride,
                      k.pad_top, k.pad_left, k.oh, k.ow};
    const int64_t width = k.end - k.begin, ld = width + 7, rows = k.t1 - k.t0;
    ForEachTarget([&](const std::string& target) {
      std::vector<float> dst((rows + 1) * ld, kSentinel);
      TapGather gather;
      gather.Reset(s, k.begin, k.end);
      gather.TapRows(k.t0, k.t1, dst.data(), ld);
      int bad = 0, touched = 0;
      for (int64_t r = 0; r <= rows; ++r) {
        for (int64_t j = 0; j < ld; ++j) {
          const float got = dst[r * ld + j];
          if (r < rows && j < width) {
            bad += !SameBits(got, TapAt(s, k.t0 + r, k.begin + j));
          } else {
            touched += !SameBits(got, kSentinel);
          }
        }
      }
      EXPECT_EQ(bad, 0) << target << " case w" << k.w << " s" << k.stride;
      EXPECT_EQ(touched, 0) << target << " wrote outside its rows, case w" << k.w;
    });
  }
}

TEST(TapGatherTest, Col2imAddsEveryTapInOrderOnEveryTarget) {
  const convtest::Case cases[] = {{1, 3, 9, 7, 2, Spec(3, 1, 1, PadMode::kExplicit)},
                                  {1, 2, 16, 33, 2, Spec(3, 1, 0, PadMode::kSame)},
                                  {1, 2, 11, 17, 2, Spec(3, 2, 1, PadMode::kExplicit)},
                                  {1, 2, 6, 6, 2, Spec(3, 1, 3, PadMode::kExplicit)}};
  for (const convtest::Case& k : cases) {
    const ConvGeometry g = convtest::MakeOperands(k, 1, 2, 3).g;
    const int64_t taps = g.c * g.kh * g.kw, plane = g.oh * g.ow, ld = plane + 5;
    const Tensor cols = RandomTensor({taps, ld}, 4), init = RandomTensor({g.c, g.h, g.w}, 5);
    // Reference: taps in index order, outputs in raster order, one add each.
    std::vector<float> want(init.data(), init.data() + init.size());
    for (int64_t t = 0; t < taps; ++t) {
      const int64_t c = t / (g.kh * g.kw), a = t / g.kw % g.kh, b = t % g.kw;
      for (int64_t p = 0; p < g.oh; ++p) {
        for (int64_t q = 0; q < g.ow; ++q) {
          const int64_t u = p * g.stride + a - g.pad_top, v = q * g.stride + b - g.pad_left;
          if (u >= 0 && u < g.h && v >= 0 && v < g.w) {
            want[(c * g.h + u) * g.w + v] += cols[t * ld + p * g.ow + q];
          }
        }
      }
    }
    ForEachTarget([&](const std::string& target) {
      std::vector<float> got(init.data(), init.data() + init.size());
      got.push_back(kSentinel);
      Col2imAdd(g, cols.data(), ld, got.data());
      int bad = 0;
      for (size_t i = 0; i < want.size(); ++i) bad += !SameBits(got[i], want[i]);
      EXPECT_EQ(bad, 0) << target << " " << k.Name();
      EXPECT_TRUE(SameBits(got.back(), kSentinel)) << target << " wrote past dx";
    });
  }
}

TEST(TapGatherTest, TransposeToPanelOnEveryTarget) {
  for (const int64_t panel : {32, 8, 6}) {
    for (const int64_t width : {1, 3, 4, 7, 8, 15, 16, 17, 40}) {
      const int64_t ld = width + 3;
      const Tensor rows = RandomTensor({panel, ld}, 6);
      ForEachTarget([&](const std::string& target) {
        std::vector<float> dst(width * panel + 9, kSentinel);
        TransposeToPanel(rows.data(), ld, width, panel, dst.data());
        int bad = 0;
        for (int64_t q = 0; q < width; ++q) {
          for (int64_t j = 0; j < panel; ++j) {
            bad += !SameBits(dst[q * panel + j], rows[j * ld + q]);
          }
        }
        for (size_t i = width * panel; i < dst.size(); ++i) bad += !SameBits(dst[i], kSentinel);
        EXPECT_EQ(bad, 0) << target << " panel " << panel << " width " << width;
      });
    }
  }
}

// PadImage against pad[phase (pa, pb)][c][i][j] = x(n, c, i*s + pa - pad_top,
// j*s + pb - pad_left), zero outside x: rows narrower and wider than every
// target's lanes, strides 1-3 (phases whose columns all fall outside x among
// them), pads beyond the kernel and planes interleaved at a wider stride,
// whose gaps must stay untouched.
TEST(TapGatherTest, PadImageEqualsTheDefinitionOnEveryTarget) {
  struct PadCase {
    int64_t channels, h, w;
    int k, stride, pad_top, pad_left;
    int64_t spare;  // floats between consecutive planes (plane_stride - ph*pw)
  };
  const PadCase cases[] = {{3, 9, 7, 3, 1, 1, 1, 0},   {2, 16, 16, 3, 1, 1, 1, 0},
                           {2, 6, 33, 3, 1, 1, 1, 5},  {2, 8, 8, 3, 1, 1, 1, 0},
                           {2, 17, 17, 3, 2, 1, 1, 0}, {2, 32, 32, 3, 2, 1, 1, 3},
                           {1, 40, 40, 1, 2, 0, 0, 0}, {2, 11, 10, 3, 3, 1, 1, 0},
                           {2, 6, 6, 3, 1, 3, 3, 0},   {1, 3, 1, 3, 1, 1, 1, 2},
                           {2, 9, 3, 5, 2, 4, 4, 0},   {2, 16, 16, 3, 2, 1, 1, 2},
                           {2, 32, 32, 1, 2, 0, 0, 3}};
  for (const PadCase& k : cases) {
    const int64_t oh = (k.h + 2 * k.pad_top - k.k) / k.stride + 1;
    const int64_t ow = (k.w + 2 * k.pad_left - k.k) / k.stride + 1;
    const Tensor x = RandomTensor({2, k.channels, k.h, k.w}, 11);
    const TapSource s{x.data(), k.channels, k.h, k.w, k.k, k.k, k.stride,
                      k.pad_top, k.pad_left, oh, ow};
    const ImplicitLayout l = MakeLayout(s, 8);
    const int64_t plane = l.ph * l.pw, stride = plane + k.spare;
    // Only the phases some tap reads: min(stride, k) rows and columns of them.
    const int64_t phase_cols = std::min(k.stride, k.k);
    const int64_t planes = std::min(k.stride, k.k) * phase_cols * k.channels;
    EXPECT_EQ(l.image_floats, planes * plane);
    ForEachTarget([&](const std::string& target) {
      std::vector<float> pad(planes * stride + 7, kSentinel);
      PadImage(s, l, 1, pad.data(), k.spare == 0 ? 0 : stride);
      int bad = 0;
      for (int64_t f = 0; f < planes; ++f) {
        const int64_t phase = f / k.channels, c = f % k.channels;
        const int64_t pa = phase / phase_cols, pb = phase % phase_cols;
        for (int64_t i = 0; i < stride; ++i) {
          float want = kSentinel;
          if (i < plane) {
            const int64_t u = i / l.pw * k.stride + pa - k.pad_top;
            const int64_t v = i % l.pw * k.stride + pb - k.pad_left;
            const bool inside = u >= 0 && u < k.h && v >= 0 && v < k.w;
            want = inside ? x[((k.channels + c) * k.h + u) * k.w + v] : 0.0f;
          }
          bad += !SameBits(pad[f * stride + i], want);
        }
      }
      for (int64_t i = planes * stride; i < static_cast<int64_t>(pad.size()); ++i) {
        bad += !SameBits(pad[i], kSentinel);
      }
      EXPECT_EQ(bad, 0) << target << " w" << k.w << " s" << k.stride << " spare " << k.spare;
    });
  }
}

// Winograd's transforms are per-tile element-wise arithmetic around Eigen's
// (not dispatched) GEMM: the same bits on every target, forward and data
// gradient, for tile rows that leave partial vectors on every target.
TEST(TapGatherTest, WinogradIsTheSameBitsOnEveryTarget) {
  const convtest::Case cases[] = {{2, 3, 9, 9, 4, Spec(3, 1, 1, PadMode::kExplicit)},
                                  {2, 4, 16, 16, 5, Spec(3, 1, 1, PadMode::kExplicit)},
                                  {1, 3, 34, 34, 3, Spec(3, 1, 1, PadMode::kExplicit)},
                                  {1, 2, 12, 40, 6, Spec(3, 1, 0, PadMode::kSame)},
                                  {3, 2, 7, 13, 2, Spec(3, 1, 2, PadMode::kExplicit)}};
  KernelNumerics num;
  num.conv_algo = ConvAlgo::kWinograd;
  num.gemm = GemmKind::kEigen;
  for (const convtest::Case& k : cases) {
    const auto [g, x, w, dy] = convtest::MakeOperands(k, 7, 8, 9);
    const Tensor b = RandomTensor({k.o}, 10);
    ASSERT_EQ(EffectiveConvAlgo(g, ConvAlgo::kWinograd), ConvAlgo::kWinograd) << k.Name();
    const convtest::Reference ref = convtest::NaiveConv(g, x, w, b, dy);
    Tensor first_y, first_dx;
    ForEachTarget([&](const std::string& target) {
      Tensor y, dx;
      Conv2dForward(x, w, &b, k.spec, num, &y);
      Conv2dBackward(x, w, dy, k.spec, num, &dx, nullptr, nullptr);
      EXPECT_TRUE(gradcheck::AllClose("y " + target + k.Name(), y, ref.y, 1e-4, 1e-5));
      EXPECT_TRUE(gradcheck::AllClose("dx " + target + k.Name(), dx, ref.dx, 1e-4, 1e-5));
      if (first_y.size() == 0) {
        first_y = y, first_dx = dx;
        return;
      }
      EXPECT_TRUE(y.BitwiseEqual(first_y)) << target << " " << k.Name();
      EXPECT_TRUE(dx.BitwiseEqual(first_dx)) << target << " " << k.Name();
    });
  }
}

}  // namespace
}  // namespace kernels
}  // namespace xw
