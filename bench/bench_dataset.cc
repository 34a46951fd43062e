// Dataset benchmarks on 1,000,000 synthetic trials (two models each):
//   BM_BulkInsert      AddTrials in batches of 100,000 into a fresh dataset
//                      (trials/s; goal >= 50,000)
//   BM_QueryTop10      two hyperparameter ranges + a divergence threshold,
//                      sorted by -diff, limit 10, rows with models (the CLI's
//                      `query --where ... --sort -diff --limit 10`); p50 goal
//                      <= 5 ms
//   BM_QueryCount      the same filter, count only
//   BM_QueryAllRows    the same filter, every matching row with its models
//   BM_Near            10 nearest trials in normalised space to a random
//                      target over lr, adam_eps, batch_size, epochs, served
//                      by the index (trials_near); p50 goal <= 10 ms
//   BM_NearScan        the same queries by a full scan (the plan before the
//                      index; the answers are equal)
// Every query iteration draws new random ranges of fixed widths (one decade
// of lr, 200 of batch_size, diff > 0.3: ~1% of the trials match), and
// reports p50/p90 latency counters in milliseconds.
//
// The dataset goes to $XWIRES_BENCH_DATASET (default
// /tmp/xwires-bench-dataset) and is kept for bench/dataset_pandas_compare.py.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <random>

#include "xwires/dataset/query/query.h"
#include "xwires/dataset/store/dataset.h"

namespace {

constexpr int64_t kTrials = 1000000;
constexpr int64_t kBatch =
    100000;  // trials per AddTrials call (one transaction)

std::string BenchDir() {
  const char* d = std::getenv("XWIRES_BENCH_DATASET");
  return d && *d ? d : "/tmp/xwires-bench-dataset";
}

// Trials drawn like a CrossedWires-style search: log-uniform lr and eps,
// uniform batch size and epochs, a long-tailed divergence.
std::vector<xw::TrialRecord> MakeBatch(std::mt19937_64& rng, int64_t n) {
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<xw::TrialRecord> out(n);
  for (auto& t : out) {
    t.arch = u(rng) < 0.5 ? "vgg16" : "resnet50";
    t.data_spec = "synthetic";
    t.lr = std::pow(10.0, -5 + 4 * u(rng));
    t.adam_eps = std::pow(10.0, -8 + 8 * u(rng));
    t.batch_size = 10 + static_cast<int64_t>(990 * u(rng));
    t.epochs = 1 + static_cast<int64_t>(49 * u(rng));
    t.seed = static_cast<int64_t>(rng() >> 33);
    t.provenance = "bench_dataset";
    double a = 0.1 + 0.7 * u(rng),
           b = std::clamp(a + 0.7 * (u(rng) - 0.5) * u(rng), 0.0, 1.0);
    t.divergence = std::fabs(a - b);
    for (int k = 0; k < 2; ++k) {
      xw::ModelRecord m;
      m.profile = k ? "tf" : "torch";
      m.test_acc = k ? b : a;
      m.train_acc = std::min(1.0, m.test_acc + 0.05);  // an accuracy
      t.models.push_back(std::move(m));
    }
  }
  return out;
}

// Builds the dataset; returns trials per second of the AddTrials calls.
double Build(const std::string& dir) {
  std::filesystem::remove_all(dir);
  auto ds = xw::Dataset::Open(dir, xw::OpenMode::kCreate).value();
  std::mt19937_64 rng(42);
  double seconds = 0;
  for (int64_t done = 0; done < kTrials; done += kBatch) {
    auto batch = MakeBatch(rng, kBatch);  // generation is not timed
    auto t0 = std::chrono::steady_clock::now();
    auto ids = ds->AddTrials(batch);
    seconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
            .count();
    if (!ids.ok()) {
      std::fprintf(stderr, "insert failed: %s\n",
                   ids.status().ToString().c_str());
      std::exit(1);
    }
  }
  return kTrials / seconds;
}

std::unique_ptr<xw::Dataset> OpenBench() {
  const std::string dir = BenchDir();
  auto ds = xw::Dataset::Open(dir);
  if (!ds.ok() || (*ds)->Count({}).value() != kTrials) {
    Build(dir);
    ds = xw::Dataset::Open(dir);
  }
  return std::move(ds).value();
}

void BM_BulkInsert(benchmark::State& state) {
  for (auto _ : state) {
    double rate = Build(BenchDir());
    state.SetIterationTime(kTrials / rate);
    state.counters["trials_per_s"] = rate;
  }
  state.SetItemsProcessed(kTrials * state.iterations());
}
BENCHMARK(BM_BulkInsert)
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kSecond);

