// PanelPatches and TransposeToPanels (accel_patches.h).
#include "src/accel/accel_patches.h"

#include <algorithm>
#include <cstring>

#include "xwires/core/accel_numerics.h"
#include "src/accel/round_lanes.h"

namespace xw {
namespace accel {

kernels::TapSource PaddedSource(const kernels::TapSource& s) {
  kernels::TapSource p = s;
  p.data = nullptr;
  p.h = (s.oh - 1) * s.stride + s.kh;
  p.w = (s.ow - 1) * s.stride + s.kw;
  p.pad_top = 0;
  p.pad_left = 0;
  return p;
}

OperandRange FillPadded(const kernels::TapSource& s, const float* image, int64_t rows,
                        int64_t cols, int dilate, OperandRounding mode, bool flush_subnormals,
                        float* dst) {
  const kernels::TapSource p = PaddedSource(s);
  // Pixel (i, j) goes to padded (i * dilate + pad_top, j * dilate +
  // pad_left); keep the rows and columns that land in [0, p.h) x [0, p.w)
  // (and inside s: a source larger than its taps' reach keeps the rest out).
  const auto first = [dilate](int64_t pad) { return pad >= 0 ? 0 : (-pad + dilate - 1) / dilate; };
  const auto end = [dilate](int64_t pad, int64_t n, int64_t lim) {
    return std::clamp<int64_t>(lim - pad <= 0 ? 0 : (lim - pad - 1) / dilate + 1, 0, n);
  };
  const int64_t i0 = first(s.pad_top), i1 = end(s.pad_top, rows, p.h);
  const int64_t j0 = first(s.pad_left), j1 = end(s.pad_left, cols, p.w);
  OperandRange range;
  range.reduced = true;
  if (i0 >= i1 || j0 >= j1) return range;
  for (int64_t c = 0; c < s.channels; ++c) {
    for (int64_t i = i0; i < i1; ++i) {
      const float* from = image + (c * rows + i) * cols;
      float* row = dst + (c * p.h + i * dilate + s.pad_top) * p.w + s.pad_left;
      if (dilate == 1) {
        RoundLanes(from + j0, row + j0, j1 - j0, mode, flush_subnormals);
      } else {
        for (int64_t j = j0; j < j1; ++j) {
          row[j * dilate] = RoundOperand(from[j], mode, flush_subnormals);
        }
      }
    }
  }
  // Over the whole copy: its zeros change no range.
  return F32PanelRange(dst, 1, PaddedFloats(p), PaddedFloats(p));
}

namespace {

// Up to kPanel consecutive outputs on one output row: lanes [j, j + len)
// read from offset `off` of each tap's first source float.
struct Run {
  int64_t j, len, off;
};

// Copies len floats; 16 and 8 (AVX-512's and AVX2's vector) as fixed sizes.
inline void CopyRun(const float* src, int64_t len, float* dst) {
  if (len == 16) {
    std::memcpy(dst, src, 16 * sizeof(float));
  } else if (len == 8) {
    std::memcpy(dst, src, 8 * sizeof(float));
  } else {
    std::copy_n(src, len, dst);
  }
}

}  // namespace

void PanelPatches(const kernels::TapSource& s, float* dst) {
  const int64_t pixels = s.oh * s.ow, taps = s.channels * s.kh * s.kw, plane = s.h * s.w;
  const int64_t st = s.stride;
  for (int64_t j0 = 0; j0 < pixels; j0 += kPanel) {
    const int64_t valid = std::min(kPanel, pixels - j0);
    Run runs[kPanel];
    int nr = 0;
    for (int64_t i = j0; i < j0 + valid;) {
      const int64_t p = i / s.ow, q = i % s.ow, len = std::min(s.ow - q, j0 + valid - i);
      runs[nr++] = {i - j0, len, p * st * s.w + q * st};
      i += len;
    }
    float* out = dst + j0 * taps;
    if (st == 1 && nr == 1 && valid == kPanel) {  // one whole run: a row of 16
      const float* src = s.data + runs[0].off;
      for (int64_t c = 0; c < s.channels; ++c, src += plane) {
        for (int a = 0; a < s.kh; ++a) {
          for (int b = 0; b < s.kw; ++b, out += kPanel) {
            std::memcpy(out, src + a * s.w + b, kPanel * sizeof(float));
          }
        }
      }
      continue;
    }
    for (int64_t c = 0; c < s.channels; ++c) {
      for (int a = 0; a < s.kh; ++a) {
        for (int b = 0; b < s.kw; ++b, out += kPanel) {
          const float* src = s.data + c * plane + a * s.w + b;
          for (int r = 0; r < nr; ++r) {
            if (st == 1) {
              CopyRun(src + runs[r].off, runs[r].len, out + runs[r].j);
            } else {
              for (int64_t i = 0; i < runs[r].len; ++i) {
                out[runs[r].j + i] = src[runs[r].off + i * st];
              }
            }
          }
          if (valid < kPanel) std::fill(out + valid, out + kPanel, 0.0f);
        }
      }
    }
  }
}

void PatchRows(const kernels::TapSource& s, float* dst, int64_t ld) {
  const int64_t plane = s.h * s.w, st = s.stride;
  float* out = dst;
  for (int64_t c = 0; c < s.channels; ++c) {
    for (int a = 0; a < s.kh; ++a) {
      for (int b = 0; b < s.kw; ++b, out += ld) {
        const float* src = s.data + c * plane + a * s.w + b;
        for (int64_t p = 0; p < s.oh; ++p) {
          const float* from = src + p * st * s.w;
          float* to = out + p * s.ow;
          if (st == 1) {
            std::copy_n(from, s.ow, to);
          } else {
            for (int64_t q = 0; q < s.ow; ++q) to[q] = from[q * st];
          }
        }
      }
    }
  }
}

void TransposeToPanels(const float* src, int64_t ld, int64_t rows, int64_t cols,
                       int64_t panel_stride, float* dst) {
  const int64_t full = cols / kPanel;
  for (int64_t p = 0; p < full; ++p) {
    kernels::TransposeToPanel(src + p * kPanel * ld, ld, rows, kPanel, dst + p * panel_stride);
  }
  if (full * kPanel == cols) return;
  const int64_t valid = cols - full * kPanel;
  float* d = dst + full * panel_stride;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < kPanel; ++j) {
      d[r * kPanel + j] = j < valid ? src[(full * kPanel + j) * ld + r] : 0.0f;
    }
  }
}

}  // namespace accel
}  // namespace xw
