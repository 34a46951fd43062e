// Internal to the attribution: derived effects and renderings
// (attribute_summary.cc), filled after the runs (attribute.cc).
#ifndef XWIRES_API_ATTRIBUTE_INTERNAL_H_
#define XWIRES_API_ATTRIBUTE_INTERNAL_H_

#include <cstdint>

#include "xwires/api/attribute.h"

namespace xw {

// From r->runs (baselines) and r->knobs' switched accuracies: the baseline
// accuracies and divergence, each knob's alone_a / remain_b / share, the
// knobs sorted by share (largest first, then by path), main_knobs and the
// summary line.
// With r->noise_threshold finite, also each knob's beyond_noise.
void SummarizeAttribution(AttributionReport* r);

// t(0.975, df) sqrt(2) noise_sd (attribute.h); NaN for df < 1 or a negative
// or NaN sd.
double NoiseThreshold(double noise_sd, int64_t df);

}  // namespace xw

#endif  // XWIRES_API_ATTRIBUTE_INTERNAL_H_
