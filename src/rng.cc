#include "xwires/core/rng.h"

#include <cmath>

#include "xwires/core/parallel.h"

namespace xw {

uint64_t StreamId(std::string_view name) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : name) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

uint64_t MixStream(uint64_t stream, uint64_t value) {
  // splitmix64 finaliser over the pair.
  uint64_t z = stream ^ (value + 0x9e3779b97f4a7c15ull + (stream << 6) + (stream >> 2));
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

std::array<uint32_t, 4> Philox::Raw(std::array<uint32_t, 4> c, std::array<uint32_t, 2> k) {
  constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;
  constexpr uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = static_cast<uint64_t>(kM0) * c[0];
    const uint64_t p1 = static_cast<uint64_t>(kM1) * c[2];
    const uint32_t hi0 = static_cast<uint32_t>(p0 >> 32), lo0 = static_cast<uint32_t>(p0);
    const uint32_t hi1 = static_cast<uint32_t>(p1 >> 32), lo1 = static_cast<uint32_t>(p1);
    c = {hi1 ^ c[1] ^ k[0], lo1, hi0 ^ c[3] ^ k[1], lo0};
    k[0] += kW0;
    k[1] += kW1;
  }
  return c;
}

std::array<uint32_t, 4> Philox::Block(uint64_t i) const {
  return Raw({static_cast<uint32_t>(i), static_cast<uint32_t>(i >> 32),
              static_cast<uint32_t>(stream_), static_cast<uint32_t>(stream_ >> 32)},
             {static_cast<uint32_t>(seed_), static_cast<uint32_t>(seed_ >> 32)});
}

uint32_t Philox::U32(uint64_t index) const { return Block(index >> 2)[index & 3]; }

float Philox::Uniform(uint64_t index) const {
  return static_cast<float>(U32(index) >> 8) * (1.0f / 16777216.0f);
}

namespace {

// Box-Muller on two words of one block; u1 in (0, 1] so the log is finite.
float BoxMuller(uint32_t w1, uint32_t w2) {
  const double u1 = (static_cast<double>(w1) + 1.0) / 4294967296.0;
  const double u2 = static_cast<double>(w2) / 4294967296.0;
  return static_cast<float>(std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2));
}

float ToUniform(uint32_t w) { return static_cast<float>(w >> 8) * (1.0f / 16777216.0f); }

}  // namespace

float Philox::Normal(uint64_t index) const {
  const auto b = Block(index >> 1);
  const int o = static_cast<int>(index & 1) * 2;
  return BoxMuller(b[o], b[o + 1]);
}

void Philox::UniformRange(uint64_t first, int64_t n, float* out) const {
  int64_t i = 0;
  while (i < n) {
    const uint64_t index = first + static_cast<uint64_t>(i);
    const auto b = Block(index >> 2);
    for (int w = static_cast<int>(index & 3); w < 4 && i < n; ++w, ++i) out[i] = ToUniform(b[w]);
  }
}

void Philox::NormalRange(uint64_t first, int64_t n, float* out) const {
  int64_t i = 0;
  while (i < n) {
    const uint64_t index = first + static_cast<uint64_t>(i);
    const auto b = Block(index >> 1);
    for (int h = static_cast<int>(index & 1); h < 2 && i < n; ++h, ++i) {
      out[i] = BoxMuller(b[2 * h], b[2 * h + 1]);
    }
  }
}

void Philox::FillUniform(float* out, int64_t n, float lo, float hi, uint64_t offset) const {
  const float range = hi - lo;
  ParallelFor(n, 4096, [&](int64_t b, int64_t e) {
    UniformRange(offset + b, e - b, out + b);
    for (int64_t i = b; i < e; ++i) out[i] = lo + range * out[i];
  });
}

void Philox::FillNormal(float* out, int64_t n, float mean, float stddev, uint64_t offset) const {
  ParallelFor(n, 4096, [&](int64_t b, int64_t e) {
    NormalRange(offset + b, e - b, out + b);
    for (int64_t i = b; i < e; ++i) out[i] = mean + stddev * out[i];
  });
}

}  // namespace xw
