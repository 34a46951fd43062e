// Finite-difference gradient checks shared by the kernel and layer tests.
//
// Include as "grad_check.h" from tests/core. Usage: pick a scalar loss of the op's output, usually
//   L = WeightedSum(y, r) = sum_i y[i] * r[i]   (r random, fixed),
// so dL/dy = r is what the backward pass receives. Then compare the analytic
// gradient with central differences of L with respect to each parameter:
//
//   Tensor r = RandomTensor(y.shape(), /*seed=*/7);
//   auto loss = [&] { Forward(x, w, &y); return WeightedSum(y, r); };
//   EXPECT_TRUE(CheckGradient("dw", &w, dw, loss));
//
// The loss is evaluated in float by the op and summed in double, so the
// numerical derivative's error is about |y| * 2^-24 / eps per output; for
// ops that are linear in the perturbed tensor (conv, matmul, dense) central
// differences have no truncation error, and eps can be large (default 1e-2).
// Nonlinear ops should pass a smaller eps and avoid kinks (ReLU at 0, max-pool
// ties). Header-only; not thread-safe (mutates the perturbed tensor, and
// restores it bit for bit before returning).
#ifndef XWIRES_TESTS_CORE_GRAD_CHECK_H_
#define XWIRES_TESTS_CORE_GRAD_CHECK_H_

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "xwires/core/rng.h"
#include "xwires/core/tensor.h"

namespace xw {
namespace gradcheck {

// A tensor of the given shape, uniform in [lo, hi), from Philox(seed, "test").
inline Tensor RandomTensor(const Shape& shape, uint64_t seed, float lo = -1.0f,
                           float hi = 1.0f) {
  Tensor t(shape);
  Philox(seed, StreamId("test")).FillUniform(t.data(), t.size(), lo, hi);
  return t;
}

// sum_i y[i] * r[i], accumulated in double. Shapes must have equal sizes.
inline double WeightedSum(const Tensor& y, const Tensor& r) {
  double s = 0.0;
  const int64_t n = std::min(y.size(), r.size());
  for (int64_t i = 0; i < n; ++i) s += static_cast<double>(y[i]) * r[i];
  return s;
}

struct GradCheckOptions {
  double eps = 1e-2;   // central-difference step (absolute)
  double rtol = 1e-2;  // |analytic - numeric| <= atol + rtol * max(|a|, |n|)
  double atol = 1e-3;
  // Check at most this many elements (a fixed, evenly spread subset), 0 = all.
  int64_t max_checks = 64;
};

// Indices CheckGradient visits for a tensor of n elements: all of them, or
// max_checks evenly spread ones including the first and the last.
inline std::vector<int64_t> CheckedIndices(int64_t n, int64_t max_checks) {
  std::vector<int64_t> idx;
  if (max_checks <= 0 || n <= max_checks) {
    for (int64_t i = 0; i < n; ++i) idx.push_back(i);
    return idx;
  }
  for (int64_t j = 0; j < max_checks; ++j) {
    idx.push_back(max_checks == 1 ? 0 : j * (n - 1) / (max_checks - 1));
  }
  return idx;
}

// Central difference (L(p + eps) - L(p - eps)) / (2 eps) at element i of
// *param; the element is restored exactly afterwards.
inline double NumericalDerivative(Tensor* param, int64_t i,
                                  const std::function<double()>& loss, double eps) {
  const float saved = (*param)[i];
  // Use the actually representable perturbations, not the nominal eps.
  const float up = static_cast<float>(saved + eps);
  const float down = static_cast<float>(saved - eps);
  (*param)[i] = up;
  const double lp = loss();
  (*param)[i] = down;
  const double lm = loss();
  (*param)[i] = saved;
  return (lp - lm) / (static_cast<double>(up) - static_cast<double>(down));
}

// Compares `analytic` (same size as *param) with central differences of
// loss() on the selected elements of *param. Reports the worst few
// mismatches by name and index.
inline ::testing::AssertionResult CheckGradient(const std::string& name, Tensor* param,
                                                const Tensor& analytic,
                                                const std::function<double()>& loss,
                                                const GradCheckOptions& opt = {}) {
  if (analytic.size() != param->size()) {
    return ::testing::AssertionFailure()
           << name << ": analytic gradient has " << analytic.size()
           << " elements, parameter has " << param->size();
  }
  std::ostringstream bad;
  int failures = 0;
  double worst = 0.0;
  for (int64_t i : CheckedIndices(param->size(), opt.max_checks)) {
    const double num = NumericalDerivative(param, i, loss, opt.eps);
    const double ana = analytic[i];
    const double err = std::fabs(ana - num);
    const double tol = opt.atol + opt.rtol * std::max(std::fabs(ana), std::fabs(num));
    worst = std::max(worst, err / tol);
    if (!(err <= tol)) {  // also catches NaN
      if (++failures <= 5) {
        bad << "\n  " << name << "[" << i << "]: analytic " << ana << " numeric " << num;
      }
    }
  }
  if (failures == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << name << ": " << failures
                                       << " gradient mismatches (worst err/tol " << worst
                                       << ")" << bad.str();
}

// Max over i of |a[i] - b[i]| / (atol + rtol * |b[i]|) <= 1 as an assertion;
// b is the reference. Use for comparing an op against a double reference.
inline ::testing::AssertionResult AllClose(const std::string& name, const Tensor& a,
                                           const std::vector<double>& b, double rtol,
                                           double atol) {
  if (static_cast<size_t>(a.size()) != b.size()) {
    return ::testing::AssertionFailure()
           << name << ": size " << a.size() << " vs reference " << b.size();
  }
  int failures = 0;
  std::ostringstream bad;
  for (int64_t i = 0; i < a.size(); ++i) {
    const double err = std::fabs(a[i] - b[i]);
    if (!(err <= atol + rtol * std::fabs(b[i]))) {
      if (++failures <= 5) bad << "\n  " << name << "[" << i << "]: " << a[i] << " vs " << b[i];
    }
  }
  if (failures == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << name << ": " << failures << " mismatches" << bad.str();
}

}  // namespace gradcheck

// The gradient checks' names for the layer tests (batch norm, pooling,
// elementwise, loss, ...), which open `namespace xw::layer_test` rather
// than each repeating these using-declarations.
namespace layer_test {
using gradcheck::CheckGradient;
using gradcheck::GradCheckOptions;
using gradcheck::RandomTensor;
using gradcheck::WeightedSum;
}  // namespace layer_test

}  // namespace xw

#endif  // XWIRES_TESTS_CORE_GRAD_CHECK_H_
