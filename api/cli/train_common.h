// Helpers shared by `xwires train` and `xwires predict`: output files,
// weights-file attributes, and the progress display.
#ifndef XWIRES_API_CLI_TRAIN_COMMON_H_
#define XWIRES_API_CLI_TRAIN_COMMON_H_

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "xwires/core/data.h"
#include "xwires/core/status.h"
#include "xwires/dataset/run_record.h"
#include "xwires/trainers/architectures.h"
#include "xwires/trainers/trainer.h"

namespace xw::cli {

// "a,b,,c" -> {"a", "b", "c"} (empty items dropped, spaces trimmed).
std::vector<std::string> SplitList(const std::string& list);
// A profile name as a file name: characters outside [A-Za-z0-9._-] become '_'.
std::string SafeFileName(const std::string& name);
// Creates `dir` (and parents) if needed and checks that files can be created
// in it. Writes nothing that stays behind.
Status PrepareOutputDir(const std::string& dir);
// Writes `text` to `path` through a temp file, fsync and rename.
Status WriteFileAtomic(const std::string& path, const std::string& text);

InputSpec InputOfData(const DataSplits& data);

// Root attributes of a weights file written by `train`: arch, width, depth,
// dropout, num_classes, input_shape "C,H,W", profile, weights_sha256, data.
std::map<std::string, std::string> WeightsAttrs(const std::string& arch,
                                                const ArchOptions& options,
                                                const DataSplits& data, const ModelRecord& m);

// Progress of a training run on stderr: a live bar (epoch, batch, images/s,
// ETA) on a terminal, one plain line per epoch otherwise, nothing if quiet.
class ProgressPrinter {
 public:
  ProgressPrinter(bool terminal, bool quiet) : terminal_(terminal), quiet_(quiet) {}
  void Update(const TrainProgress& p);
  // Ends a pending bar line.
  void Finish();

 private:
  bool terminal_, quiet_;
  bool bar_open_ = false;
  std::chrono::steady_clock::time_point last_draw_{};
};

}  // namespace xw::cli

#endif  // XWIRES_API_CLI_TRAIN_COMMON_H_
