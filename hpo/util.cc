#include "util.h"

#include <charconv>

namespace xw::hpo::internal {

std::string Num(double v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, r.ptr);
}

double UniformDouble(const Philox& rng, uint64_t index) {
  const uint64_t hi = rng.U32(2 * index) >> 5;      // 27 bits
  const uint64_t lo = rng.U32(2 * index + 1) >> 6;  // 26 bits
  return static_cast<double>((hi << 26) | lo) * 0x1.0p-53;
}

}  // namespace xw::hpo::internal
