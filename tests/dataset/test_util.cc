#include "test_util.h"

#include <openssl/evp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <vector>

namespace xw::testutil {

namespace fs = std::filesystem;

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = std::string(base && *base ? base : "/tmp") +
                     "/xwires-dataset-test-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data())) throw std::runtime_error("mkdtemp failed");
  path_ = buf.data();
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

std::string HashTree(const std::string& dir) {
  std::vector<std::string> files;
  for (auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file())
      files.push_back(fs::relative(e.path(), dir).string());
  }
  std::sort(files.begin(), files.end());
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(),
                                                              EVP_MD_CTX_free);
  EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr);
  for (const auto& f : files) {
    std::ifstream in(dir + "/" + f, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)),
                      std::istreambuf_iterator<char>());
    std::string head = f + "\n" + std::to_string(bytes.size()) + "\n";
    EVP_DigestUpdate(ctx.get(), head.data(), head.size());
    EVP_DigestUpdate(ctx.get(), bytes.data(), bytes.size());
  }
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned len = 0;
  EVP_DigestFinal_ex(ctx.get(), md, &len);
  std::string hex;
  char b[3];
  for (unsigned i = 0; i < len; ++i) {
    std::snprintf(b, sizeof b, "%02x", md[i]);
    hex += b;
  }
  return hex + " (" + std::to_string(files.size()) + " files)";
}

std::string ShellQuote(const std::string& s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\'')
      q += "'\\''";
    else
      q += c;
  }
  return q + "'";
}

CommandResult Run(const std::string& command) {
  TempDir tmp;
  std::string out = tmp.path() + "/out", err = tmp.path() + "/err";
  CommandResult r;
  int status = std::system((command + " >" + out + " 2>" + err).c_str());
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  auto slurp = [](const std::string& p) {
    std::ifstream in(p);
    return std::string((std::istreambuf_iterator<char>(in)),
                       std::istreambuf_iterator<char>());
  };
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

CommandResult Xwires(const std::string& args) {
  return Run(std::string(XWIRES_BINARY_DIR) + "/xwires " + args);
}

}  // namespace xw::testutil
