// Helpers for the bundle tests: hand-made (possibly malicious) tar archives
// written directly with libarchive, bypassing the toolkit's safe writer.
#ifndef XWIRES_TESTS_DATASET_BUNDLE_TEST_UTIL_H_
#define XWIRES_TESTS_DATASET_BUNDLE_TEST_UTIL_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace xw::testutil {

enum class RawKind {
  kFile,
  kDir,
  kSymlink,
  kHardlink,
  kCharDevice,
  kBlockDevice,
  kFifo
};

struct RawEntry {
  std::string name;
  std::string data;  // contents of a kFile
  RawKind kind = RawKind::kFile;
  std::string link;  // target of a kSymlink / kHardlink
  uint64_t zeros =
      0;  // if > 0, a kFile of this many zero bytes instead of `data`
};

inline RawEntry File(std::string name, std::string data) {
  RawEntry e;
  e.name = std::move(name);
  e.data = std::move(data);
  return e;
}
inline RawEntry Zeros(std::string name, uint64_t n) {
  RawEntry e = File(std::move(name), "");
  e.zeros = n;
  return e;
}
// A non-file entry: kDir, kSymlink/kHardlink (to `link`), devices, fifos.
inline RawEntry Special(RawKind kind, std::string name, std::string link = "") {
  RawEntry e = File(std::move(name), "");
  e.kind = kind;
  e.link = std::move(link);
  return e;
}

enum class RawFilter { kZstd, kGzip, kNone, kZstdOverGzip };

// Writes a pax tar of `entries` (in order, names verbatim) to `path`.
// Aborts the test binary on a libarchive failure (test setup error).
void WriteRawArchive(const std::string& path,
                     const std::vector<RawEntry>& entries,
                     RawFilter filter = RawFilter::kZstd);

// Names of everything under `dir`, recursively (relative, sorted).
std::vector<std::string> ListTree(const std::string& dir);

// The regular-file entries of a (trusted, test-made) zstd/gzip tar, in order.
std::vector<std::pair<std::string, std::string>> ReadArchiveEntries(const std::string& path);

std::string ReadFileBytes(const std::string& path);
void WriteFileBytes(const std::string& path, const std::string& bytes);

}  // namespace xw::testutil

#endif  // XWIRES_TESTS_DATASET_BUNDLE_TEST_UTIL_H_
