#include "synthetic_shapes.h"

#include <algorithm>
#include <cmath>

namespace xw::data_internal {
namespace {

constexpr float kPi = 3.14159265358979f;

// Signed distance (local units, negative inside) to an axis-aligned box of
// half-sizes hx, hy.
float BoxDistance(float u, float v, float hx, float hy) {
  const float qx = std::fabs(u) - hx, qy = std::fabs(v) - hy;
  const float ox = std::max(qx, 0.0f), oy = std::max(qy, 0.0f);
  return std::sqrt(ox * ox + oy * oy) + std::min(std::max(qx, qy), 0.0f);
}

// Signed distance to an equilateral triangle of side 2 centred on its
// centroid (Inigo Quilez's exact formula).
float TriangleDistance(float u, float v) {
  const float k = std::sqrt(3.0f);
  float px = std::fabs(u) - 1.0f;
  float py = v + 1.0f / k;
  if (px + k * py > 0.0f) {
    const float nx = (px - k * py) / 2.0f, ny = (-k * px - py) / 2.0f;
    px = nx;
    py = ny;
  }
  px -= std::clamp(px, -2.0f, 0.0f);
  const float len = std::sqrt(px * px + py * py);
  return py > 0.0f ? -len : len;
}

// Coverage in [0, 1] of a hard-edged shape from its signed distance in
// pixels: a one-pixel linear ramp across the edge (cheap anti-aliasing).
float EdgeCoverage(float distance_px) {
  return std::clamp(0.5f - distance_px, 0.0f, 1.0f);
}

// Coverage of the shape at local coordinates (u, v).
float Coverage(const ShapeParams& s, float u, float v) {
  const float r = std::sqrt(u * u + v * v);
  switch (s.kind) {
    case Primitive::kDisc:
      return EdgeCoverage((r - 1.0f) * s.scale);
    case Primitive::kSquare:
      return EdgeCoverage(BoxDistance(u, v, 0.85f, 0.85f) * s.scale);
    case Primitive::kTriangle:
      return EdgeCoverage(TriangleDistance(u, v) * s.scale);
    case Primitive::kRing:
      return EdgeCoverage((std::fabs(r - 0.75f) - 0.25f) * s.scale);
    case Primitive::kPlus:
      return EdgeCoverage(std::min(BoxDistance(u, v, 1.0f, 0.3f),
                                   BoxDistance(u, v, 0.3f, 1.0f)) *
                          s.scale);
    case Primitive::kBar:
      return EdgeCoverage(BoxDistance(u, v, 1.0f, 0.25f) * s.scale);
    case Primitive::kStripes: {
      const float wave = std::sin(2.0f * kPi * s.frequency * v + s.phase);
      return EdgeCoverage((r - 1.0f) * s.scale) *
             std::clamp(0.5f + 1.5f * wave, 0.0f, 1.0f);
    }
    case Primitive::kChecker: {
      const float wave = std::sin(kPi * s.frequency * u * 2.0f + s.phase) *
                         std::sin(kPi * s.frequency * v * 2.0f + s.phase);
      return EdgeCoverage(BoxDistance(u, v, 0.9f, 0.9f) * s.scale) *
             std::clamp(0.5f + 2.0f * wave, 0.0f, 1.0f);
    }
    case Primitive::kBlob:
      return std::exp(-(r * r) / (2.0f * 0.5f * 0.5f));
  }
  return 0.0f;
}

}  // namespace

void Canvas::Draw(const ShapeParams& s) {
  const float ca = std::cos(s.angle), sa = std::sin(s.angle);
  const float inv = 1.0f / s.scale;
  // Only pixels within the shape's bounding radius (local 1.5) can change.
  const float reach = 1.5f * s.scale + 1.0f;
  const int x0 = std::max(0, static_cast<int>(std::floor(s.cx - reach)));
  const int x1 = std::min(31, static_cast<int>(std::ceil(s.cx + reach)));
  const int y0 = std::max(0, static_cast<int>(std::floor(s.cy - reach)));
  const int y1 = std::min(31, static_cast<int>(std::ceil(s.cy + reach)));
  for (int y = y0; y <= y1; ++y) {
    for (int x = x0; x <= x1; ++x) {
      const float dx = static_cast<float>(x) + 0.5f - s.cx;
      const float dy = static_cast<float>(y) + 0.5f - s.cy;
      // Rotate the pixel into the shape's frame (inverse rotation).
      const float u = (dx * ca + dy * sa) * inv;
      const float v = (-dx * sa + dy * ca) * inv;
      const float alpha = s.opacity * Coverage(s, u, v);
      if (alpha <= 0.0f) continue;
      for (int c = 0; c < 3; ++c) {
        float& p = px_[(c * 32 + y) * 32 + x];
        p += alpha * (s.rgb[c] - p);
      }
    }
  }
}

}  // namespace xw::data_internal
