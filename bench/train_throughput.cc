// Training throughput of the real training loop (TrainProfile: gather ->
// forward -> loss -> backward -> Adam step), in images per second.
//
//   train_throughput --arch resnet20 --profile torch --threads 2 --batch 128
//                    [--width 1] [--steps 20] [--warmup 3] [--side 32]
//
// prints one line "arch=... profile=... threads=... batch=... images_per_s=...
// cpu_ms_per_image=...". Timing starts after `warmup` steps (buffers
// allocated, caches warm) and stops after the last step, before the test
// pass. cpu_ms_per_image is the process's CPU time (all threads) over the
// same steps per image: on a machine shared with other work it moves far
// less than the wall-clock rate (with one thread it is the work itself). The peer measurement for
// PyTorch is bench/peer_torch_throughput.py with the same arguments.
#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "xwires/core/data.h"
#include "xwires/core/rng.h"
#include "xwires/core/simd_target.h"
#include "xwires/trainers/profile.h"
#include "xwires/trainers/trainer.h"

namespace {

struct Args {
  std::string arch = "resnet20", profile = "torch";
  int threads = 2;
  int64_t batch = 128, steps = 20, warmup = 3, side = 32;
  double width = 1.0;
};

[[noreturn]] void Usage(const char* msg) {
  std::fprintf(stderr,
               "train_throughput: %s\nusage: train_throughput --arch A --profile P --threads T "
               "--batch B [--width W] [--steps S] [--warmup K] [--side H]\n",
               msg);
  std::exit(2);
}

Args Parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    if (i + 1 >= argc) Usage(("missing value for " + k).c_str());
    const char* v = argv[++i];
    if (k == "--arch") a.arch = v;
    else if (k == "--profile") a.profile = v;
    else if (k == "--threads") a.threads = std::atoi(v);
    else if (k == "--batch") a.batch = std::atoll(v);
    else if (k == "--steps") a.steps = std::atoll(v);
    else if (k == "--warmup") a.warmup = std::atoll(v);
    else if (k == "--side") a.side = std::atoll(v);
    else if (k == "--width") a.width = std::atof(v);
    else Usage(("unknown option " + k).c_str());
  }
  if (a.batch < 1 || a.steps < 1 || a.warmup < 0 || a.threads < 0) Usage("bad value");
  return a;
}

}  // namespace

int main(int argc, char** argv) {
  const Args a = Parse(argc, argv);
  if (xw::Status s = xw::SetKernelTargetFromEnv(); !s.ok()) Usage(s.message().c_str());
  auto profile = xw::LoadProfile(a.profile);
  if (!profile.ok()) Usage(profile.status().message().c_str());

  // Uniform random images: throughput does not depend on the pixels.
  const int64_t n = a.batch * (a.steps + a.warmup);
  xw::DataSplits data;
  data.name = "random";
  data.train.images = xw::Tensor({n, 3, a.side, a.side});
  xw::Philox(1, xw::StreamId("bench/images")).FillUniform(data.train.images.data(), data.train.images.size(), 0.0f, 1.0f);
  for (int64_t i = 0; i < n; ++i) data.train.labels.push_back(static_cast<int32_t>(i % 10));
  data.train.num_classes = 10;
  data.test.images = xw::Tensor({1, 3, a.side, a.side});
  data.test.labels = {0};
  data.test.num_classes = 10;

  xw::TrainOptions o;
  o.arch = a.arch;
  o.arch_options.width = a.width;
  o.batch_size = a.batch;
  o.threads = a.threads;
  using Clock = std::chrono::steady_clock;
  Clock::time_point start, stop;
  double cpu_start = 0, cpu_stop = 0;
  const auto cpu_now = [] {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
  };
  o.on_progress = [&](const xw::TrainProgress& p) {
    if (p.epoch_end) return;
    if (p.batch == a.warmup) {
      start = Clock::now();
      cpu_start = cpu_now();
    }
    if (p.batch == p.batches) {
      stop = Clock::now();
      cpu_stop = cpu_now();
    }
  };
  if (a.warmup == 0) {
    start = Clock::now();
    cpu_start = cpu_now();
  }
  auto r = xw::TrainProfile(*profile, data, o);
  if (!r.ok()) Usage(r.status().ToString().c_str());
  const double seconds = std::chrono::duration<double>(stop - start).count();
  const double images = static_cast<double>(a.batch * a.steps);
  std::printf(
      "arch=%s profile=%s threads=%d batch=%lld width=%g target=%s images_per_s=%.1f "
      "cpu_ms_per_image=%.3f\n",
      a.arch.c_str(), a.profile.c_str(), a.threads, static_cast<long long>(a.batch), a.width,
      xw::KernelTargetVariant().c_str(), images / seconds, 1000.0 * (cpu_stop - cpu_start) / images);
  return 0;
}
