#include "src/thread_scratch.h"

#include "src/scratch_floats.h"

namespace xw {

float* ThreadScratch(int slot, int64_t n) {
  thread_local ScratchFloats buffers[kScratchSlots];
  ScratchFloats& b = buffers[slot];
  if (static_cast<int64_t>(b.size()) < n) {
    b = ScratchFloats();  // free first: no copy of the old contents
    b.resize(n);
  }
  return b.data();
}

}  // namespace xw
