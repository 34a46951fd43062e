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

// Per-thread scratch of at least n floats (64-byte aligned), contents
// unspecified. Each `slot` is a separate buffer that grows and is never
// freed, so hot loops neither allocate nor zero-fill (freeing big blocks lets
// glibc trim the heap, and touching them again costs page faults). The
// pointer stays valid until the next call with the same slot on this thread,
// so a ParallelFor body may hold it only if it calls no ParallelFor itself.
float* ThreadScratch(int slot, int64_t n);
inline constexpr int kScratchSlots = 4;

// OK if `t` has exactly `shape`, else InvalidArgument "<op>: <what> has shape
// [..], expected [..]".
Status CheckShape(const char* op, const char* what, const Tensor& t,
                  const Shape& shape);
// OK if `t` is non-null.
Status CheckNotNull(const char* op, const char* what, const void* p);

}  // namespace layers
}  // namespace xw

#endif  // XWIRES_SRC_LAYERS_LAYER_UTIL_H_
