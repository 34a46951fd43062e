// The built-in synthetic dataset: 10 classes of 3x32x32 procedural images.
//
// Why: the product needs a dataset that ships with the binary, trains in
// about a minute on 2 cores, and is neither trivial (two numerics profiles
// would both hit ~100% and hide their divergence) nor hopeless.
//
// Generator (exact; docs/data.md has the same description). Image i of split
// S ("train" or "test") with seed `seed` draws its parameters from
//   P = Philox(seed, MixStream(StreamId("data/synthetic/" + S), i)),
// one Uniform(k) per parameter, k = 0, 1, 2, ... in the order below, and its
// pixel noise from
//   Q = Philox(seed, MixStream(StreamId("data/synthetic/" + S + "/noise"), i)).
// Labels: block b = i / 10 is a Fisher-Yates permutation of 0..9 drawn from
//   Philox(seed, MixStream(StreamId("data/synthetic/" + S + "/labels"), b)).
// Pixel centres are at (x + 0.5, y + 0.5), x, y in [0, 32).
//  1. Background: a linear gradient between two colours (each channel
//     uniform in [0.1, 0.9]) along a random direction.
//  2. Clutter: 1..3 small distractors (disc, square, triangle, ring or bar;
//     scale 1.5..4 px, random colour, opacity 0.3..0.7, random position).
//  3. The class object at a centre uniform in [9, 23]^2, scale 6..10.5 px,
//     opacity 0.65..1, colour in HSV: with probability 0.65 the class hue
//     c/10 plus Normal * 0.04, otherwise a uniform hue; saturation 0.35..1,
//     value 0.45..1. Shapes by class:
//       0 disc, 1 square (any rotation), 2 triangle (any rotation), 3 ring,
//       4 plus cross (rotation +-15 deg), 5 stripes near horizontal (+-20 deg),
//       6 stripes near vertical, 7 checkerboard patch (any rotation),
//       8 Gaussian blob (soft edge), 9 diagonal cross (45 +-15 deg).
//     Hard shapes cover a pixel by clamp(0.5 - signed_distance_px, 0, 1).
//  4. Noise: Normal * sigma per pixel and channel, sigma uniform in
//     [0.02, 0.08] per image.
//  5. Clamp to [0, 1] and quantise to the 8-bit grid: round(v * 255) / 255.0f,
//     the same grid as the file loaders produce.
// Every image is a pure function of (seed, split, i), so generation runs in
// parallel (ParallelFor over images) with identical bits for any thread
// count, and a smaller set is a prefix of a larger one.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "synthetic_shapes.h"
#include "xwires/core/data.h"
#include "xwires/core/parallel.h"
#include "xwires/core/rng.h"

namespace xw {
namespace {

using data_internal::Canvas;
using data_internal::Primitive;
using data_internal::ShapeParams;

constexpr int kClasses = 10;
constexpr int kSide = 32;
constexpr int64_t kPixels = 3 * kSide * kSide;
constexpr float kPi = 3.14159265358979f;

// Sequential uniform draws from one image's parameter stream.
class Draws {
 public:
  explicit Draws(const Philox& p) : p_(p) {}
  float U() { return p_.Uniform(k_++); }
  float U(float lo, float hi) { return lo + (hi - lo) * U(); }
  // Standard normal from two uniforms (Box-Muller, cosine branch).
  float N() {
    const float u1 = 1.0f - U();  // (0, 1]
    const float u2 = U();
    return std::sqrt(-2.0f * std::log(u1)) * std::cos(2.0f * kPi * u2);
  }
  int Int(int n) { return std::min(n - 1, static_cast<int>(U() * n)); }

