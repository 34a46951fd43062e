// The hostile-input side of archive_io.h: libarchive reading, wrapped in RAII.
#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <map>
#include <set>
#include <vector>

#include "archive_io.h"
#include "dataset/store/sha256.h"

namespace xw::bundle {
namespace {

struct ReadFree {
  void operator()(struct archive* a) const { archive_read_free(a); }
};
using ReadPtr = std::unique_ptr<struct archive, ReadFree>;

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  int Release() {
    int f = fd_;
    fd_ = -1;
    return f;
  }

 private:
  int fd_;
};

std::string ArchiveError(struct archive* a) {
  const char* msg = archive_error_string(a);
  return msg != nullptr ? msg : "unknown libarchive error";
}

// Names the forbidden kinds of entry; empty for regular files and directories.
std::string ForbiddenKind(struct archive_entry* e) {
  if (const char* target = archive_entry_hardlink(e)) {
    return "hard link (to '" + PrintableName(target) + "')";
  }
  switch (archive_entry_filetype(e)) {
    case AE_IFREG:
    case AE_IFDIR:
      return archive_entry_symlink(e) != nullptr ? "symbolic link" : "";
    case AE_IFLNK: {
      const char* target = archive_entry_symlink(e);
      return "symbolic link (to '" + PrintableName(target ? target : "") + "')";
    }
    case AE_IFCHR:
      return "character device";
    case AE_IFBLK:
      return "block device";
    case AE_IFIFO:
      return "fifo";
    case AE_IFSOCK:
      return "socket";
    default:
      return "entry of unknown type";
  }
}

class Extractor {
 public:
  Extractor(std::string label, const ArchiveLimits& limits,
            ExtractedArchive* out)
      : label_(std::move(label)), limits_(limits), out_(out) {}

  Status Run(struct archive* a) {
    Status s = Loop(a);
    return s.ok() ? s : s.WithContext("bundle archive '" + label_ + "'");
  }

 private:
  Status Loop(struct archive* a) {
    for (size_t index = 0;; ++index) {
      struct archive_entry* e = nullptr;
      int r = archive_read_next_header(a, &e);
      if (r == ARCHIVE_EOF) break;
      if (r != ARCHIVE_OK) {
        return Status::Corruption("cannot read entry header #" +
                                  std::to_string(index + 1) + ": " +
                                  ArchiveError(a));
      }
      if (index == 0) XW_RETURN_IF_ERROR(CheckCompression(a));
      if (index + 1 > limits_.max_entries) {
        return Status::InvalidArgument(
            "more than " + std::to_string(limits_.max_entries) + " entries");
      }
      XW_RETURN_IF_ERROR(Entry(a, e, index));
    }
    if (out_->compression.empty()) {
      return Status::InvalidArgument("the archive has no entries");
    }
    return Status::OK();
  }

  Status CheckCompression(struct archive* a) {
    // Filters are listed outermost-last; the innermost is the raw input.
    const int n = archive_filter_count(a);
    const int code = n == 2 ? archive_filter_code(a, 0) : -1;
    if (code == ARCHIVE_FILTER_ZSTD) {
      out_->compression = "zstd";
    } else if (code == ARCHIVE_FILTER_GZIP) {
      out_->compression = "gzip";
    } else {
      return Status::InvalidArgument(
          "compression must be exactly one layer of zstd or gzip, found " +
          std::to_string(n - 1) + " layer(s), outermost '" +
          std::string(archive_filter_name(a, 0) ? archive_filter_name(a, 0)
                                                : "?") +
          "'");
    }
    return Status::OK();
  }

  Status Entry(struct archive* a, struct archive_entry* e, size_t index) {
    const char* raw = archive_entry_pathname(e);
    if (raw == nullptr) {
      return Status::InvalidArgument("entry #" + std::to_string(index + 1) +
                                     ": path cannot be decoded");
    }
    std::string name(raw);
    std::string kind = ForbiddenKind(e);
    if (!kind.empty()) {
      return Status::InvalidArgument("entry '" + PrintableName(name) + "': " +
                                     kind + " is not allowed in a bundle");
    }
    const bool is_dir = archive_entry_filetype(e) == AE_IFDIR;
    XW_RETURN_IF_ERROR(ValidateEntryName(name, is_dir, limits_));
    if (is_dir && name.back() == '/') name.pop_back();
    XW_RETURN_IF_ERROR(Track(name, is_dir));
    if (is_dir) return MakeDir(name);
    if (archive_entry_size_is_set(e) && archive_entry_size(e) >= 0 &&
        static_cast<uint64_t>(archive_entry_size(e)) >
            limits_.max_entry_bytes) {
      return TooBig(name, "its header declares " +
                              std::to_string(archive_entry_size(e)) + " bytes");
    }
    return WriteFile(a, name);
  }

  // Rejects duplicates and file/directory clashes ("a" as a file and "a/b").
  Status Track(const std::string& name, bool is_dir) {
    if (!explicit_.insert(name).second) {
      return Status::InvalidArgument("entry '" + name + "': duplicate entry");
    }
    for (size_t p = name.find('/'); p != std::string::npos;
         p = name.find('/', p + 1)) {
      std::string parent = name.substr(0, p);
      auto [it, inserted] = kinds_.emplace(parent, true);
      if (!it->second) {
        return Status::InvalidArgument("entry '" + name + "': parent '" +
                                       parent + "' is a file");
      }
      if (inserted) XW_RETURN_IF_ERROR(MakeDir(parent));
    }
    auto [it, inserted] = kinds_.emplace(name, is_dir);
    if (!inserted && (!is_dir || !it->second)) {
      return Status::InvalidArgument("entry '" + name + "': duplicate entry");
    }
    return Status::OK();
  }

