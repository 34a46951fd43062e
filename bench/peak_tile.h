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
// narrow: 8 x 2 vectors instead of the kernels' 6 x 4 on targets with 32
// vector registers (on Zen 4 the unfused 6 x 4 tile of 8-lane vectors tops
// out near 92 GFLOP/s while other shapes of 8-lane vectors reach 113-116,
// as fused tiles do: the products and the adds issue on separate pipes).
// With 16 registers the tile stays 6 x 2. Single-threaded; thread-safe.
double TileFlops(bool fma, bool half_width, bool narrow, int64_t reps);

}  // namespace bench
}  // namespace xw

#endif  // XWIRES_BENCH_PEAK_TILE_H_
