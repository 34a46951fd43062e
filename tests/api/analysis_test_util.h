// Helpers of the api tests: tiny stored pairs trained with the real trainer
// (temp directories and commands: tests/testing).
#ifndef XWIRES_TESTS_API_ANALYSIS_TEST_UTIL_H_
#define XWIRES_TESTS_API_ANALYSIS_TEST_UTIL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "testing/cli_runner.h"
#include "testing/file_tree.h"
#include "testing/temp_dir.h"
#include "xwires/dataset/store/dataset.h"
#include "xwires/trainers/profile.h"
#include "xwires/trainers/trainer.h"

namespace xw::testing {

using TempDir = testutil::TempDir;
using testutil::ReadFile;

// A tiny training configuration on the synthetic data.
struct TinyRun {
  std::string arch = "simple_cnn";
  double width = 0.25;
  int64_t train = 300, test = 100, epochs = 1, batch = 32;
  double lr = 1e-3, eps = 1e-8;
  uint64_t seed = 0;
};

// Loads the synthetic data of `run` exactly as a stored trial is re-loaded.
DataSplits TinyData(const TinyRun& run);
TrainOptions TinyOptions(const TinyRun& run);

// Trains `profiles` under `run` (TrainTrial) and stores the trial in `ds`.
int64_t TrainAndStore(Dataset& ds, const std::vector<Profile>& profiles,
                      const TinyRun& run);

// A shipped profile, or one with `name` and JSON edits applied, e.g.
// Edited("torch", "torch_keras", {{"/adam/variant", "\"keras\""}}).
Profile Shipped(const std::string& name);
Profile Edited(const std::string& base, const std::string& name,
               const std::vector<std::pair<std::string, std::string>>& edits);

// Runs a shell command, returning its exit code and stdout (its stderr goes
// to the test's).
int Run(const std::string& command, std::string* out = nullptr);
inline std::string Cli() { return testutil::XwiresBinary(); }

}  // namespace xw::testing

#endif  // XWIRES_TESTS_API_ANALYSIS_TEST_UTIL_H_
