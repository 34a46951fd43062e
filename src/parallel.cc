#include "xwires/core/parallel.h"

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/info.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/partitioner.h>
#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <vector>

namespace xw {

namespace {

std::mutex g_mu;
int g_threads = 0;  // 0 = hardware

thread_local int t_scope_threads = 0;  // ThreadScope override, 0 = none
thread_local int t_depth = 0;          // >0 inside a ParallelFor body

// Arenas are cached per concurrency level and never destroyed, so a pointer
// handed out stays valid for the life of the process.
tbb::task_arena* ArenaFor(int threads) {
  static std::map<int, std::unique_ptr<tbb::task_arena>> arenas;
  std::lock_guard<std::mutex> lock(g_mu);
  auto& a = arenas[threads];
  if (!a) a = std::make_unique<tbb::task_arena>(threads);
  return a.get();
}

}  // namespace

int HardwareThreads() { return std::max(1, tbb::info::default_concurrency()); }

void SetNumThreads(int threads) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_threads = std::max(0, threads);
}

int NumThreads() {
  if (t_scope_threads > 0) return t_scope_threads;
  std::lock_guard<std::mutex> lock(g_mu);
  return g_threads > 0 ? g_threads : HardwareThreads();
}

struct ThreadScope::Impl {
  int previous;
};

ThreadScope::ThreadScope(int threads) : impl_(new Impl{t_scope_threads}) {
  t_scope_threads = threads > 0 ? threads : HardwareThreads();
}

ThreadScope::~ThreadScope() { t_scope_threads = impl_->previous; }

int64_t GrainFor(int64_t n, int64_t min_grain, int64_t target_chunks) {
  min_grain = std::max<int64_t>(1, min_grain);
  target_chunks = std::max<int64_t>(1, target_chunks);
  return std::max(min_grain, (n + target_chunks - 1) / target_chunks);
}

void ParallelFor(int64_t n, int64_t grain,
                 const std::function<void(int64_t, int64_t)>& body) {
  if (n <= 0) return;
  grain = std::max<int64_t>(1, grain);
  const int64_t chunks = (n + grain - 1) / grain;
  auto run_chunk = [&](int64_t c) {
    ++t_depth;
    body(c * grain, std::min(n, (c + 1) * grain));
    --t_depth;
  };
  const int threads = NumThreads();
  if (chunks == 1 || threads == 1) {
    for (int64_t c = 0; c < chunks; ++c) run_chunk(c);
    return;
  }
  auto loop = [&] {
    tbb::parallel_for(
        tbb::blocked_range<int64_t>(0, chunks, 1),
        [&](const tbb::blocked_range<int64_t>& r) {
          for (int64_t c = r.begin(); c != r.end(); ++c) run_chunk(c);
        },
        tbb::simple_partitioner());
  };
  if (t_depth > 0) {
    loop();  // nested: already inside the right arena
  } else {
    ArenaFor(threads)->execute(loop);
  }
}

double ParallelSum(int64_t n, int64_t grain,
                   const std::function<double(int64_t, int64_t)>& chunk_sum) {
  if (n <= 0) return 0.0;
  grain = std::max<int64_t>(1, grain);
  const int64_t chunks = (n + grain - 1) / grain;
  std::vector<double> partial(chunks, 0.0);
  ParallelFor(n, grain, [&](int64_t b, int64_t e) { partial[b / grain] = chunk_sum(b, e); });
  double total = 0.0;
  for (double p : partial) total += p;
  return total;
}

}  // namespace xw
