// Standard optimisation test functions with known minima (skopt/benchmarks.py,
// sfu.ca/~ssurjano), used by the hpo tests and benchmarks.
#ifndef XWIRES_TESTS_HPO_TEST_FUNCTIONS_H_
#define XWIRES_TESTS_HPO_TEST_FUNCTIONS_H_

#include <cmath>
#include <numbers>
#include <vector>

namespace xw::hpo::testing {

// Branin on x1 in [-5, 10], x2 in [0, 15]; minimum 0.397887 at (-pi, 12.275),
// (pi, 2.275) and (9.42478, 2.475).
inline double Branin(const std::vector<double>& x) {
  const double pi = std::numbers::pi;
  const double b = 5.1 / (4 * pi * pi), c = 5 / pi, t = 1 / (8 * pi);
  const double u = x[1] - b * x[0] * x[0] + c * x[0] - 6;
  return u * u + 10 * (1 - t) * std::cos(x[0]) + 10;
}
inline constexpr double kBraninMin = 0.397887357729738;

// Hartmann6 on [0, 1]^6; minimum -3.32237 at
// (0.20169, 0.150011, 0.476874, 0.275332, 0.311652, 0.6573).
inline double Hartmann6(const std::vector<double>& x) {
  static const double alpha[4] = {1.0, 1.2, 3.0, 3.2};
  static const double a[4][6] = {{10, 3, 17, 3.5, 1.7, 8},
                                 {0.05, 10, 17, 0.1, 8, 14},
                                 {3, 3.5, 1.7, 10, 17, 8},
                                 {17, 8, 0.05, 10, 0.1, 14}};
  static const double p[4][6] = {{1312, 1696, 5569, 124, 8283, 5886},
                                 {2329, 4135, 8307, 3736, 1004, 9991},
                                 {2348, 1451, 3522, 2883, 3047, 6650},
                                 {4047, 8828, 8732, 5743, 1091, 381}};
  double f = 0;
  for (int i = 0; i < 4; ++i) {
    double s = 0;
    for (int j = 0; j < 6; ++j) {
      const double d = x[j] - 1e-4 * p[i][j];
      s += a[i][j] * d * d;
    }
    f -= alpha[i] * std::exp(-s);
  }
  return f;
}
inline constexpr double kHartmann6Min = -3.322368011415512;

}  // namespace xw::hpo::testing

#endif  // XWIRES_TESTS_HPO_TEST_FUNCTIONS_H_
