// The arithmetic ceiling of the kernels' register tiles (peak_tile.cc), for
// bench_kernels' peak/ rows.
#ifndef XWIRES_BENCH_PEAK_TILE_H_
#define XWIRES_BENCH_PEAK_TILE_H_

#include <cstdint>

namespace xw {
namespace bench {

// Runs `reps` sweeps of a 6-row register tile over a 64-term L1 panel on the
// dispatched SIMD target and returns the floating-point operations done (2
// per multiply-add). fma: one fused multiply-add per term, else a product
// and a dependent add (two roundings). half_width: on targets with 16 float
// lanes, 8-lane vectors instead (the tiles the kernels use for unfused
// chains on CPUs that split 512-bit operations); elsewhere ignored.
// Single-threaded; thread-safe.
double TileFlops(bool fma, bool half_width, int64_t reps);

}  // namespace bench
}  // namespace xw

#endif  // XWIRES_BENCH_PEAK_TILE_H_
