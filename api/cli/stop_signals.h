// SIGINT / SIGTERM for the long commands (search, train): while a
// StopSignals object lives, the first of these signals only records itself,
// so the command can finish or abandon its current step, leave its stored
// state resumable and exit 128 + signal (130 for SIGINT, 143 for SIGTERM);
// a second signal ends the process at once, as the default action would.
// The destructor restores the previous handlers. One object at a time per
// process; not copyable.
#ifndef XWIRES_API_CLI_STOP_SIGNALS_H_
#define XWIRES_API_CLI_STOP_SIGNALS_H_

#include <signal.h>

#include <string>

namespace xw::cli {

class StopSignals {
 public:
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  // The signal received (SIGINT or SIGTERM), 0 while none has arrived.
  // Async-signal-safe to poll from any thread.
  int received() const;
  // "SIGINT" or "SIGTERM".
  static std::string Name(int sig);

 private:
  struct sigaction old_int_, old_term_;
};

// `word` quoted for a POSIX shell: unchanged when it consists only of
// characters no shell treats specially, else in single quotes (a quote
// inside becomes '\'').
std::string ShellQuote(const std::string& word);

}  // namespace xw::cli

#endif  // XWIRES_API_CLI_STOP_SIGNALS_H_
