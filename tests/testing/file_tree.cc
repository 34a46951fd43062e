#include "testing/file_tree.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "dataset/store/sha256.h"

namespace xw::testutil {

namespace fs = std::filesystem;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::map<std::string, std::string> Snapshot(const std::string& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file())
      out[fs::relative(e.path(), dir).string()] = ReadFile(e.path());
  }
  return out;
}

std::string HashTree(const std::string& dir) {
  const std::map<std::string, std::string> files = Snapshot(dir);
  Sha256 sha;
  for (const auto& [name, bytes] : files) {
    sha.Update(name + "\n" + std::to_string(bytes.size()) + "\n");
    sha.Update(bytes);
  }
  return sha.Finish() + " (" + std::to_string(files.size()) + " files)";
}

}  // namespace xw::testutil
