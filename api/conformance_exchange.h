// What xwires and a reference framework's runner (tests/conformance/
// tfjs_steps.js, torch_steps.py) exchange: tensors in a small binary file
// that Node.js and Python read without HDF5, and the per-tensor comparison.
//
// File layout (little-endian): the 8 bytes "XWTENS01", a uint32 count, then
// per tensor: uint32 name length, the name's bytes, uint8 dtype (0 float32,
// 1 int64), uint8 rank, rank x int64 dims, then the elements row-major.
// Names are state_dict names; a runner prefixes them with "<step>/".
#ifndef XWIRES_API_CONFORMANCE_EXCHANGE_H_
#define XWIRES_API_CONFORMANCE_EXCHANGE_H_

#include <map>
#include <string>

#include "xwires/core/status.h"
#include "xwires/core/tensor.h"
#include "xwires/dataset/store/tensor_file.h"

namespace xw::conformance {

// Writes `tensors` to `path` (int64 tensors hold integral float values,
// as NamedTensor does). Errors name the file.
Status WriteExchange(const std::string& path, const NamedTensors& tensors);

// Reads a file WriteExchange's layout describes. Corruption names the file
// and what is wrong (bad magic, truncated, rank over 8).
Result<NamedTensors> ReadExchange(const std::string& path);

// The error measure of every comparison: max |ours - ref| / scale, where
// scale is max |ref| over the tensor, or `scale` when that is larger (the
// comparisons pass the largest element of the tensor's layer, so that a
// bias or BN shift that starts at zero is measured on its layer's scale,
// not on its first updates'); the absolute difference when the scale is
// zero; infinity for NaN or a shape mismatch.
double RelativeError(const Tensor& ours, const Tensor& ref, double scale = 0);

// The module of a state_dict name: "layer1.0.bn1" for "layer1.0.bn1.bias".
std::string ModuleOf(const std::string& name);

// The worst float tensor of `ours` against the same-named tensor of `ref`,
// each measured by RelativeError against its module's scale (the largest
// |element| over the module's float tensors in `ref`); *worst names it.
// Tensors of `ours` that `ref` lacks and int64 buffers are not measured
// (CompareState in conformance.cc checks names and counters).
double StateError(const NamedTensors& ours, const NamedTensors& ref, std::string* worst);

// A float64 state carried in float32 files: each float tensor's double value
// v as hi = float(v) and lo = float(v - hi), so hi + lo is v to 2^-48 of its
// magnitude (torch_steps.py's float64.xwt: "<name>" and "<name>@lo").
struct SplitState {
  NamedTensors hi, lo;  // the same names, in the same order
};

// StateError against a float64 state: each tensor of `ours` against hi + lo,
// computed in double, the module scales taken from hi + lo. Tensors of
// `ours` without a pair are not measured; infinity for a shape mismatch.
double StateErrorF64(const NamedTensors& ours, const SplitState& ref, std::string* worst);

}  // namespace xw::conformance

#endif  // XWIRES_API_CONFORMANCE_EXCHANGE_H_
