// Sobol low-discrepancy sequence with the Joe-Kuo direction numbers
// (new-joe-kuo-6.21201, S. Joe and F. Y. Kuo, SIAM J. Sci. Comput. 30, 2008)
// for up to kMaxDim dimensions, 32-bit precision, Gray-code order.
//
// Point(i) is a pure function of i (random access, no state), so any thread
// can draw any point. Unshifted, Point(i) equals
// scipy.stats.qmc.Sobol(d, scramble=False).random(i + 1)[i]; point 0 is the
// origin. A digital shift (XOR of every coordinate's 32-bit integer with a
// per-dimension word) randomises the sequence while keeping its net
// structure; the optimizer draws the shift from xw::Philox so different seeds
// give different but equally well spread designs.
//
// Immutable after construction; thread-safe.
#ifndef XWIRES_HPO_SOBOL_H_
#define XWIRES_HPO_SOBOL_H_

#include <cstdint>
#include <vector>

#include "xwires/core/status.h"

namespace xw::hpo {

class Sobol {
 public:
  static constexpr int kMaxDim = 21;

  // InvalidArgument unless 1 <= dim <= kMaxDim.
  static Result<Sobol> Create(int dim);

  int dim() const { return dim_; }
  // Writes dim() coordinates in [0, 1) to out. shift: nullptr or dim() words
  // XORed into the coordinates (a digital shift). index < 2^32.
  void Point(uint64_t index, double* out,
             const uint32_t* shift = nullptr) const;
  // Points start .. start+count-1 into out (row-major [count, dim]), by the
  // Gray-code recursion (one XOR per coordinate per point); equal to Point().
  void Generate(uint64_t start, int64_t count, double* out,
                const uint32_t* shift = nullptr) const;

 private:
  explicit Sobol(int dim);
  int dim_;
  std::vector<uint32_t> v_;  // [dim][32] direction numbers, bit 31 = 1/2
};

}  // namespace xw::hpo

#endif  // XWIRES_HPO_SOBOL_H_
