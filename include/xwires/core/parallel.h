// Deterministic parallelism on oneTBB.
//
// ParallelFor splits [0, n) into chunks whose boundaries depend only on n and
// the grain, never on the number of threads, so a body that writes only to
// its own chunk's outputs produces the same bits on 1 or 64 threads. Any
// reduction across chunks must combine per-chunk partials in chunk order
// (see ParallelSum) rather than in completion order.
//
// Thread count: process-wide by default (SetNumThreads); ThreadScope overrides
// it for the calling thread only, so concurrent trainings in one process can
// each use their own share of cores.
#ifndef XWIRES_CORE_PARALLEL_H_
#define XWIRES_CORE_PARALLEL_H_

#include <cstdint>
#include <functional>
#include <memory>

namespace xw {

// 0 means "all hardware threads". Thread-safe.
void SetNumThreads(int threads);
// The thread count ParallelFor uses from the calling thread.
int NumThreads();
int HardwareThreads();

// For the lifetime of the object, ParallelFor calls made from this thread
// (and from work they spawn) use `threads` workers. Not copyable.
class ThreadScope {
 public:
  explicit ThreadScope(int threads);
  ~ThreadScope();
  ThreadScope(const ThreadScope&) = delete;
  ThreadScope& operator=(const ThreadScope&) = delete;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Calls body(begin, end) once per chunk [i*grain, min(n, (i+1)*grain)).
// Chunks may run concurrently and in any order. grain < 1 is treated as 1.
// Nested calls are allowed.
void ParallelFor(int64_t n, int64_t grain,
                 const std::function<void(int64_t, int64_t)>& body);

// A grain that gives roughly `target_chunks` chunks for n items (at least
// min_grain items each); a pure function of its arguments.
int64_t GrainFor(int64_t n, int64_t min_grain = 1, int64_t target_chunks = 64);

// Sum of f(i) for i in [0, n): each chunk sums sequentially in double, and
// chunk partials are added in chunk order. Deterministic for any thread count.
double ParallelSum(int64_t n, int64_t grain,
                   const std::function<double(int64_t, int64_t)>& chunk_sum);

}  // namespace xw

#endif  // XWIRES_CORE_PARALLEL_H_