 private:
  const Philox& p_;
  uint64_t k_ = 0;
};

void HsvToRgb(float h, float s, float v, float rgb[3]) {
  h = h - std::floor(h);
  const float h6 = h * 6.0f;
  const int sector = std::min(5, static_cast<int>(h6));
  const float f = h6 - static_cast<float>(sector);
  const float p = v * (1.0f - s), q = v * (1.0f - s * f),
              t = v * (1.0f - s * (1.0f - f));
  const float table[6][3] = {{v, t, p}, {q, v, p}, {p, v, t},
                             {p, q, v}, {t, p, v}, {v, p, q}};
  for (int c = 0; c < 3; ++c) rgb[c] = table[sector][c];
}

void DrawBackground(Draws& d, Canvas* canvas) {
  float c0[3], c1[3];
  for (float& c : c0) c = d.U(0.1f, 0.9f);
  for (float& c : c1) c = d.U(0.1f, 0.9f);
  const float a = d.U(0.0f, 2.0f * kPi);
  const float ca = std::cos(a), sa = std::sin(a);
  for (int y = 0; y < kSide; ++y) {
    for (int x = 0; x < kSide; ++x) {
      const float px = static_cast<float>(x) + 0.5f - 16.0f;
      const float py = static_cast<float>(y) + 0.5f - 16.0f;
      const float t =
          std::clamp((px * ca + py * sa) / 32.0f + 0.5f, 0.0f, 1.0f);
      for (int c = 0; c < 3; ++c)
        canvas->Set(c, y, x, c0[c] + (c1[c] - c0[c]) * t);
    }
  }
}

void DrawClutter(Draws& d, Canvas* canvas) {
  static constexpr Primitive kKinds[] = {Primitive::kDisc, Primitive::kSquare,
                                         Primitive::kTriangle, Primitive::kRing,
                                         Primitive::kBar};
  const int count = 1 + d.Int(3);
  for (int j = 0; j < count; ++j) {
    ShapeParams s;
    s.kind = kKinds[d.Int(5)];
    s.cx = d.U(0.0f, 32.0f);
    s.cy = d.U(0.0f, 32.0f);
    s.scale = d.U(1.5f, 4.0f);
    s.angle = d.U(0.0f, 2.0f * kPi);
    s.opacity = d.U(0.3f, 0.7f);
    for (float& c : s.rgb) c = d.U();
    canvas->Draw(s);
  }
}

void DrawObject(int label, Draws& d, Canvas* canvas) {
  ShapeParams s;
  s.cx = d.U(9.0f, 23.0f);
  s.cy = d.U(9.0f, 23.0f);
  s.scale = d.U(6.0f, 10.5f);
  s.opacity = d.U(0.65f, 1.0f);
  const bool class_hue = d.U() < 0.65f;
  const float hue_noise = d.N();
  const float hue =
      class_hue ? static_cast<float>(label) / kClasses + 0.04f * hue_noise
                : d.U();
  HsvToRgb(hue, d.U(0.35f, 1.0f), d.U(0.45f, 1.0f), s.rgb);
  const float any = d.U(0.0f, 2.0f * kPi);
  const float jitter15 = d.U(-15.0f, 15.0f) * kPi / 180.0f;
  const float jitter20 = d.U(-20.0f, 20.0f) * kPi / 180.0f;
  s.frequency = d.U(0.8f, 1.4f);
  s.phase = d.U(0.0f, 2.0f * kPi);
  switch (label) {
    case 0:
      s.kind = Primitive::kDisc;
      s.angle = any;
      break;
    case 1:
      s.kind = Primitive::kSquare;
      s.angle = any;
      break;
    case 2:
      s.kind = Primitive::kTriangle;
      s.angle = any;
      break;
    case 3:
      s.kind = Primitive::kRing;
      s.angle = any;
      break;
    case 4:
      s.kind = Primitive::kPlus;
      s.angle = jitter15;
      break;
    case 5:
      s.kind = Primitive::kStripes;
      s.angle = jitter20;
      break;
    case 6:
      s.kind = Primitive::kStripes;
      s.angle = 0.5f * kPi + jitter20;
      break;
    case 7:
      s.kind = Primitive::kChecker;
      s.angle = any;
      break;
    case 8:
      s.kind = Primitive::kBlob;
      s.angle = any;
      break;
    default:
      s.kind = Primitive::kPlus;
      s.angle = 0.25f * kPi + jitter15;
      break;
  }
  canvas->Draw(s);
}

// Labels of block b: a seeded Fisher-Yates permutation of 0..9.
void BlockLabels(uint64_t seed, uint64_t stream, int64_t block,
                 int out[kClasses]) {
  const Philox p(seed, MixStream(stream, static_cast<uint64_t>(block)));
  for (int c = 0; c < kClasses; ++c) out[c] = c;
  for (int c = kClasses - 1; c > 0; --c) {
    const int j = static_cast<int>(p.U32(static_cast<uint64_t>(c)) %
                                   static_cast<uint32_t>(c + 1));
    std::swap(out[c], out[j]);
  }
}

ImageDataset MakeSplit(const std::string& split, int64_t n, uint64_t seed) {
  ImageDataset ds;
  ds.num_classes = kClasses;
  ds.images = Tensor(Shape{n, 3, kSide, kSide});
  ds.labels.assign(static_cast<size_t>(n), 0);
  const uint64_t param_stream = StreamId("data/synthetic/" + split);
  const uint64_t noise_stream = StreamId("data/synthetic/" + split + "/noise");
  const uint64_t label_stream = StreamId("data/synthetic/" + split + "/labels");
  for (int64_t b = 0; b * kClasses < n; ++b) {
    int perm[kClasses];
    BlockLabels(seed, label_stream, b, perm);
    for (int c = 0; c < kClasses && b * kClasses + c < n; ++c) {
      ds.labels[b * kClasses + c] = perm[c];
    }
  }
  ParallelFor(n, GrainFor(n, 8), [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const auto idx = static_cast<uint64_t>(i);
      const Philox params(seed, MixStream(param_stream, idx));
      const Philox noise(seed, MixStream(noise_stream, idx));
      Draws d(params);
      Canvas canvas(ds.images.data() + i * kPixels);
      DrawBackground(d, &canvas);
      DrawClutter(d, &canvas);
      DrawObject(ds.labels[i], d, &canvas);
      const float sigma = d.U(0.02f, 0.08f);
      float* px = ds.images.data() + i * kPixels;
      std::vector<float> z(kPixels);  // Normal(p), one Philox block per two
      noise.NormalRange(0, kPixels, z.data());
      for (int64_t p = 0; p < kPixels; ++p) {
        const float v = std::clamp(px[p] + sigma * z[p], 0.0f, 1.0f);
        px[p] = static_cast<float>(std::lround(v * 255.0f)) / 255.0f;
      }
    }
  });
  return ds;
}

}  // namespace

DataSplits MakeSynthetic(const SyntheticOptions& opts) {
  DataSplits splits;
  splits.name = "synthetic";
  splits.train =
      MakeSplit("train", std::max<int64_t>(0, opts.train_size), opts.seed);
  splits.test =
      MakeSplit("test", std::max<int64_t>(0, opts.test_size), opts.seed);
  return splits;
}

}  // namespace xw
