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

// n evenly spaced points from lo to hi inclusive (n >= 2).
std::vector<double> Linspace(double lo, double hi, int n);

}  // namespace xw

#endif  // XWIRES_API_KDE_H_
