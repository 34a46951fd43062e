// C++ results as Python objects the pure-Python layer turns into pandas
// DataFrames and OrderedDicts: tables by column (numpy arrays for numbers),
// tensors as numpy arrays that share the tensor's memory, curves as one
// numpy array per metric. Call with the GIL held.
#ifndef XWIRES_PYTHON_BINDING_CONVERT_H_
#define XWIRES_PYTHON_BINDING_CONVERT_H_

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <vector>

#include "xwires/core/tensor.h"
#include "xwires/dataset/query/table.h"
#include "xwires/dataset/store/run_record.h"
#include "xwires/dataset/store/tensor_file.h"

namespace xw::python {

namespace py = pybind11;

// {"columns": [names], "kinds": [...], "values": [...], "masks": [...]}, one
// entry per column. kind "int": values an int64 array, masks a bool array
// (True = null) or None; "float": a float64 array (NaN = null), mask None;
// "str" and "object": a list of str / Python values with None for null.
py::dict TableColumns(const Table& t);

// A float32 numpy array viewing `t`'s data (no copy): the array owns the
// tensor from now on.
py::array TensorArray(Tensor&& t);

// [(name, array), ...] in state_dict order: float32 arrays sharing the
// tensors' memory, int64 0-d or n-d arrays for integer entries.
py::list NamedArrays(NamedTensors&& tensors);

// {"epoch": int64[E], "train_loss_mean": float64[E], ...}: the columns of
// the curves in docs/dataset.md order (NaN = unknown).
py::dict CurveArrays(const std::vector<EpochMetrics>& curves);

}  // namespace xw::python

#endif  // XWIRES_PYTHON_BINDING_CONVERT_H_
