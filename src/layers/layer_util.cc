#include "layer_util.h"

#include <algorithm>

#include "xwires/core/parallel.h"

namespace xw {
namespace layers {

int64_t GrainForElements(int64_t n) { return GrainFor(n, /*min_grain=*/16384); }

Status CheckShape(const char* op, const char* what, const Tensor& t,
                  const Shape& shape) {
  if (t.shape() == shape) return Status::OK();
  return Status::InvalidArgument(std::string(op) + ": " + what + " has shape " +
                                 ShapeToString(t.shape()) + ", expected " +
                                 ShapeToString(shape));
}

Status CheckNotNull(const char* op, const char* what, const void* p) {
  if (p != nullptr) return Status::OK();
  return Status::InvalidArgument(std::string(op) + ": " + what +
                                 " must not be null");
}

}  // namespace layers
}  // namespace xw
