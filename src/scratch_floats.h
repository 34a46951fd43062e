// Internal: float buffers for kernel scratch that is written whole before it
// is read (padded images, transposed operands, packed panels, partial sums).
#ifndef XWIRES_SRC_SCRATCH_FLOATS_H_
#define XWIRES_SRC_SCRATCH_FLOATS_H_

#include <limits>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

#include "xwires/core/tensor.h"

namespace xw {

// AlignedAllocator (64-byte aligned, large blocks on huge pages and reused)
// whose value-initialization is default-initialization: std::vector's size
// constructor and resize() leave new floats unset instead of zeroing them.
// Every zero-fill of a buffer that a kernel then overwrites was a wasted
// pass over memory (the "no memsets that the tiles overwrite").
// Elements constructed from a value (resize(n, v), push_back) are set as
// usual. Built with XWIRES_POISON_SCRATCH (CMake option), new elements are
// NaN instead, so a kernel that reads what it never wrote fails the tests.
template <typename T>
struct DefaultInitAllocator : AlignedAllocator<T> {
  DefaultInitAllocator() = default;
  template <typename U>
  DefaultInitAllocator(const DefaultInitAllocator<U>&) {}  // NOLINT
  template <typename U>
  struct rebind {
    using other = DefaultInitAllocator<U>;
  };
  template <typename U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
#ifdef XWIRES_POISON_SCRATCH
    if constexpr (std::is_floating_point_v<U>) {
      ::new (static_cast<void*>(p)) U(std::numeric_limits<U>::quiet_NaN());
      return;
    }
#endif
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

// A buffer whose contents are unspecified until written; see above.
using ScratchFloats = std::vector<float, DefaultInitAllocator<float>>;

}  // namespace xw

#endif  // XWIRES_SRC_SCRATCH_FLOATS_H_
