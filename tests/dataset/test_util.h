// Helpers shared by the dataset tests: temporary directories, a content hash
// of a directory tree (to prove that a failed command changed nothing), and
// running the CLI.
#ifndef XWIRES_TESTS_DATASET_TEST_UTIL_H_
#define XWIRES_TESTS_DATASET_TEST_UTIL_H_

#include <string>

namespace xw::testutil {

// A fresh directory under $TMPDIR (or /tmp), removed with its contents on
// destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// SHA-256 over every regular file's relative path, size and bytes, sorted by
// path: equal iff the tree's files are identical.
std::string HashTree(const std::string& dir);

struct CommandResult {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};
// Runs a shell command line, capturing stdout and stderr.
CommandResult Run(const std::string& command);
// Runs `${XWIRES_BINARY_DIR}/xwires <args>`.
CommandResult Xwires(const std::string& args);

// Single-quotes a string for /bin/sh.
std::string ShellQuote(const std::string& s);

}  // namespace xw::testutil

#endif  // XWIRES_TESTS_DATASET_TEST_UTIL_H_
