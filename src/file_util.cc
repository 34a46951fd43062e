#include "xwires/core/file_util.h"

#include <fstream>
#include <sstream>

namespace xw {

Result<std::string> ReadWholeFile(const std::string& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound(what + " '" + path + "' cannot be opened");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return Status::IOError(what + " '" + path + "': read failed");
  return ss.str();
}

}  // namespace xw
