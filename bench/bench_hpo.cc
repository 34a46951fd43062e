// Suggest time of the GP optimizer at n observations in d dimensions.
//
// Data (identical in bench/gp_sklearn_peer.py): x_i = unscrambled Sobol point
// i + 1 in [0,1]^d, y_i = Hartmann6 of x_i (d = 6) or of (x_i, 0.5, 0.5)
// (d = 4).
//   suggest_cold: a fresh optimizer told the n points asks once: a
//     hyperparameter fit from the default start plus 2 random restarts
//     (scikit-learn's n_restarts_optimizer = 2, as skopt), the Cholesky
//     factorisation, 10,000 candidates and L-BFGS polishing (gp_hedge: all
//     three arms).
//   suggest_incremental: one more observation without a refit (the factor
//     grows by a row), then the same suggestion work.
//   refit_warm: the hyperparameter fit at n warm-started from the fit at
//     n - 4 (what the default schedule does at most refit points).
//   fit_cold / predict_10k: the two main parts of suggest_cold.
// Under the default schedule (refit every 4 tells above n = 40, random
// restarts every 40) the amortised suggest time is
//   incremental + (9 * refit_warm + (cold - incremental)) / 40;
// bench/gp_sklearn_peer.py computes it from these figures.
//
// Besides wall time every benchmark reports cpu_ms: process CPU time (all
// threads) per iteration of the timed part. On a shared machine it is the
// stable measure of work; with --threads=1 it is the single-core time.
//
//   build/bench/bench_hpo [--threads=N] [--benchmark_filter=...]
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "xwires/core/parallel.h"
#include "xwires/hpo/gp.h"
#include "tests/hpo/test_functions.h"  // Hartmann6, shared with the tests
#include "xwires/hpo/optimizer.h"
#include "xwires/hpo/sobol.h"

namespace xw::hpo {
namespace {

double ProcessCpuMs() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

// Accumulates process CPU time over the timed parts of a benchmark.
class CpuMeter {
 public:
  void Start() { t0_ = ProcessCpuMs(); }
  void Stop() { total_ += ProcessCpuMs() - t0_; }
  void Report(benchmark::State& state) const {
    state.counters["cpu_ms"] = total_ / static_cast<double>(state.iterations());
  }

 private:
  double t0_ = 0, total_ = 0;
};

struct Data {
  std::vector<double> x, y;
};

Data MakeData(int n, int d) {
  const Sobol sobol = Sobol::Create(d).value();
  Data data;
  data.x.resize(static_cast<size_t>(n) * d);
  sobol.Generate(1, n, data.x.data());
  for (int i = 0; i < n; ++i) {
    std::vector<double> p(6, 0.5);
    for (int j = 0; j < d; ++j) p[j] = data.x[i * d + j];
    data.y.push_back(testing::Hartmann6(p));
  }
  return data;
}

SearchSpace Cube(int d) {
  std::vector<Dimension> dims;
  for (int j = 0; j < d; ++j) {
    dims.push_back({"x" + std::to_string(j), DimType::kReal, 0, 1, false});
  }
  return SearchSpace::Create(dims).value();
}

GpOptimizer Told(const Data& data, int n, int d, const OptimizerOptions& o) {
  GpOptimizer opt = GpOptimizer::Create(Cube(d), o).value();
  for (int i = 0; i < n; ++i) {
    (void)opt.Tell(std::span(&data.x[static_cast<size_t>(i) * d], d),
                   data.y[i]);
  }
  return opt;
}

void BM_SuggestCold(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0)),
            d = static_cast<int>(state.range(1));
  const Data data = MakeData(n, d);
  OptimizerOptions o;
  o.refit_dense_until = 0;
  o.refit_every = n;    // n is the only refit point <= n: one cold fit
  o.restart_every = n;  // ... with the random restarts
  CpuMeter cpu;
  for (auto _ : state) {
    state.PauseTiming();
    GpOptimizer opt = Told(data, n, d, o);
    state.ResumeTiming();
    cpu.Start();
    auto x = opt.Ask(1);
    cpu.Stop();
    benchmark::DoNotOptimize(x);
  }
  cpu.Report(state);
}

