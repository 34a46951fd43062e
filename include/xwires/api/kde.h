// Gaussian kernel density estimate for the report's distribution plots, as
// scipy.stats.gaussian_kde with its default bandwidth (Scott's rule):
//   h = sigma * n^(-1/5), sigma the sample standard deviation (ddof 1),
//   f(x) = 1/(n h sqrt(2 pi)) * sum_i exp(-((x - x_i) / h)^2 / 2).
// Non-finite samples are dropped. Pure functions, thread-safe.
#ifndef XWIRES_API_KDE_H_
#define XWIRES_API_KDE_H_

#include <span>
#include <vector>

namespace xw {

// Scott's bandwidth of the finite samples; 0 for fewer than two samples or
// zero spread.
double ScottBandwidth(std::span<const double> samples);

// Density at each grid point with bandwidth h (> 0). Empty samples give 0.
std::vector<double> GaussianKde(std::span<const double> samples,
                                std::span<const double> grid, double h);

// The same estimate for a quantity bounded to [lo, hi] (accuracies and
// |accuracy differences| live in [0, 1]), boundary-corrected by reflection:
//   f(x) = 1/(n h sqrt(2 pi)) * sum_i [phi((x - x_i)/h) + phi((x + x_i - 2 lo)/h)
//                                      + phi((x + x_i - 2 hi)/h)],
// phi(z) = exp(-z^2 / 2), for x in [lo, hi] (0 outside). A plain kernel puts
// mass outside the bounds, so the curve is cut off at them and sinks towards
// the boundary even when the samples crowd there; the reflected estimate
// integrates to 1 over [lo, hi] (up to mass beyond one reflection, i.e. when
// h is comparable to hi - lo) and has zero slope at the bounds.
std::vector<double> ReflectedKde(std::span<const double> samples,
                                 std::span<const double> grid, double h,
                                 double lo, double hi);

// n evenly spaced points from lo to hi inclusive (n >= 2).
std::vector<double> Linspace(double lo, double hi, int n);

}  // namespace xw

#endif  // XWIRES_API_KDE_H_
