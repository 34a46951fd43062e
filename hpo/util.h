// Small helpers shared by the hpo sources (not part of the public API).
#ifndef XWIRES_HPO_UTIL_H_
#define XWIRES_HPO_UTIL_H_

#include <cstdint>
#include <string>

#include "xwires/core/rng.h"

namespace xw::hpo::internal {

// Shortest round-trip decimal form of v, for error messages and JSON.
std::string Num(double v);

// Uniform double in [0, 1) with 53 random bits from words 2i and 2i+1 of the
// Philox stream: a pure function of (seed, stream, index).
double UniformDouble(const Philox& rng, uint64_t index);

}  // namespace xw::hpo::internal

#endif  // XWIRES_HPO_UTIL_H_
