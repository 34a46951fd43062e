#include "xwires/hpo/space.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "util.h"

namespace xw::hpo {
namespace {

using internal::Num;

// The coordinate in which a dimension is uniform: log10 for log dimensions.
double Warp(const Dimension& d, double x) { return d.log ? std::log10(x) : x; }
double Unwarp(const Dimension& d, double t) {
  return d.log ? std::pow(10.0, t) : t;
}

bool IsIntegral(double v) { return std::isfinite(v) && std::floor(v) == v; }

}  // namespace

std::string DimTypeName(DimType t) {
  return t == DimType::kInteger ? "integer" : "real";
}

Status ValidateDimension(const Dimension& d) {
  const std::string where = "dimension '" + d.name + "'";
  if (d.name.empty()) return Status::InvalidArgument("dimension name is empty");
  if (!std::isfinite(d.low) || !std::isfinite(d.high)) {
    return Status::InvalidArgument(where +
                                   ": low and high must be finite (got " +
                                   Num(d.low) + ", " + Num(d.high) + ")");
  }
  if (d.low > d.high || (d.type == DimType::kReal && d.low == d.high)) {
    return Status::InvalidArgument(where + ": low (" + Num(d.low) +
                                   ") must be below high (" + Num(d.high) +
                                   ")");
  }
  if (d.log && d.low <= 0) {
    return Status::InvalidArgument(
        where + ": a log dimension needs low > 0 (got " + Num(d.low) + ")");
  }
  if (d.type == DimType::kInteger &&
      (!IsIntegral(d.low) || !IsIntegral(d.high))) {
    return Status::InvalidArgument(where +
                                   ": integer bounds must be integral (got " +
                                   Num(d.low) + ", " + Num(d.high) + ")");
  }
  if (d.type == DimType::kInteger &&
      (std::abs(d.low) > 9.0e15 || std::abs(d.high) > 9.0e15)) {
    return Status::InvalidArgument(where + ": integer bounds exceed 2^53");
  }
  return Status::OK();
}

Result<SearchSpace> SearchSpace::Create(std::vector<Dimension> dims) {
  if (dims.empty() || dims.size() > 30) {
    return Status::InvalidArgument(
        "a search space needs 1 to 30 dimensions (got " +
        std::to_string(dims.size()) + ")");
  }
  std::set<std::string> names;
  for (const Dimension& d : dims) {
    XW_RETURN_IF_ERROR(ValidateDimension(d));
    if (!names.insert(d.name).second) {
      return Status::InvalidArgument("dimension name '" + d.name +
                                     "' is used twice");
    }
  }
  return SearchSpace(std::move(dims));
}

int SearchSpace::IndexOf(const std::string& name) const {
  for (int i = 0; i < size(); ++i) {
    if (dims_[i].name == name) return i;
  }
  return -1;
}

double SearchSpace::ToUnit(int i, double x) const {
  const Dimension& d = dims_[i];
  if (d.low == d.high) return 0.0;
  if (d.type == DimType::kInteger) x = std::round(x);
  x = std::clamp(x, d.low, d.high);
  const double lo = Warp(d, d.low), hi = Warp(d, d.high);
  return std::clamp((Warp(d, x) - lo) / (hi - lo), 0.0, 1.0);
}

double SearchSpace::FromUnit(int i, double u) const {
  const Dimension& d = dims_[i];
  if (d.low == d.high) return d.low;
  u = std::clamp(u, 0.0, 1.0);
  const double lo = Warp(d, d.low), hi = Warp(d, d.high);
  double x = Unwarp(d, lo + u * (hi - lo));
  if (d.type == DimType::kInteger) x = std::round(x);
  return std::clamp(x, d.low, d.high);
}

std::vector<double> SearchSpace::ToUnit(std::span<const double> x) const {
  std::vector<double> u(dims_.size());
  for (int i = 0; i < size(); ++i) u[i] = ToUnit(i, x[i]);
  return u;
}

std::vector<double> SearchSpace::FromUnit(std::span<const double> u) const {
  std::vector<double> x(dims_.size());
  for (int i = 0; i < size(); ++i) x[i] = FromUnit(i, u[i]);
  return x;
}

std::vector<double> SearchSpace::Snap(std::span<const double> u) const {
  std::vector<double> s(dims_.size());
  for (int i = 0; i < size(); ++i) {
    s[i] = dims_[i].type == DimType::kInteger ? ToUnit(i, FromUnit(i, u[i]))
                                              : std::clamp(u[i], 0.0, 1.0);
  }
  return s;
}

Status SearchSpace::CheckPoint(std::span<const double> x) const {
  if (static_cast<int>(x.size()) != size()) {
    return Status::InvalidArgument("point has " + std::to_string(x.size()) +
                                   " coordinates, the space has " +
                                   std::to_string(size()) + " dimensions");
  }
  for (int i = 0; i < size(); ++i) {
    const Dimension& d = dims_[i];
    const std::string where = "dimension '" + d.name + "' value " + Num(x[i]);
    if (!std::isfinite(x[i]))
      return Status::InvalidArgument(where + " is not finite");
    if (d.type == DimType::kInteger && !IsIntegral(x[i])) {
      return Status::InvalidArgument(where + " is not an integer");
    }
    const double tol = 1e-9 * std::max(d.high - d.low, std::abs(d.high));
    if (x[i] < d.low - tol || x[i] > d.high + tol) {
      return Status::InvalidArgument(where + " is outside [" + Num(d.low) +
                                     ", " + Num(d.high) + "]");
    }
  }
  return Status::OK();
}

SearchSpace DefaultSearchSpace() {
  return SearchSpace::Create(
             {
                 {"lr", DimType::kReal, 1e-8, 0.1, true},
                 {"epochs", DimType::kInteger, 1, 50, false},
                 {"adam_eps", DimType::kReal, 1e-8, 1.0, true},
                 {"batch_size", DimType::kInteger, 10, 10000, false},
             })
      .value();
}

}  // namespace xw::hpo
