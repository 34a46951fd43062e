// Progress of training runs and searches as text, the way `xwires train` and
// `xwires search` show it: on a terminal a live bar redrawn in place ("\r"
// and an erase-line escape), elsewhere (pipes, CI, notebooks) one plain line
// per epoch or per trial. The text goes to a writer function (default:
// stderr), so the Python package can send it to sys.stderr.
//
// Not thread-safe: one object per run, called from the thread that reports
// progress.
#ifndef XWIRES_API_PROGRESS_TEXT_H_
#define XWIRES_API_PROGRESS_TEXT_H_

#include <chrono>
#include <functional>
#include <string>

#include "xwires/hpo/search_driver.h"
#include "xwires/trainers/trainer.h"

namespace xw {

using TextWriter = std::function<void(const std::string&)>;

// Writes `text` to stderr and flushes it.
void WriteToStderr(const std::string& text);

// A training run: per batch a bar (epoch, batch, images/s, ETA, loss) on a
// terminal; per epoch one line with the train and test metrics.
class TrainProgressText {
 public:
  TrainProgressText(bool terminal, bool quiet, TextWriter write = WriteToStderr)
      : terminal_(terminal), quiet_(quiet), write_(std::move(write)) {}
  void Update(const TrainProgress& p);
  // Ends a pending bar line.
  void Finish();

 private:
  bool terminal_, quiet_;
  TextWriter write_;
  bool bar_open_ = false;
  std::chrono::steady_clock::time_point last_draw_{};
};

// A search: one line per finished or failed trial (with the best objective
// so far and the ETA); on a terminal a bar kept on the last line.
class SearchProgressText {
 public:
  SearchProgressText(bool terminal, bool quiet, TextWriter write = WriteToStderr)
      : terminal_(terminal), quiet_(quiet), write_(std::move(write)) {}
  // A start-up fact (DriverOptions::on_message), one line.
  void Message(const std::string& m);
  void Update(const hpo::SearchProgress& p);
  void Finish();

 private:
  bool terminal_, quiet_;
  TextWriter write_;
  bool bar_open_ = false;
};

// "42s", "3m05s", "1h02m"; "?" for a negative or NaN duration.
std::string DurationText(double seconds);

}  // namespace xw

#endif  // XWIRES_API_PROGRESS_TEXT_H_
