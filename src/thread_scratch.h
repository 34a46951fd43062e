// Internal: per-thread scratch buffers for the kernels' and layers' hot loops.
#ifndef XWIRES_SRC_THREAD_SCRATCH_H_
#define XWIRES_SRC_THREAD_SCRATCH_H_

#include <cstdint>

namespace xw {

// Per-thread scratch of at least n floats (64-byte aligned), contents
// unspecified. Each slot is a separate buffer that grows and is never freed,
// so hot loops neither allocate nor zero-fill (freeing big blocks lets glibc
// trim the heap, and touching them again costs page faults). The pointer
// stays valid until the next call with the same slot on this thread, so a
// ParallelFor body may hold it only if it calls no ParallelFor itself (TBB
// runs other tasks on a thread only while it waits in one), and the slots a
// body holds at once must differ.
inline constexpr int kScratchSlots = 3;
float* ThreadScratch(int slot, int64_t n);

}  // namespace xw

#endif  // XWIRES_SRC_THREAD_SCRATCH_H_
