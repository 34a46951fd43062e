// Internal: the 2-D primitives the synthetic dataset paints (see
// synthetic.cc for the generator that uses them).
#ifndef XWIRES_SRC_DATA_SYNTHETIC_SHAPES_H_
#define XWIRES_SRC_DATA_SYNTHETIC_SHAPES_H_

namespace xw::data_internal {

enum class Primitive {
  kDisc,      // unit disc
  kSquare,    // square of half-side 0.85
  kTriangle,  // equilateral triangle of side 2
  kRing,      // annulus of radii 0.5 .. 1.0
  kPlus,      // two crossing bars 2 x 0.6
  kBar,       // one bar 2 x 0.5
  kStripes,   // stripes across a unit disc, parallel to the local u axis
  kChecker,   // checkerboard within a square of half-side 0.9
  kBlob,      // isotropic Gaussian, sigma 0.5
};

struct ShapeParams {
  Primitive kind = Primitive::kDisc;
  float cx = 16, cy = 16;  // centre in pixels
  float scale = 8;         // pixels per local unit
  float angle = 0;         // rotation in radians
  float opacity = 1;       // in [0, 1]
  float rgb[3] = {1, 1, 1};
  float frequency = 1;  // stripes / checker: cycles per local unit
  float phase = 0;      // stripes / checker: pattern phase in radians
};

// A 3x32x32 CHW float image that shapes are alpha-blended onto.
class Canvas {
 public:
  explicit Canvas(float* chw) : px_(chw) {}
  void Set(int c, int y, int x, float v) { px_[(c * 32 + y) * 32 + x] = v; }
  // Blends the shape over the current pixels: p += alpha * (colour - p),
  // alpha = opacity * coverage(pixel centre).
  void Draw(const ShapeParams& s);

 private:
  float* px_;
};

}  // namespace xw::data_internal

#endif  // XWIRES_SRC_DATA_SYNTHETIC_SHAPES_H_