xw::TrialQuery RandomRangeQuery(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0, 1);
  double lr_lo = std::pow(10.0, -5 + 3 * u(rng));
  double bs_lo = 10 + 790 * u(rng);
  return xw::QueryBuilder()
      .Range("lr", lr_lo, 10 * lr_lo)
      .Range("batch_size", bs_lo, bs_lo + 200)
      .Where("diff > 0.3")
      .Build();
}

// Per iteration: draws a query with `make(rng)` (not timed), times
// `run(ds, query)` (which returns the rows it found); reports p50/p90 in ms.
template <typename Make, typename Run>
void Timed(benchmark::State& state, Make&& make, Run&& run) {
  auto ds = OpenBench();
  std::mt19937_64 rng(7);
  std::vector<double> ms;
  int64_t rows = 0;
  for (auto _ : state) {
    auto query = make(rng);
    auto t0 = std::chrono::steady_clock::now();
    rows += run(*ds, query);
    double dt =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
            .count();
    state.SetIterationTime(dt);
    ms.push_back(1e3 * dt);
  }
  std::sort(ms.begin(), ms.end());
  state.counters["p50_ms"] = ms[ms.size() / 2];
  state.counters["p90_ms"] = ms[ms.size() * 9 / 10];
  state.counters["rows_per_query"] = static_cast<double>(rows) / ms.size();
}

template <typename Fn>
void TimedQueries(benchmark::State& state, Fn&& fn) {
  Timed(state, RandomRangeQuery, fn);
}

void BM_QueryTop10(benchmark::State& state) {
  TimedQueries(state, [](xw::Dataset& ds, xw::TrialQuery q) {
    q.order_by = {"-diff"};
    q.limit = 10;
    return static_cast<int64_t>(ds.Query(q).value().size());
  });
}
BENCHMARK(BM_QueryTop10)
    ->Iterations(200)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

void BM_QueryCount(benchmark::State& state) {
  TimedQueries(state, [](xw::Dataset& ds, const xw::TrialQuery& q) {
    return ds.Count(q).value();
  });
}
BENCHMARK(BM_QueryCount)
    ->Iterations(200)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

void BM_QueryAllRows(benchmark::State& state) {
  TimedQueries(state, [](xw::Dataset& ds, const xw::TrialQuery& q) {
    return static_cast<int64_t>(ds.Query(q).value().size());
  });
}
BENCHMARK(BM_QueryAllRows)
    ->Iterations(50)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

// A target drawn from the bench's own hyperparameter distribution.
xw::NearTarget RandomNearTarget(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0, 1);
  xw::NearTarget target;
  target.values = {{"lr", std::pow(10.0, -5 + 4 * u(rng))},
                   {"adam_eps", std::pow(10.0, -8 + 8 * u(rng))},
                   {"batch_size", std::round(10 + 990 * u(rng))},
                   {"epochs", std::round(1 + 49 * u(rng))}};
  return target;
}

void NearQueries(benchmark::State& state, xw::NearMethod method) {
  Timed(state, RandomNearTarget,
        [method](xw::Dataset& ds, xw::NearTarget target) {
          target.method = method;
          xw::TrialQuery q;
          q.limit = 10;
          return static_cast<int64_t>(ds.Near(target, q).value().size());
        });
}

void BM_Near(benchmark::State& state) {
  NearQueries(state, xw::NearMethod::kIndex);
}
BENCHMARK(BM_Near)
    ->Iterations(200)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

void BM_NearScan(benchmark::State& state) {
  NearQueries(state, xw::NearMethod::kScan);
}
BENCHMARK(BM_NearScan)
    ->Iterations(15)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
