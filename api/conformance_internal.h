// Internals of RunConformance (api/conformance.cc): the reference
// frameworks' runners as subprocesses, and the digits data they share.
#ifndef XWIRES_API_CONFORMANCE_INTERNAL_H_
#define XWIRES_API_CONFORMANCE_INTERNAL_H_

#include <string>
#include <vector>

#include "conformance_shadow.h"
#include "xwires/api/conformance.h"
#include "xwires/core/data.h"
#include "xwires/core/status.h"
#include "xwires/dataset/store/tensor_file.h"
#include "xwires/trainers/trainer.h"

namespace xw::conformance {

// One reference framework: its name, runner, the architectures it builds.
struct Framework {
  std::string name;                // "tfjs", "pytorch"
  std::vector<std::string> archs;  // in the order they run
};
const std::vector<Framework>& Frameworks();

// The width each architecture runs at (small, so a step takes milliseconds).
double ArchWidth(const std::string& arch);

// Runs argv[0] (searched on PATH) with stdout and stderr appended to
// `log_path`; returns its exit status (128 + signal when killed). An error
// only when it cannot be started.
Result<int> RunProcess(const std::vector<std::string>& argv, const std::string& log_path);

// The last `max_bytes` of a log file, for error messages.
std::string LogTail(const std::string& path, size_t max_bytes = 1500);

// Empty when the framework's runner can start here; otherwise why not and
// how to install it (scripts/setup.sh, npm ci --prefix tests/conformance).
std::string MissingFramework(const std::string& framework, const ConformanceOptions& o,
                             const std::string& work_dir);

// The digits (scripts/make_digits.py) as `size` x `size` IDX files under
// work_dir, loaded. Errors carry make_digits.py's output.
Result<DataSplits> DigitsData(const ConformanceOptions& o, const std::string& work_dir,
                              int size);

// The runner's command line for a framework, reading IN_DIR and writing
// OUT_DIR (tests/conformance/README.md).
std::vector<std::string> RunnerCommand(const std::string& framework,
                                       const ConformanceOptions& o, const std::string& in_dir,
                                       const std::string& out_dir);

// `init` with every nonzero float element moved one ulp up or down, the
// direction drawn from Philox(run, StreamId("conformance/ulp")); exact zeros
// and int64 buffers unchanged.
NamedTensors PerturbOneUlp(const NamedTensors& init, uint64_t run);

// The growth of a one-ulp difference (kConformancePerturbedRuns): trains
// `runs` copies of `options` (its init_weights perturbed by PerturbOneUlp,
// run = 1..runs; its on_step replaced) and returns, per step, the largest
// StateError of a copy against `base[step - 1]`, the unperturbed run's state
// after that step. Each copy's ReLUs are shadowed by `relu`, the same
// framework decisions as the unperturbed run's (ReluShadow), so the growth
// is that of fixed decisions. Errors: a failed training.
Result<std::vector<double>> UlpPerturbationGrowth(const Profile& profile,
                                                  const TrainOptions& options,
                                                  const DataSplits& data,
                                                  const std::vector<NamedTensors>& base,
                                                  int runs, const ReluCalls& relu);

}  // namespace xw::conformance

#endif  // XWIRES_API_CONFORMANCE_INTERNAL_H_
