#include "convert.h"

#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

namespace xw::python {
namespace {

enum class Kind { kNull, kInt, kFloat, kStr, kObject };

// The narrowest kind holding every cell of column `c`.
Kind ColumnKind(const Table& t, size_t c) {
  Kind kind = Kind::kNull;
  for (const auto& row : t.rows) {
    const Cell& cell = row[c];
    Kind k = std::holds_alternative<int64_t>(cell)       ? Kind::kInt
             : std::holds_alternative<double>(cell)      ? Kind::kFloat
             : std::holds_alternative<std::string>(cell) ? Kind::kStr
                                                         : Kind::kNull;
    if (k == Kind::kNull || k == kind) continue;
    if (kind == Kind::kNull) {
      kind = k;
    } else if ((kind == Kind::kInt && k == Kind::kFloat) ||
               (kind == Kind::kFloat && k == Kind::kInt)) {
      kind = Kind::kFloat;
    } else {
      return Kind::kObject;
    }
  }
  return kind == Kind::kNull ? Kind::kFloat : kind;
}

py::object CellObject(const Cell& cell) {
  if (const auto* i = std::get_if<int64_t>(&cell)) return py::int_(*i);
  if (const auto* d = std::get_if<double>(&cell)) {
    return *d != *d ? py::object(py::none()) : py::object(py::float_(*d));
  }
  if (const auto* s = std::get_if<std::string>(&cell)) return py::str(*s);
  return py::none();
}

}  // namespace

py::dict TableColumns(const Table& t) {
  py::list columns, kinds, values, masks;
  const py::ssize_t n = static_cast<py::ssize_t>(t.rows.size());
  for (size_t c = 0; c < t.columns.size(); ++c) {
    columns.append(t.columns[c]);
    const Kind kind = ColumnKind(t, c);
    if (kind == Kind::kInt) {
      py::array_t<int64_t> v(n);
      py::array_t<bool> m(n);
      int64_t* pv = v.mutable_data();
      bool* pm = m.mutable_data();
      bool any_null = false;
      for (py::ssize_t r = 0; r < n; ++r) {
        const int64_t* i = std::get_if<int64_t>(&t.rows[r][c]);
        pv[r] = i ? *i : 0;
        pm[r] = i == nullptr;
        any_null |= i == nullptr;
      }
      kinds.append("int");
      values.append(v);
      masks.append(any_null ? py::object(m) : py::object(py::none()));
    } else if (kind == Kind::kFloat) {
      py::array_t<double> v(n);
      double* pv = v.mutable_data();
      for (py::ssize_t r = 0; r < n; ++r) {
        const Cell& cell = t.rows[r][c];
        if (const auto* d = std::get_if<double>(&cell)) {
          pv[r] = *d;
        } else if (const auto* i = std::get_if<int64_t>(&cell)) {
          pv[r] = static_cast<double>(*i);
        } else {
          pv[r] = std::numeric_limits<double>::quiet_NaN();
        }
      }
      kinds.append("float");
      values.append(v);
      masks.append(py::none());
    } else {
      py::list v(n);
      for (py::ssize_t r = 0; r < n; ++r) v[r] = CellObject(t.rows[r][c]);
      kinds.append(kind == Kind::kStr ? "str" : "object");
      values.append(v);
      masks.append(py::none());
    }
  }
  py::dict out;
  out["columns"] = columns;
  out["kinds"] = kinds;
  out["values"] = values;
  out["masks"] = masks;
  return out;
}

py::array TensorArray(Tensor&& t) {
  auto* owned = new Tensor(std::move(t));
  py::capsule owner(owned, [](void* p) { delete static_cast<Tensor*>(p); });
  std::vector<py::ssize_t> shape(owned->shape().begin(), owned->shape().end());
  std::vector<py::ssize_t> strides(shape.size());
  py::ssize_t stride = sizeof(float);
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= shape[i];
  }
  // An empty tensor has no buffer; numpy still needs a non-null pointer.
  static float kEmpty = 0;
  float* data = owned->size() > 0 ? owned->data() : &kEmpty;
  return py::array_t<float>(shape, strides, data, owner);
}

py::list NamedArrays(NamedTensors&& tensors) {
  py::list out;
  for (NamedTensor& t : tensors) {
    py::array a;
    if (t.is_int64) {
      // Stored as exact small integers in floats (tensor_file.h): the int64
      // array is a conversion, not a view.
      std::vector<py::ssize_t> shape(t.value.shape().begin(), t.value.shape().end());
      py::array_t<int64_t> ints(shape);
      int64_t* p = ints.mutable_data();
      for (int64_t i = 0; i < t.value.size(); ++i) p[i] = static_cast<int64_t>(t.value[i]);
      a = ints;
    } else {
      a = TensorArray(std::move(t.value));
    }
    out.append(py::make_tuple(t.name, a));
  }
  return out;
}

py::dict CurveArrays(const std::vector<EpochMetrics>& curves) {
  const py::ssize_t n = static_cast<py::ssize_t>(curves.size());
  py::array_t<int64_t> epoch(n);
  int64_t* pe = epoch.mutable_data();
  for (py::ssize_t i = 0; i < n; ++i) pe[i] = curves[i].epoch;
  py::dict out;
  out["epoch"] = epoch;
  auto column = [&](const char* name, double EpochMetrics::*field) {
    py::array_t<double> a(n);
    double* p = a.mutable_data();
    for (py::ssize_t i = 0; i < n; ++i) p[i] = curves[i].*field;
    out[name] = a;
  };
  column("train_loss_mean", &EpochMetrics::train_loss_mean);
  column("train_loss_last", &EpochMetrics::train_loss_last);
  column("train_acc", &EpochMetrics::train_acc);
  column("test_loss", &EpochMetrics::test_loss);
  column("test_acc", &EpochMetrics::test_acc);
  return out;
}

}  // namespace xw::python
