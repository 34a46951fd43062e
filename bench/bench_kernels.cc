// Kernel throughput: GEMM (Eigen vs our ordered kernel), Linear layers'
// three passes as training runs them (mlp's fc1, VGG-11's classifier; the
// dense/ rows), and convolution forward, data gradient and filter gradient
// for every algorithm on each distinct ResNet-20 convolution (CIFAR, batch
// 32), VGG-sized layers, and VGG-11's convolutions at batch 128.
//
// Counters: GFLOPs = 2 * multiply-adds per process CPU-second; eigen_GFLOPs
// = the machine's Eigen sgemm rate for the GEMM of the same shape, measured
// in this run (forward: M = out channels, N = batch * output pixels, K = in
// channels * KH * KW; data gradient: M = in channels, N = batch * input
// pixels, K = out channels * KH * KW; filter gradient: M = out channels,
// N = in channels * KH * KW, K = batch * output pixels); eigen_frac = their
// ratio. The header's kernel_target is the SIMD target the Highway kernels
// dispatched to (XWIRES_SIMD_TARGET restricts it, e.g. AVX2).
//
// fma/lanes is the kernels' fused multiply-add alone, products/s (an
// emulation on SSE4, SSSE3 and the scalar target: docs/profiles.md);
// fma/scalar the library's scalar FmaF, element by element, and
// fma/libm_fmaf std::fma, libm's fmaf in a portable build (glibc's software
// one without FMA, or under GLIBC_TUNABLES=glibc.cpu.hwcaps=-FMA,-AVX2,-FMA4,
// where FmaF emulates).
// The peak/ rows are the ceiling of the kernels' register tiles on that
// target (peak_tile.h), one thread: fused = one FMA per term (the torch
// profile's chains, and the tf profile's implicit tiles), unfused = a
// product then a dependent add (the reference profile's), and on 16-lane
// targets the same with 8-lane vectors; the _8x2 rows hold 8 x 2 vectors
// instead of 6 x 4 (where the target has 32 registers; else the same 6 x 2
// tile). A kernel's GFLOPs over the best row of its arithmetic is how much
// of the core it uses: on Zen 4 unfused_8lanes_8x2 comes near fused while
// the kernels' unfused 6 x 4 tile stops near 92 GFLOP/s.
//
//   build-*/bench/bench_kernels [--threads=1] --benchmark_filter=conv/resnet
//       [--benchmark_min_time=1s]  (default 0.1 s per benchmark, 0.2 s peak/)
#include <benchmark/benchmark.h>

#include <time.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "bench/peak_tile.h"
#include "src/accel/accel_gemm.h"
#include "src/fma_scalar.h"
#include "src/kernels/fma_lanes.h"
#include "xwires/core/accel_numerics.h"
#include "xwires/core/batchnorm.h"
#include "xwires/core/conv.h"
#include "xwires/core/dense.h"
#include "xwires/core/matmul.h"
#include "xwires/core/parallel.h"
#include "xwires/core/rng.h"
#include "xwires/core/simd_target.h"
#include "xwires/core/tensor.h"

