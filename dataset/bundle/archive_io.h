// Safe tar archives for bundles: a writer (zstd or gzip tar) and a reader that
// treats its input as hostile.
//
// The reader extracts only regular files and directories, only into a fresh
// private directory (mode 0700) that it creates and owns, and rejects the
// whole archive on the first problem, naming the entry and the problem:
// absolute or escaping paths, unusual path components, symlinks, hard links,
// device/fifo/socket entries, duplicate entries, too many entries, and entry or
// total sizes above the limits. Sizes are enforced on the bytes actually
// decompressed while streaming, not only on what headers claim. On failure the
// private directory is removed and nothing was written anywhere else.
//
// libarchive handles are wrapped in RAII inside archive_reader.cc /
// archive_writer.cc; no libarchive type appears here. Objects are not
// thread-safe; separate objects may be used from separate threads.
#ifndef XWIRES_DATASET_BUNDLE_ARCHIVE_IO_H_
#define XWIRES_DATASET_BUNDLE_ARCHIVE_IO_H_

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "xwires/core/status.h"

namespace xw::bundle {

struct ArchiveLimits {
  uint64_t max_entry_bytes = uint64_t{1} << 30;  // 1 GiB per file
  uint64_t max_total_bytes = uint64_t{8} << 30;  // 8 GiB in all
  size_t max_entries = 50000;                    // files + directories
  size_t max_path_bytes = 240;                   // whole relative path
  size_t max_path_depth = 8;                     // components
};

// A directory created with mkdtemp under `parent` (mode 0700) and removed,
// with everything inside, when the object is destroyed. Move-only.
class TempDir {
 public:
  TempDir() = default;  // owns nothing
  static Result<TempDir> Create(const std::filesystem::path& parent,
                                std::string_view prefix);
  TempDir(TempDir&& other) noexcept;
  TempDir& operator=(TempDir&& other) noexcept;
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir();

  const std::filesystem::path& path() const { return path_; }

 private:
  explicit TempDir(std::filesystem::path p) : path_(std::move(p)) {}
  void Remove();
  std::filesystem::path path_;
};

// Writes `bytes` to a new file `path` (for staging bundle contents).
Status WriteFileBytes(const std::filesystem::path& path,
                      std::string_view bytes);

// Checks one entry name as written in an archive: relative, '/'-separated,
// every component made of [A-Za-z0-9._-], not "." or "..", no empty component,
// within the length and depth limits. A single trailing '/' is allowed when
// `is_dir`. Returns InvalidArgument naming the entry and the problem.
Status ValidateEntryName(std::string_view name, bool is_dir,
                         const ArchiveLimits& limits);

// `name` with bytes outside printable ASCII (and backslash) shown as \xNN,
// cut at 200 bytes: safe to put in an error message.
std::string PrintableName(std::string_view name);

struct ExtractedFile {
  std::string name;            // as in the archive, validated
  std::filesystem::path path;  // inside the extraction directory
  uint64_t bytes = 0;          // bytes actually decompressed
  std::string sha256;          // of those bytes, lowercase hex
};

// The result of a successful extraction. Owns the private directory: the
// files disappear when this object is destroyed.
struct ExtractedArchive {
  TempDir dir;
  std::vector<ExtractedFile> files;  // regular files, in archive order
  std::string compression;           // "zstd" or "gzip"

  const ExtractedFile* Find(std::string_view name) const;
};

// Extracts `archive` (a zstd- or gzip-compressed tar) into a new private
// directory under `temp_parent`. Errors name the archive, the entry and the
// problem; kInvalidArgument for a forbidden entry or limit, kCorruption for
// undecodable data, kIOError for local file-system failures.
Result<ExtractedArchive> ExtractArchive(
    const std::filesystem::path& archive,
    const std::filesystem::path& temp_parent, const ArchiveLimits& limits = {});
// Same, from bytes in memory (`label` names them in messages). Used by the
// fuzzer; `data` must outlive the call only.
Result<ExtractedArchive> ExtractArchiveFromMemory(
    const void* data, size_t size, std::string_view label,
    const std::filesystem::path& temp_parent, const ArchiveLimits& limits = {});

enum class Compression { kZstd, kGzip };

// Writes a compressed pax tar of regular files with fixed metadata (mode
// 0644, uid/gid 0, mtime 0) so that the same contents give the same bytes.
// Output goes to "<out>.partial" and is renamed to `out` by Finish(); a writer
// destroyed before Finish() removes the partial file.
class ArchiveWriter {
 public:
  static Result<std::unique_ptr<ArchiveWriter>> Create(
      const std::filesystem::path& out,
      Compression compression = Compression::kZstd);
  ~ArchiveWriter();
  ArchiveWriter(const ArchiveWriter&) = delete;
  ArchiveWriter& operator=(const ArchiveWriter&) = delete;

  // `name` must pass ValidateEntryName with default limits and be new.
  Status AddBytes(std::string_view name, std::string_view bytes);
  Status AddFile(std::string_view name, const std::filesystem::path& source);
  Status Finish();

 private:
  struct Impl;
  explicit ArchiveWriter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace xw::bundle

#endif  // XWIRES_DATASET_BUNDLE_ARCHIVE_IO_H_
