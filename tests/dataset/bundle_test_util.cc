#include "bundle_test_util.h"

#include <archive.h>
#include <archive_entry.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace xw::testutil {
namespace {

void Die(struct archive* a, const char* what) {
  std::fprintf(stderr, "WriteRawArchive: %s: %s\n", what,
               archive_error_string(a) ? archive_error_string(a) : "?");
  std::abort();
}

unsigned Filetype(RawKind k) {
  switch (k) {
    case RawKind::kFile:
    case RawKind::kHardlink:
      return AE_IFREG;
    case RawKind::kDir:
      return AE_IFDIR;
    case RawKind::kSymlink:
      return AE_IFLNK;
    case RawKind::kCharDevice:
      return AE_IFCHR;
    case RawKind::kBlockDevice:
      return AE_IFBLK;
    case RawKind::kFifo:
      return AE_IFIFO;
  }
  return AE_IFREG;
}

}  // namespace

void WriteRawArchive(const std::string& path,
                     const std::vector<RawEntry>& entries, RawFilter filter) {
  struct archive* a = archive_write_new();
  if (filter == RawFilter::kZstdOverGzip) archive_write_add_filter_gzip(a);
  if (filter == RawFilter::kZstd || filter == RawFilter::kZstdOverGzip) {
    archive_write_add_filter_zstd(a);
  }
  if (filter == RawFilter::kGzip) archive_write_add_filter_gzip(a);
  if (archive_write_set_format_pax(a) != ARCHIVE_OK) Die(a, "format");
  if (archive_write_open_filename(a, path.c_str()) != ARCHIVE_OK)
    Die(a, "open");
  for (const RawEntry& r : entries) {
    struct archive_entry* e = archive_entry_new();
    archive_entry_set_pathname(e, r.name.c_str());
    archive_entry_set_filetype(e, Filetype(r.kind));
    archive_entry_set_perm(e, r.kind == RawKind::kDir ? 0755 : 0644);
    const uint64_t size = r.kind != RawKind::kFile ? 0
                          : r.zeros > 0            ? r.zeros
                                                   : r.data.size();
    archive_entry_set_size(e, static_cast<la_int64_t>(size));
    if (r.kind == RawKind::kSymlink)
      archive_entry_set_symlink(e, r.link.c_str());
    if (r.kind == RawKind::kHardlink)
      archive_entry_set_hardlink(e, r.link.c_str());
    if (r.kind == RawKind::kCharDevice || r.kind == RawKind::kBlockDevice) {
      archive_entry_set_rdevmajor(e, 1);
      archive_entry_set_rdevminor(e, 3);
    }
    if (archive_write_header(a, e) != ARCHIVE_OK) Die(a, "header");
    if (r.kind == RawKind::kFile && r.zeros > 0) {
      std::string chunk(1 << 16, '\0');
      for (uint64_t left = r.zeros; left > 0;) {
        const size_t n =
            static_cast<size_t>(std::min<uint64_t>(left, chunk.size()));
        if (archive_write_data(a, chunk.data(), n) !=
            static_cast<la_ssize_t>(n)) {
          Die(a, "data");
        }
        left -= n;
      }
    } else if (r.kind == RawKind::kFile && !r.data.empty()) {
      if (archive_write_data(a, r.data.data(), r.data.size()) !=
          static_cast<la_ssize_t>(r.data.size())) {
        Die(a, "data");
      }
    }
    archive_entry_free(e);
  }
  if (archive_write_close(a) != ARCHIVE_OK) Die(a, "close");
  archive_write_free(a);
}

std::vector<std::pair<std::string, std::string>> ReadArchiveEntries(const std::string& path) {
  std::vector<std::pair<std::string, std::string>> out;
  struct archive* a = archive_read_new();
  archive_read_support_filter_all(a);
  archive_read_support_format_tar(a);
  if (archive_read_open_filename(a, path.c_str(), 1 << 16) != ARCHIVE_OK) Die(a, "open");
  struct archive_entry* e = nullptr;
  while (archive_read_next_header(a, &e) == ARCHIVE_OK) {
    std::string data(static_cast<size_t>(archive_entry_size(e)), '\0');
    if (!data.empty() && archive_read_data(a, data.data(), data.size()) !=
                             static_cast<la_ssize_t>(data.size())) {
      Die(a, "read");
    }
    out.emplace_back(archive_entry_pathname(e), std::move(data));
  }
  archive_read_free(a);
  return out;
}

std::vector<std::string> ListTree(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator();
       it.increment(ec)) {
    out.push_back(std::filesystem::relative(it->path(), dir).string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string ReadFileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void WriteFileBytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace xw::testutil