  Status MakeDir(const std::string& name) {
    const std::filesystem::path p = out_->dir.path() / name;
    if (::mkdir(p.c_str(), 0700) != 0 && errno != EEXIST) {
      return Status::IOError("cannot create '" + p.string() +
                             "': " + std::strerror(errno));
    }
    return Status::OK();
  }

  Status TooBig(const std::string& name, const std::string& why) {
    return Status::InvalidArgument("entry '" + name +
                                   "': larger than the limit of " +
                                   std::to_string(limits_.max_entry_bytes) +
                                   " bytes per file (" + why + ")");
  }

  Status WriteFile(struct archive* a, const std::string& name) {
    const std::filesystem::path p = out_->dir.path() / name;
    // O_EXCL|O_NOFOLLOW: never reuse or follow anything already there.
    Fd fd(::open(p.c_str(),
                 O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (fd.get() < 0) {
      return Status::IOError("cannot create '" + p.string() +
                             "': " + std::strerror(errno));
    }
    Sha256 hash;
    uint64_t bytes = 0;
    std::vector<char> buf(1 << 16);
    while (true) {
      la_ssize_t n = archive_read_data(a, buf.data(), buf.size());
      if (n < 0) {
        return Status::Corruption("entry '" + name + "': " + ArchiveError(a));
      }
      if (n == 0) break;
      bytes += static_cast<uint64_t>(n);
      total_ += static_cast<uint64_t>(n);
      // Counted on decompressed bytes, so a lying header cannot get past.
      if (bytes > limits_.max_entry_bytes) {
        return TooBig(name, "more than that was decompressed");
      }
      if (total_ > limits_.max_total_bytes) {
        return Status::InvalidArgument(
            "entry '" + name +
            "': the archive decompresses to more than the limit of " +
            std::to_string(limits_.max_total_bytes) + " bytes in total");
      }
      hash.Update(buf.data(), static_cast<size_t>(n));
      XW_RETURN_IF_ERROR(
          WriteAll(fd.get(), buf.data(), static_cast<size_t>(n), p));
    }
    if (::close(fd.Release()) != 0) {
      return Status::IOError("cannot close '" + p.string() +
                             "': " + std::strerror(errno));
    }
    out_->files.push_back({name, p, bytes, hash.Finish()});
    return Status::OK();
  }

  static Status WriteAll(int fd, const char* data, size_t n,
                         const std::filesystem::path& p) {
    while (n > 0) {
      ssize_t w = ::write(fd, data, n);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        return Status::IOError("cannot write '" + p.string() +
                               "': " + std::strerror(errno));
      }
      data += w;
      n -= static_cast<size_t>(w);
    }
    return Status::OK();
  }

  std::string label_;
  ArchiveLimits limits_;
  ExtractedArchive* out_;
  std::set<std::string> explicit_;     // names of entries seen so far
  std::map<std::string, bool> kinds_;  // every path so far -> is a directory
  uint64_t total_ = 0;
};

Result<ExtractedArchive> Extract(
    const std::string& label, const std::filesystem::path& temp_parent,
    const ArchiveLimits& limits,
    const std::function<int(struct archive*)>& open) {
  ReadPtr a(archive_read_new());
  if (!a) return Status::Internal("libarchive: cannot allocate a reader");
  // Only what a bundle may be: zstd- or gzip-compressed tar.
  archive_read_support_filter_zstd(a.get());
  archive_read_support_filter_gzip(a.get());
  archive_read_support_format_tar(a.get());
  XW_ASSIGN_OR_RETURN(TempDir dir,
                      TempDir::Create(temp_parent, "xwires-bundle-"));
  ExtractedArchive out{std::move(dir), {}, ""};
  if (open(a.get()) != ARCHIVE_OK) {
    // Opening already sniffs the format and the first compressed block, so
    // most failures here are about the bytes, not the file system.
    const int err = archive_errno(a.get());
    const std::string msg =
        "cannot open bundle archive '" + label + "': " + ArchiveError(a.get());
    const bool io = err == ENOENT || err == EACCES || err == EPERM ||
                    err == EIO || err == EISDIR || err == EMFILE ||
                    err == ENFILE || err == ENOMEM;
    return io ? Status::IOError(msg) : Status::Corruption(msg);
  }
  XW_RETURN_IF_ERROR(Extractor(label, limits, &out).Run(a.get()));
  return out;  // on any failure above, `out` (and its directory) is destroyed
}

}  // namespace

Result<ExtractedArchive> ExtractArchive(
    const std::filesystem::path& archive,
    const std::filesystem::path& temp_parent, const ArchiveLimits& limits) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(archive, ec)) {
    return Status::NotFound("bundle archive '" + archive.string() +
                            "' is not a readable regular file");
  }
  return Extract(archive.string(), temp_parent, limits, [&](struct archive* a) {
    return archive_read_open_filename(a, archive.c_str(), 1 << 16);
  });
}

Result<ExtractedArchive> ExtractArchiveFromMemory(
    const void* data, size_t size, std::string_view label,
    const std::filesystem::path& temp_parent, const ArchiveLimits& limits) {
  return Extract(std::string(label), temp_parent, limits,
                 [&](struct archive* a) {
                   return archive_read_open_memory(a, data, size);
                 });
}

}  // namespace xw::bundle
