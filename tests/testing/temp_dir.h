// A scratch directory for a test: created fresh under $TMPDIR (or /tmp) and
// removed with its contents when the object goes out of scope.
#ifndef XWIRES_TESTS_TESTING_TEMP_DIR_H_
#define XWIRES_TESTS_TESTING_TEMP_DIR_H_

#include <string>

namespace xw::testutil {

class TempDir {
 public:
  // `prefix` names the directory (`<prefix>-XXXXXX`), so a leftover one says
  // which test made it.
  explicit TempDir(const std::string& prefix = "xwires-test");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  // path() + "/" + name.
  std::string Path(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace xw::testutil

#endif  // XWIRES_TESTS_TESTING_TEMP_DIR_H_
