// Internal helpers shared by the layer kernels (not installed).
#ifndef XWIRES_SRC_LAYERS_LAYER_UTIL_H_
#define XWIRES_SRC_LAYERS_LAYER_UTIL_H_

#include <cstdint>
#include <string>

#include "xwires/core/status.h"
#include "xwires/core/tensor.h"

namespace xw {
namespace layers {

// Elements per parallel chunk for elementwise loops: large enough that task
// overhead is negligible; fixed by n only, so chunking never depends on
// threads.
int64_t GrainForElements(int64_t n);

// OK if `t` has exactly `shape`, else InvalidArgument "<op>: <what> has shape
// [..], expected [..]".
Status CheckShape(const char* op, const char* what, const Tensor& t,
                  const Shape& shape);
// OK if `t` is non-null.
Status CheckNotNull(const char* op, const char* what, const void* p);

}  // namespace layers
}  // namespace xw

#endif  // XWIRES_SRC_LAYERS_LAYER_UTIL_H_
