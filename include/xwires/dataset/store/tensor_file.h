// Weights files: named tensors in PyTorch state_dict naming and layout, stored
// as HDF5 so that Python reads them with h5py and feeds them to
// `torch.nn.Module.load_state_dict`.
//
// File layout (see docs/dataset.md):
//   - one HDF5 dataset per tensor, at the root, named exactly like the
//     state_dict key ("features.0.weight", "layer1.0.bn1.running_mean");
//   - float tensors are H5T_IEEE_F32LE with the tensor's shape (OIHW conv
//     weights, [out, in] dense weights); rank-0 tensors are scalar dataspaces;
//   - integer tensors (`is_int64`, e.g. "layer1.0.bn1.num_batches_tracked")
//     are H5T_STD_I64LE, usually scalar (shape []);
//   - root attribute "tensor_order": array of variable-length UTF-8 strings,
//     the names in canonical (state_dict) order, because HDF5 iterates
//     alphabetically;
//   - root attribute "format" = "xwires-tensors-1"; plus caller string attrs.
//
// Readers also accept files without "tensor_order" (written by h5py from a
// state_dict): names then come in HDF5's (alphabetical) order; any float type
// is converted to float32 and any integer type to int64.
//
// All functions are thread-safe with respect to each other only if the HDF5
// library is built thread-safe; Debian's serial HDF5 is not, so callers must
// not run them concurrently from several threads of one process (they take an
// internal process-wide lock to make that safe).
#ifndef XWIRES_DATASET_STORE_TENSOR_FILE_H_
#define XWIRES_DATASET_STORE_TENSOR_FILE_H_

#include <map>
#include <string>
#include <vector>

#include "xwires/core/status.h"
#include "xwires/core/tensor.h"

namespace xw {

// A state_dict entry. For `is_int64` tensors the float values of `value` are
// the integers (exact up to 2^24, plenty for batch counters) and are stored
// as int64.
struct NamedTensor {
  std::string name;
  Tensor value;
  bool is_int64 = false;
};

// Order = canonical (state_dict) order; preserved by write + read.
using NamedTensors = std::vector<NamedTensor>;

// Writes `tensors` to `path` atomically: the data goes to
// "<path>.tmp-<pid>-<n>", is flushed and fsync'ed, then renamed over `path`,
// and the directory is fsync'ed. Readers never see a partial file. Names must
// be non-empty, unique and free of '/'. `string_attrs` become root string
// attributes (keys "format" and "tensor_order" are reserved).
Status WriteTensorFile(
    const std::string& path, const NamedTensors& tensors,
    const std::map<std::string, std::string>& string_attrs = {});

// Reads every tensor of a weights file in canonical order. Errors name the
// path: NotFound (missing), Corruption (not HDF5, truncated, unreadable
// dataset, "tensor_order" naming a missing dataset), NotSupported (a dataset
// of a non-numeric type).
Result<NamedTensors> ReadTensorFile(const std::string& path);

// The root string attributes of a weights file (including "format").
Result<std::map<std::string, std::string>> ReadTensorFileAttrs(
    const std::string& path);

// SHA-256 (lowercase hex) over the raw little-endian bytes of every tensor in
// order: float32 data as 4 bytes per element, int64 tensors as 8 bytes per
// element. Names and shapes are not hashed.
std::string WeightsSha256(const NamedTensors& tensors);

}  // namespace xw

#endif  // XWIRES_DATASET_STORE_TENSOR_FILE_H_
