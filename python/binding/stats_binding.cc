// The significance statistics for Python: xwires._xwires.compare_pair and
// benjamini_hochberg, thin wrappers of include/xwires/core/significance.h
// (the pure-Python layer, python/xwires/stats.py, checks argument types and
// holds the docstrings). Inputs arrive as contiguous numpy arrays.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <span>

#include "status_bridge.h"
#include "xwires/core/significance.h"

namespace xw::python {
namespace py = pybind11;
namespace {

using F64 = py::array_t<double, py::array::c_style | py::array::forcecast>;
using U8 = py::array_t<uint8_t, py::array::c_style | py::array::forcecast>;

template <typename T>
std::span<const T> View(
    const py::array_t<T, py::array::c_style | py::array::forcecast>& a) {
  return {a.data(), static_cast<size_t>(a.size())};
}

py::dict Summary(const stats::ProfileSummary& s) {
  py::dict d;
  d["k"] = s.k;
  d["mean"] = s.mean;
  d["sd"] = s.sd;
  d["collapses"] = s.collapses;
  d["floor"] = s.floor;
  d["sigma2_s"] = s.sigma2_s;
  return d;
}

py::dict ComparePairPy(const F64& acc_a, const F64& acc_b, const U8& finite_a,
                       const U8& finite_b, const U8& pred_a, const U8& pred_b,
                       const U8& labels, int num_classes, int64_t num_examples,
                       const py::dict& options) {
  stats::SignificanceOptions opt;
  for (auto item : options) {
    const std::string key = py::str(item.first);
    const py::handle v = item.second;
    if (key == "alpha")
      opt.alpha = v.cast<double>();
    else if (key == "superiority_low")
      opt.superiority_low = v.cast<double>();
    else if (key == "superiority_high")
      opt.superiority_high = v.cast<double>();
    else if (key == "floor_multiple")
      opt.floor_multiple = v.cast<double>();
    else if (key == "collapse_se_multiple")
      opt.collapse_se_multiple = v.cast<double>();
    else if (key == "min_survivors")
      opt.min_survivors = v.cast<int>();
    else if (key == "confidence")
      opt.confidence = v.cast<double>();
    else if (key == "max_exact_splits")
      opt.max_exact_splits = v.cast<uint64_t>();
    else if (key == "monte_carlo_resamples")
      opt.monte_carlo_resamples = v.cast<int>();
    else if (key == "seed")
      opt.seed = v.cast<uint64_t>();
    else if (key == "replicas_redraw")
      opt.replicas_redraw = v.cast<bool>();
    else if (key == "min_spread_ratio")
      opt.min_spread_ratio = v.cast<double>();
    else
      Check(
          Status::InvalidArgument("unknown significance option '" + key + "'"));
  }
  const stats::ProfileReplicas a{View(acc_a), View(finite_a), View(pred_a)};
  const stats::ProfileReplicas b{View(acc_b), View(finite_b), View(pred_b)};
  const stats::TestSetInfo test{num_classes, num_examples, View(labels)};
  Result<stats::PairStatistics> r = Status::Internal("not run");
  {
    py::gil_scoped_release release;
    r = stats::ComparePair(a, b, test, opt);
  }
  const stats::PairStatistics st = Unwrap(std::move(r));
  py::dict d;
  d["a"] = Summary(st.a);
  d["b"] = Summary(st.b);
  d["mean_diff"] = st.mean_diff;
  d["permutation_p"] = st.permutation_p;
  d["permutation_exact"] = st.permutation_exact;
  d["permutation_splits"] = st.permutation_splits;
  d["welch_t"] = st.welch_t;
  d["welch_df"] = st.welch_df;
  d["welch_p"] = st.welch_p;
  d["ci_low"] = st.ci_low;
  d["ci_high"] = st.ci_high;
  d["hedges_g"] = st.hedges_g;
  d["prob_a_greater"] = st.prob_a_greater;
  d["fisher_p"] = st.fisher_p;
  d["survivors_tested"] = st.survivors_tested;
  d["survivors_diff"] = st.survivors_diff;
  d["survivors_p"] = st.survivors_p;
  d["survivors_prob_a_greater"] = st.survivors_prob_a_greater;
  d["has_predictions"] = st.has_predictions;
  d["churn_aa"] = st.churn_aa;
  d["churn_bb"] = st.churn_bb;
  d["churn_ab"] = st.churn_ab;
  d["excess_churn"] = st.excess_churn;
  d["excess_churn_p"] = st.excess_churn_p;
  d["floor"] = st.floor;
  d["floor_from_predictions"] = st.floor_from_predictions;
  d["se2"] = st.se2;
  d["lcb"] = st.lcb;
  d["verdict"] = stats::VerdictName(st.verdict);
  d["verdict_reason"] = st.verdict_reason;
  return d;
}

py::tuple BenjaminiHochbergPy(const F64& p, double q) {
  const stats::BhResult r = Unwrap(stats::BenjaminiHochberg(View(p), q));
  const py::ssize_t n = static_cast<py::ssize_t>(r.adjusted.size());
  py::array_t<double> adjusted(n);
  py::array_t<bool> reject(n);
  for (py::ssize_t i = 0; i < n; ++i) {
    adjusted.mutable_data()[i] = r.adjusted[i];
    reject.mutable_data()[i] = r.reject[i] != 0;
  }
  return py::make_tuple(adjusted, reject);
}

}  // namespace

void RegisterStats(py::module_& m) {
  m.def("compare_pair", &ComparePairPy, py::arg("acc_a"), py::arg("acc_b"),
        py::arg("finite_a"), py::arg("finite_b"), py::arg("pred_a"),
        py::arg("pred_b"), py::arg("labels"), py::arg("num_classes"),
        py::arg("num_examples"), py::arg("options"));
  m.def("benjamini_hochberg", &BenjaminiHochbergPy, py::arg("p"), py::arg("q"));
}

}  // namespace xw::python