void BM_SuggestIncremental(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0)),
            d = static_cast<int>(state.range(1));
  const Data data = MakeData(n, d);
  OptimizerOptions o;
  o.refit_dense_until = 0;
  o.refit_every = n - 1;  // refit at n - 1, not at n
  CpuMeter cpu;
  for (auto _ : state) {
    state.PauseTiming();
    GpOptimizer opt = Told(data, n - 1, d, o);
    (void)opt.Ask(1);
    state.ResumeTiming();
    cpu.Start();
    (void)opt.Tell(std::span(&data.x[static_cast<size_t>(n - 1) * d], d),
                   data.y[n - 1]);
    auto x = opt.Ask(1);
    cpu.Stop();
    benchmark::DoNotOptimize(x);
  }
  cpu.Report(state);
}

void BM_RefitWarm(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0)),
            d = static_cast<int>(state.range(1));
  const Data data = MakeData(n, d);
  GpHyperparameters start;
  start.length_scales.assign(d, 1.0);
  const GpHyperparameters prev =
      FitGpHyperparameters(
          std::span(data.x.data(), static_cast<size_t>(n - 4) * d),
          std::span(data.y.data(), n - 4), d, GpFitOptions{}, start, 0, 1)
          .value();
  GpFitOptions warm;
  warm.n_restarts = 0;
  CpuMeter cpu;
  for (auto _ : state) {
    cpu.Start();
    auto hp = FitGpHyperparameters(data.x, data.y, d, warm, prev, 0, 1);
    benchmark::DoNotOptimize(hp);
    cpu.Stop();
  }
  cpu.Report(state);
}

void BM_FitCold(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0)),
            d = static_cast<int>(state.range(1));
  const Data data = MakeData(n, d);
  GpHyperparameters start;
  start.length_scales.assign(d, 1.0);
  CpuMeter cpu;
  for (auto _ : state) {
    cpu.Start();
    auto hp =
        FitGpHyperparameters(data.x, data.y, d, GpFitOptions{}, start, 0, 1);
    benchmark::DoNotOptimize(hp);
    cpu.Stop();
  }
  cpu.Report(state);
}

void BM_Predict10k(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0)),
            d = static_cast<int>(state.range(1));
  const Data data = MakeData(n, d);
  GpHyperparameters hp;
  hp.length_scales.assign(d, 0.3);
  hp.noise = 1e-4;
  GaussianProcess gp(d, hp);
  (void)gp.Fit(data.x, data.y);
  const Data cand = MakeData(10000, d);
  std::vector<double> mean(10000), var(10000);
  CpuMeter cpu;
  for (auto _ : state) {
    cpu.Start();
    gp.PredictBatch(cand.x.data(), 10000, mean.data(), var.data());
    benchmark::DoNotOptimize(mean.data());
    cpu.Stop();
  }
  cpu.Report(state);
}

void Sizes(benchmark::internal::Benchmark* b) {
  for (int d : {4, 6}) {
    for (int n : {50, 200, 400}) b->Args({n, d});
  }
  b->ArgNames({"n", "d"})->Unit(benchmark::kMillisecond)->UseRealTime();
  // The machine may be shared: the fastest repetition is the best estimate
  // of the undisturbed time (run with --benchmark_repetitions=N).
  b->ComputeStatistics("min", [](const std::vector<double>& v) {
    return *std::min_element(v.begin(), v.end());
  });
}

BENCHMARK(BM_SuggestCold)->Apply(Sizes);
BENCHMARK(BM_SuggestIncremental)->Apply(Sizes);
BENCHMARK(BM_RefitWarm)->Apply(Sizes);
BENCHMARK(BM_FitCold)->Apply(Sizes);
BENCHMARK(BM_Predict10k)->Apply(Sizes);

}  // namespace
}  // namespace xw::hpo

// --threads=N (before the benchmark flags) sets xw::SetNumThreads; default:
// all hardware threads.
int main(int argc, char** argv) {
  if (argc > 1 && std::strncmp(argv[1], "--threads=", 10) == 0) {
    xw::SetNumThreads(std::atoi(argv[1] + 10));
    argv[1] = argv[0];
    ++argv;
    --argc;
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
