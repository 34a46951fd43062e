// Search spaces for the divergence search: named real or integer dimensions,
// optionally log-scaled, and the map to and from the unit cube the GP sees.
//
// Unit transform (as scikit-optimize's "normalize" transformer):
//   t(x) = log10(x) for log dimensions, x otherwise;
//   u    = (t(x) - t(low)) / (t(high) - t(low))   in [0, 1].
// Integers are rounded to the nearest integer before the forward map and after
// the inverse map (so every unit point decodes to a valid integer in
// [low, high]). An integer dimension may be degenerate (low == high, which a
// HyperSpace split of a tiny range can produce): it maps to u = 0 and decodes
// to low. Points are std::vector<double> in the space's dimension order, with
// integers held as exactly integral doubles.
//
// SearchSpace is an immutable value type; all methods are const and
// thread-safe.
#ifndef XWIRES_HPO_SPACE_H_
#define XWIRES_HPO_SPACE_H_

#include <span>
#include <string>
#include <vector>

#include "xwires/core/status.h"

namespace xw::hpo {

enum class DimType { kReal, kInteger };

// "real" / "integer".
std::string DimTypeName(DimType t);

struct Dimension {
  std::string name;
  DimType type = DimType::kReal;
  double low = 0.0;   // inclusive
  double high = 1.0;  // inclusive
  bool log = false;   // uniform in log10 between low and high (low > 0)

  bool operator==(const Dimension&) const = default;
};

// InvalidArgument naming the dimension and field if `d` is unusable: empty
// name, non-finite bounds, low > high (or low == high for a real), log with
// low <= 0, integer bounds that are not integral.
Status ValidateDimension(const Dimension& d);

class SearchSpace {
 public:
  // Validates every dimension and that names are unique; 1..30 dimensions.
  static Result<SearchSpace> Create(std::vector<Dimension> dims);

  int size() const { return static_cast<int>(dims_.size()); }
  const Dimension& dim(int i) const { return dims_[i]; }
  const std::vector<Dimension>& dims() const { return dims_; }
  // Index of the dimension called `name`, or -1.
  int IndexOf(const std::string& name) const;

  // Native value of dimension i -> unit coordinate in [0, 1] (clamped).
  double ToUnit(int i, double x) const;
  // Unit coordinate -> native value (clamped to [low, high]; integers rounded).
  double FromUnit(int i, double u) const;
  // Whole points; x.size() must equal size().
  std::vector<double> ToUnit(std::span<const double> x) const;
  std::vector<double> FromUnit(std::span<const double> u) const;
  // The unit point that FromUnit(u) maps back to (integers snapped to their
  // grid). Idempotent.
  std::vector<double> Snap(std::span<const double> u) const;

  // OK if x has size() finite coordinates inside the bounds (a relative
  // tolerance of 1e-9 of the range is allowed) and integral where required;
  // otherwise InvalidArgument naming the dimension and the value.
  Status CheckPoint(std::span<const double> x) const;

  bool operator==(const SearchSpace&) const = default;

 private:
  explicit SearchSpace(std::vector<Dimension> dims) : dims_(std::move(dims)) {}
  std::vector<Dimension> dims_;
};

// The CrossedWires study's Table 1 space:
//   lr [1e-8, 0.1] log, epochs [1, 50] integer,
//   adam_eps [1e-8, 1.0] log, batch_size [10, 10000] integer.
SearchSpace DefaultSearchSpace();

}  // namespace xw::hpo

#endif  // XWIRES_HPO_SPACE_H_
