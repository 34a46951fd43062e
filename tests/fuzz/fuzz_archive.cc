// libFuzzer target: the safe archive reader on arbitrary bytes, then the
// manifest checks a bundle goes through. It must never crash, leak, write
// outside its private extraction directory, or leave that directory behind.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "dataset/bundle/archive_io.h"
#include "dataset/bundle/bundle_manifest.h"

namespace {
std::filesystem::path g_parent;

bool Empty(const std::filesystem::path& dir) {
  return std::filesystem::directory_iterator(dir) ==
         std::filesystem::directory_iterator();
}
}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const char* tmp = std::getenv("TMPDIR");
  g_parent = std::filesystem::path(tmp ? tmp : "/tmp") /
             ("xwires-fuzz-archive-" + std::to_string(::getpid()));
  std::filesystem::create_directories(g_parent);
  std::atexit([] {
    std::error_code ec;
    std::filesystem::remove_all(g_parent, ec);
  });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  xw::bundle::ArchiveLimits limits;
  limits.max_entry_bytes = 1 << 20;
  limits.max_total_bytes = 4 << 20;
  limits.max_entries = 64;
  {
    auto x = xw::bundle::ExtractArchiveFromMemory(data, size, "fuzz", g_parent,
                                                  limits);
    if (x.ok()) {
      for (const auto& f : x->files) {
        // Every extracted file lies inside the private directory.
        if (f.path.string().rfind(x->dir.path().string() + "/", 0) != 0)
          std::abort();
      }
      if (const auto* mf = x->Find(xw::kBundleManifestName)) {
        std::ifstream in(mf->path, std::ios::binary);
        std::stringstream text;
        text << in.rdbuf();
        auto m = xw::bundle::ParseManifest(text.str());
        if (m.ok()) (void)xw::bundle::CheckFilesAgainstManifest(*m, *x);
      }
    }
  }
  if (!Empty(g_parent)) std::abort();  // the extraction directory was removed
  return 0;
}