namespace xw {
namespace {

Tensor Random(const Shape& s, uint64_t seed) {
  Tensor t(s);
  Philox(seed, StreamId("bench")).FillUniform(t.data(), t.size(), -1.0f, 1.0f);
  return t;
}

KernelNumerics Eigen() {
  KernelNumerics n;
  n.gemm = GemmKind::kEigen;
  n.conv_algo = ConvAlgo::kIm2colGemm;
  return n;
}

// CPU seconds used by the whole process (all threads). The kernels are
// multi-threaded and the machine may be shared, so rates are per CPU-second:
// GFLOPs = work / process CPU time (for one thread, the usual GFLOP/s).
double ProcessCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

// Eigen sgemm GFLOP/s for C[m,n] = A[m,k] B[k,n], timed once per shape.
double EigenGflops(int64_t m, int64_t n, int64_t k) {
  static std::map<std::tuple<int64_t, int64_t, int64_t>, double> cache;
  auto key = std::make_tuple(m, n, k);
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  Tensor a = Random({m, k}, 1), b = Random({k, n}, 2), c({m, n});
  const KernelNumerics num = Eigen();
  Matmul(a.data(), b.data(), c.data(), m, n, k, false, false, false, num);  // warm up
  int reps = 0;
  const double start = ProcessCpuSeconds();
  double secs = 0;
  while (secs < 0.2 || reps < 3) {
    Matmul(a.data(), b.data(), c.data(), m, n, k, false, false, false, num);
    ++reps;
    secs = ProcessCpuSeconds() - start;
  }
  return cache[key] = 2.0 * m * n * k * reps / secs / 1e9;
}

// Runs body until the state stops and sets the counters: GFLOPs (per
// process CPU-second), eigen_GFLOPs for the equivalent GEMM, and their ratio.
template <typename Body>
void Measure(benchmark::State& state, double flops_per_iter, int64_t m, int64_t n, int64_t k,
             Body&& body) {
  const double start = ProcessCpuSeconds();
  for (auto _ : state) body();
  const double secs = ProcessCpuSeconds() - start;
  const double gflops = flops_per_iter * state.iterations() / secs / 1e9;
  const double eigen = EigenGflops(m, n, k);
  state.counters["GFLOPs"] = gflops;
  state.counters["eigen_GFLOPs"] = eigen;
  state.counters["eigen_frac"] = gflops / eigen;
}

// GFLOPs of the register tile alone (peak_tile.h), per process CPU-second.
void BM_Peak(benchmark::State& state, bool fma, bool half_width, bool narrow) {
  constexpr int64_t kReps = 20000;  // ~1-2 ms per call at 100 GFLOP/s
  double flops = 0;
  const double start = ProcessCpuSeconds();
  for (auto _ : state) flops += bench::TileFlops(fma, half_width, narrow, kReps);
  state.counters["GFLOPs"] = flops / (ProcessCpuSeconds() - start) / 1e9;
}

// The kernels' fused multiply-add alone (kernels::FmaLanes: the FMA
// instruction, or MulAddExact's emulation on SSE4, SSSE3 and the scalar
// target) over 4096 random triples in [-1, 1): products per second.
void BM_FmaLanes(benchmark::State& state) {
  constexpr int64_t kN = 4096;
  const Tensor a = Random({kN}, 1), b = Random({kN}, 2), c = Random({kN}, 3);
  Tensor out({kN});
  for (auto _ : state) {
    kernels::FmaLanes(a.data(), b.data(), c.data(), kN, out.data());
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(kN * static_cast<int64_t>(state.iterations()));
}

// The library's scalar fused multiply-add outside the kernels (FmaF,
// src/fma_scalar.h: the FMA instruction where glibc's fmaf is it, else the
// exact emulation) over the same triples, element by element, against
// std::fma (what those call sites used before: libm's fmaf in a portable
// build, glibc's software one on CPUs without FMA): products per second.
void BM_FmaScalar(benchmark::State& state, bool libm) {
  constexpr int64_t kN = 4096;
  const Tensor a = Random({kN}, 1), b = Random({kN}, 2), c = Random({kN}, 3);
  Tensor out({kN});
  for (auto _ : state) {
    const float *x = a.data(), *y = b.data(), *z = c.data();
    float* o = out.data();
    if (libm) {
      for (int64_t i = 0; i < kN; ++i) o[i] = std::fma(x[i], y[i], z[i]);
    } else {
      for (int64_t i = 0; i < kN; ++i) o[i] = FmaF(x[i], y[i], z[i]);
    }
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(kN * static_cast<int64_t>(state.iterations()));
}

// Batch norm in training, forward (statistics, then y) or backward (the
// gradients' sums, then dx), on x [n, c, hw, hw] under a reduction order.
// GB_per_s counts the passes' ideal traffic: forward reads x three times
// (mean, variance, y) and writes y; backward reads x and dy twice and
// writes dx.
void BM_BatchNorm(benchmark::State& state, ReduceSpec reduce, bool backward) {
  const int64_t n = state.range(0), c = state.range(1), hw = state.range(2);
  Tensor x = Random({n, c, hw, hw}, 11), dy = Random({n, c, hw, hw}, 12);
  Tensor gamma({c}, 1.0f), beta({c}), y, dx, dgamma, dbeta, mean({c}), var({c}, 1.0f);
  BatchNormCache cache;
  const BatchNormSpec spec;
  if (!BatchNormForwardTrain(x, gamma, beta, spec, reduce, &y, &mean, &var, &cache).ok()) {
    state.SkipWithError("BatchNormForwardTrain failed");
    return;
  }
  const double start = ProcessCpuSeconds();
  for (auto _ : state) {
    const Status st =
        backward ? BatchNormBackward(x, gamma, dy, cache, reduce, &dx, &dgamma, &dbeta)
                 : BatchNormForwardTrain(x, gamma, beta, spec, reduce, &y, &mean, &var, &cache);
    if (!st.ok()) state.SkipWithError(st.message().c_str());
    benchmark::ClobberMemory();
  }
  const double secs = ProcessCpuSeconds() - start;
  const double bytes = 4.0 * x.size() * (backward ? 5 : 4) * state.iterations();
  state.counters["GB_per_s"] = bytes / secs / 1e9;
}

struct GemmCase {
  std::string name;
  KernelNumerics num;
};

void BM_Gemm(benchmark::State& state, KernelNumerics num) {
  const int64_t m = state.range(0), n = state.range(1), k = state.range(2);
  Tensor a = Random({m, k}, 3), b = Random({k, n}, 4), c({m, n});
  Measure(state, 2.0 * m * n * k, m, n, k, [&] {
    Matmul(a.data(), b.data(), c.data(), m, n, k, false, false, false, num);
    benchmark::DoNotOptimize(c.data());
  });
}

// The emulated tensor-core GEMM alone (src/accel/accel_gemm.h), one thread,
// on operands already rounded to TF32 (block 4 = the A100 preset, 8 = H100)
// or bf16 (block 8 = A100, 16 = H100): the products and block FMAs that
// the accelerator profiles' convolutions and dense layers run.
void BM_AccelGemm(benchmark::State& state, OperandRounding r, TensorCoreSpec tc) {
  const int64_t m = state.range(0), n = state.range(1), k = state.range(2);
  Tensor a = Random({m, k}, 3), b = Random({k, n}, 4), c({m, n});
  RoundOperands(a.data(), a.data(), a.size(), r, false);
  RoundOperands(b.data(), b.data(), b.size(), r, false);
  AccelSpec spec;
  spec.accumulation = Accumulation::kTensorCore;
  Measure(state, 2.0 * m * n * k, m, n, k, [&] {
    accel::AccelGemm(a.data(), k, b.data(), n, c.data(), n, m, n, k, spec, tc, ReduceSpec{},
                     false);
    benchmark::DoNotOptimize(c.data());
  });
}

enum class DensePass { kForward, kData, kWeight };

// One pass of a Linear layer as training runs it (dense.h: y = x w^T,
// dx = dy w, dw = dy^T x), on x [rows, in] and w [out, in].
void BM_Dense(benchmark::State& state, KernelNumerics num, DensePass pass) {
  const int64_t rows = state.range(0), in = state.range(1), out = state.range(2);
  Tensor x = Random({rows, in}, 7), w = Random({out, in}, 8), dy = Random({rows, out}, 9);
  Tensor y, dx, dw;
  // The equivalent sgemm C[m,n] = A[m,k] B[k,n] of each pass, for eigen_GFLOPs.
  const int64_t m = pass == DensePass::kWeight ? out : rows;
  const int64_t n = pass == DensePass::kForward ? out : in;
  const int64_t k = pass == DensePass::kForward ? in : pass == DensePass::kData ? out : rows;
  Measure(state, 2.0 * rows * in * out, m, n, k, [&] {
    switch (pass) {
      case DensePass::kForward:
        DenseForward(x, w, nullptr, num, &y);
        break;
      case DensePass::kData:
        DenseBackward(x, w, dy, num, &dx, nullptr, nullptr);
        break;
      case DensePass::kWeight:
        DenseBackward(x, w, dy, num, nullptr, &dw, nullptr);
        break;
    }
    benchmark::ClobberMemory();
  });
}

struct Layer {
  const char* name;
  int64_t n, c, hw, o;
  int k, stride;
};

struct Algo {
  const char* name;
  KernelNumerics num;
};

enum class Pass { kForward, kData, kFilter };

void BM_Conv(benchmark::State& state, Layer l, KernelNumerics num, Pass pass) {
  Conv2dSpec spec;
  spec.kernel_h = spec.kernel_w = l.k;
  spec.stride = l.stride;
  spec.pad = l.k / 2;
  Tensor x = Random({l.n, l.c, l.hw, l.hw}, 5), w = Random({l.o, l.c, l.k, l.k}, 6);
  const ConvGeometry g = *MakeConvGeometry(x.shape(), w.shape(), spec);
  Tensor y, dx, dw;
  Conv2dForward(x, w, nullptr, spec, num, &y);
  const int64_t taps = g.c * g.kh * g.kw, outputs = g.n * g.oh * g.ow;
  int64_t m = g.o, n = outputs, k = taps;  // the equivalent sgemm
  if (pass == Pass::kData) m = g.c, n = g.n * g.h * g.w, k = g.o * g.kh * g.kw;
  if (pass == Pass::kFilter) m = g.o, n = taps, k = outputs;
  Measure(state, 2.0 * g.Macs(), m, n, k, [&] {
    if (pass == Pass::kForward) {
      Conv2dForward(x, w, nullptr, spec, num, &y);
    } else {
      Conv2dBackward(x, w, y, spec, num, pass == Pass::kData ? &dx : nullptr,
                     pass == Pass::kFilter ? &dw : nullptr, nullptr);
    }
    benchmark::ClobberMemory();
  });
}

// Whether the command line sets --benchmark_min_time: a benchmark's own
// MinTime overrides that flag in Google Benchmark, so the defaults below
// apply only when the user gave none (a longer time steadies the backward
// passes, whose first iterations touch fresh scratch).
bool g_user_min_time = false;

benchmark::internal::Benchmark* DefaultMinTime(benchmark::internal::Benchmark* b, double s) {
  return g_user_min_time ? b : b->MinTime(s);
}

void Register() {
  for (const bool half : {false, true}) {
    if (half && KernelFloatLanes() < 16) continue;
    for (const bool narrow : {false, true}) {
      for (const bool fma : {true, false}) {
        const std::string name = std::string("peak/") + (fma ? "fused" : "unfused") +
                                 (half ? "_8lanes" : "") + (narrow ? "_8x2" : "");
        DefaultMinTime(benchmark::RegisterBenchmark(name.c_str(), BM_Peak, fma, half, narrow),
                       0.2)
            ->MeasureProcessCPUTime()
            ->Unit(benchmark::kMillisecond);
      }
    }
  }
  DefaultMinTime(benchmark::RegisterBenchmark("fma/lanes", BM_FmaLanes), 0.1)
      ->MeasureProcessCPUTime();
  DefaultMinTime(benchmark::RegisterBenchmark("fma/scalar", BM_FmaScalar, false), 0.1)
      ->MeasureProcessCPUTime();
  DefaultMinTime(benchmark::RegisterBenchmark("fma/libm_fmaf", BM_FmaScalar, true), 0.1)
      ->MeasureProcessCPUTime();
  KernelNumerics lanes8;
  lanes8.gemm = GemmKind::kOwned;
  lanes8.conv_algo = ConvAlgo::kDirect;
  lanes8.reduce = *ParseReduceOrder("lanes8", /*fma=*/true);
  KernelNumerics sequential;  // the reference profile: direct, sequential, no FMA
  KernelNumerics winograd = Eigen();
  winograd.conv_algo = ConvAlgo::kWinograd;

  KernelNumerics pairwise, kahan;
  pairwise.reduce = *ParseReduceOrder("pairwise");
  kahan.reduce = *ParseReduceOrder("kahan");
  const GemmCase gemms[] = {{"eigen", Eigen()},
                            {"owned_lanes8_fma", lanes8},
                            {"owned_sequential", sequential},
                            {"owned_pairwise", pairwise},
                            {"owned_kahan", kahan}};
  for (const GemmCase& gc : gemms) {
    auto* b = benchmark::RegisterBenchmark(("gemm/" + gc.name).c_str(), BM_Gemm, gc.num);
    b->Args({64, 1024, 576})->Args({256, 256, 256})->Args({512, 512, 512})->Args({128, 10, 64});
    b->Args({128, 512, 3072})->Args({512, 3072, 128});  // mlp: fc1 forward, fc1 weight gradient
    DefaultMinTime(b, 0.1)->MeasureProcessCPUTime()->Unit(benchmark::kMillisecond);
  }

  const std::tuple<const char*, OperandRounding, TensorCoreSpec> tensor_cores[] = {
      {"tf32_a100", OperandRounding::kTf32Rna, {4, 1}},
      {"tf32_h100", OperandRounding::kTf32Rz, {8, 2}},
      {"bf16_a100", OperandRounding::kBf16Rne, {8, 1}},
      {"bf16_h100", OperandRounding::kBf16Rne, {16, 2}}};
  for (const auto& [tc_name, rounding, tc] : tensor_cores) {
    auto* b = benchmark::RegisterBenchmark((std::string("accel_gemm/") + tc_name).c_str(),
                                           BM_AccelGemm, rounding, tc);
    b->Args({64, 1024, 576})->Args({128, 512, 3072});
    DefaultMinTime(b, 0.1)->MeasureProcessCPUTime()->Unit(benchmark::kMillisecond);
  }

  // ResNet-20's batch norms at batch 128, args {n, c, hw}, under each
  // profile's reduction order.
  const std::pair<const char*, ReduceSpec> bn_orders[] = {
      {"sequential", ReduceSpec{}},
      {"pairwise", *ParseReduceOrder("pairwise")},
      {"lanes8_fma", *ParseReduceOrder("lanes8", /*fma=*/true)}};
  for (const auto& [order_name, order] : bn_orders) {
    for (const bool backward : {false, true}) {
      const std::string name =
          std::string("batchnorm/") + order_name + (backward ? "/backward" : "/forward");
      DefaultMinTime(benchmark::RegisterBenchmark(name.c_str(), BM_BatchNorm, order, backward)
                         ->Args({128, 16, 32})
                         ->Args({128, 32, 16})
                         ->Args({128, 64, 8}),
                     0.1)
          ->MeasureProcessCPUTime()
          ->Unit(benchmark::kMillisecond);
    }
  }

  // Linear layers as training runs them, args {rows, in, out}: mlp's fc1 and
  // VGG-11's classifier at batch 128.
  const std::pair<DensePass, const char*> dense_passes[] = {
      {DensePass::kForward, "forward"}, {DensePass::kData, "data_grad"},
      {DensePass::kWeight, "weight_grad"}};
  // The profiles' three GEMMs: Eigen (tf), lanes8 FMA (torch), sequential
  // (reference), and torch's with TF32 (rna) operands rounded while packed
  // (an operand-rounding profile's dense layers, against owned_lanes8_fma).
  KernelNumerics lanes8_tf32 = lanes8;
  lanes8_tf32.operands = OperandRounding::kTf32Rna;
  for (const GemmCase& gc :
       {gemms[0], gemms[1], gemms[2], GemmCase{"owned_lanes8_fma_tf32", lanes8_tf32}}) {
    for (const auto& [pass, pass_name] : dense_passes) {
      const std::string name = "dense/" + gc.name + "/" + pass_name;
      DefaultMinTime(benchmark::RegisterBenchmark(name.c_str(), BM_Dense, gc.num, pass)
                         ->Args({128, 3072, 512})
                         ->Args({32, 3072, 512})  // mlp's fc1 and fc2 at batch 32
                         ->Args({32, 512, 512})
                         ->Args({128, 512, 4096})
                         ->Args({128, 4096, 4096}),
                     0.1)
          ->MinWarmUpTime(0.05)
          ->MeasureProcessCPUTime()
          ->Unit(benchmark::kMillisecond);
    }
  }

  // Every distinct convolution of ResNet-20 on CIFAR (3x3 stem, the three
  // stages, their stride-2 entries and 1x1 stride-2 shortcuts), then VGG's.
  const Layer layers[] = {
      {"resnet_stem_3to16", 32, 3, 32, 16, 3, 1},  {"resnet_16c_32px", 32, 16, 32, 16, 3, 1},
      {"resnet_16to32_s2", 32, 16, 32, 32, 3, 2},  {"resnet_short_16to32", 32, 16, 32, 32, 1, 2},
      {"resnet_32c_16px", 32, 32, 16, 32, 3, 1},   {"resnet_32to64_s2", 32, 32, 16, 64, 3, 2},
      {"resnet_short_32to64", 32, 32, 16, 64, 1, 2}, {"resnet_64c_8px", 32, 64, 8, 64, 3, 1},
      {"vgg_64c_32px", 32, 64, 32, 64, 3, 1},      {"vgg_256c_8px", 32, 256, 8, 256, 3, 1},
      {"vgg_512c_4px", 32, 512, 4, 512, 3, 1},
      // ResNet-20's stage convolutions at compare_train_throughput.sh's batch
      // of 128: 8 MiB per activation, so the source streams from L3 or DRAM
      // as it does in training, where the batch-32 shapes above stay in L2/L3.
      {"resnet_b128_16c_32px", 128, 16, 32, 16, 3, 1},
      {"resnet_b128_32c_16px", 128, 32, 16, 32, 3, 1},
      {"resnet_b128_64c_8px", 128, 64, 8, 64, 3, 1},
      // VGG-11's eight convolutions at compare_train_throughput.sh's batch
      // of 128 (its two 512-channel 2x2 layers are one shape).
      {"vgg11_b128_3to64", 128, 3, 32, 64, 3, 1},
      {"vgg11_b128_64to128", 128, 64, 16, 128, 3, 1},
      {"vgg11_b128_128to256", 128, 128, 8, 256, 3, 1},
      {"vgg11_b128_256c_8px", 128, 256, 8, 256, 3, 1},
      {"vgg11_b128_256to512", 128, 256, 4, 512, 3, 1},
      {"vgg11_b128_512c_4px", 128, 512, 4, 512, 3, 1},
      {"vgg11_b128_512c_2px", 128, 512, 2, 512, 3, 1},
  };
  const Algo algos[] = {{"direct_lanes8_fma", lanes8},
                        {"direct_sequential", sequential},
                        {"im2col", Eigen()},
                        {"winograd", winograd}};
  const std::pair<Pass, const char*> passes[] = {
      {Pass::kForward, "forward"}, {Pass::kData, "data_grad"}, {Pass::kFilter, "filter_grad"}};
  for (const Layer& l : layers) {
    for (const Algo& a : algos) {
      for (const auto& [pass, pass_name] : passes) {
        // Winograd runs 3x3 stride 1 only; elsewhere, and for the filter
        // gradient, it is the im2col GEMM (conv.h): not measured twice.
        const bool winograd_runs = l.k == 3 && l.stride == 1 && pass != Pass::kFilter;
        if (a.num.conv_algo == ConvAlgo::kWinograd && !winograd_runs) continue;
        const std::string name = std::string("conv/") + l.name + "/" + a.name + "/" + pass_name;
        // The warm-up keeps first-call allocations (page faults) out of
        // layers that run only a few iterations.
        DefaultMinTime(benchmark::RegisterBenchmark(name.c_str(), BM_Conv, l, a.num, pass), 0.1)
            ->MinWarmUpTime(0.05)
            ->MeasureProcessCPUTime()
            ->Unit(benchmark::kMillisecond);
      }
    }
  }
}

}  // namespace
}  // namespace xw

// --threads=N (before the benchmark flags) sets xw::SetNumThreads; default:
// all hardware threads.
int main(int argc, char** argv) {
  if (argc > 1 && std::strncmp(argv[1], "--threads=", 10) == 0) {
    xw::SetNumThreads(std::atoi(argv[1] + 10));
    argv[1] = argv[0];
    ++argv;
    --argc;
  }
  if (xw::Status s = xw::SetKernelTargetFromEnv(); !s.ok()) {
    std::fprintf(stderr, "bench_kernels: %s\n", s.message().c_str());
    return 2;
  }
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--benchmark_min_time", 20) == 0) xw::g_user_min_time = true;
  }
  xw::Register();
  benchmark::AddCustomContext("kernel_target", xw::KernelTargetVariant() + " (" +
                                                   std::to_string(xw::KernelFloatLanes()) +
                                                   " float lanes)");
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
