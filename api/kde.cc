#include "xwires/api/kde.h"

#include <cmath>
#include <numbers>

namespace xw {

namespace {

std::vector<double> Finite(std::span<const double> v) {
  std::vector<double> out;
  for (double d : v) {
    if (std::isfinite(d)) out.push_back(d);
  }
  return out;
}

}  // namespace

double ScottBandwidth(std::span<const double> samples) {
  const std::vector<double> v = Finite(samples);
  const double n = static_cast<double>(v.size());
  if (v.size() < 2) return 0;
  double mean = 0;
  for (double d : v) mean += d;
  mean /= n;
  double ss = 0;
  for (double d : v) ss += (d - mean) * (d - mean);
  const double sigma = std::sqrt(ss / (n - 1));
  return sigma * std::pow(n, -0.2);
}

std::vector<double> GaussianKde(std::span<const double> samples,
                                std::span<const double> grid, double h) {
  const std::vector<double> v = Finite(samples);
  std::vector<double> out(grid.size(), 0.0);
  if (v.empty() || !(h > 0)) return out;
  const double norm = 1.0 / (static_cast<double>(v.size()) * h *
                             std::sqrt(2 * std::numbers::pi));
  for (size_t g = 0; g < grid.size(); ++g) {
    double s = 0;
    for (double d : v) {
      const double z = (grid[g] - d) / h;
      s += std::exp(-0.5 * z * z);
    }
    out[g] = s * norm;
  }
  return out;
}

std::vector<double> ReflectedKde(std::span<const double> samples,
                                 std::span<const double> grid, double h,
                                 double lo, double hi) {
  const std::vector<double> v = Finite(samples);
  std::vector<double> out(grid.size(), 0.0);
  if (v.empty() || !(h > 0) || !(hi > lo)) return out;
  const double norm = 1.0 / (static_cast<double>(v.size()) * h *
                             std::sqrt(2 * std::numbers::pi));
  auto phi = [h](double d) {
    const double z = d / h;
    return std::exp(-0.5 * z * z);
  };
  for (size_t g = 0; g < grid.size(); ++g) {
    const double x = grid[g];
    if (x < lo || x > hi) continue;
    double s = 0;
    for (double d : v) s += phi(x - d) + phi(x + d - 2 * lo) + phi(x + d - 2 * hi);
    out[g] = s * norm;
  }
  return out;
}

std::vector<double> Linspace(double lo, double hi, int n) {
  std::vector<double> out(n);
  for (int i = 0; i < n; ++i)
    out[i] = n == 1 ? lo : lo + (hi - lo) * i / (n - 1);
  return out;
}

}  // namespace xw
