// Helpers of the api tests: temp directories and tiny stored pairs trained
// with the real trainer.
#ifndef XWIRES_TESTS_API_ANALYSIS_TEST_UTIL_H_
#define XWIRES_TESTS_API_ANALYSIS_TEST_UTIL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "xwires/dataset/store/dataset.h"
#include "xwires/trainers/profile.h"
#include "xwires/trainers/trainer.h"

namespace xw::testing {

// A fresh empty directory under the system temp dir, removed by the dtor.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

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

// Runs a shell command, returning its exit code and stdout.
int Run(const std::string& command, std::string* out = nullptr);
std::string Cli();  // path of the built xwires binary
std::string ReadFile(const std::string& path);

}  // namespace xw::testing

#endif  // XWIRES_TESTS_API_ANALYSIS_TEST_UTIL_H_
