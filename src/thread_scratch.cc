#include "src/thread_scratch.h"

#include "xwires/core/tensor.h"

namespace xw {

float* ThreadScratch(int slot, int64_t n) {
  thread_local AlignedFloats buffers[kScratchSlots];
  AlignedFloats& b = buffers[slot];
  if (static_cast<int64_t>(b.size()) < n) {
    b = AlignedFloats();  // free first: no copy of the old contents
    b.resize(n);
  }
  return b.data();
}

}  // namespace xw
