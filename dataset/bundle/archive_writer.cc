// The writing side of archive_io.h: libarchive writing, wrapped in RAII.
#include <archive.h>
#include <archive_entry.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>
#include <system_error>
#include <vector>

#include "archive_io.h"

namespace xw::bundle {
namespace {

struct WriteFree {
  void operator()(struct archive* a) const { archive_write_free(a); }
};
struct EntryFree {
  void operator()(struct archive_entry* e) const { archive_entry_free(e); }
};

}  // namespace

struct ArchiveWriter::Impl {
  std::unique_ptr<struct archive, WriteFree> a;
  std::filesystem::path out;
  std::filesystem::path partial;
  std::set<std::string> names;
  bool finished = false;

  // Names the file being written and, for a failed write (a full disk, a
  // read-only file system), the system's cause.
  Status Fail(const std::string& what) {
    std::string msg = archive_error_string(a.get()) ? archive_error_string(a.get())
                                                    : "unknown libarchive error";
    const int err = archive_errno(a.get());
    if (err > 0 && msg.find(std::strerror(err)) == std::string::npos)
      msg += std::string(" (") + std::strerror(err) + ")";
    return Status::IOError("writing archive '" + out.string() + "' (as '" +
                           partial.string() + "'): " + what + ": " + msg);
  }

  // Writes one regular-file header with fixed metadata.
  Status Header(std::string_view name, uint64_t size) {
    XW_RETURN_IF_ERROR(
        ValidateEntryName(name, /*is_dir=*/false, ArchiveLimits{}));
    if (!names.insert(std::string(name)).second) {
      return Status::InvalidArgument("archive entry '" + std::string(name) +
                                     "' added twice");
    }
    std::unique_ptr<struct archive_entry, EntryFree> e(archive_entry_new());
    archive_entry_set_pathname(e.get(), std::string(name).c_str());
    archive_entry_set_filetype(e.get(), AE_IFREG);
    archive_entry_set_perm(e.get(), 0644);
    archive_entry_set_size(e.get(), static_cast<la_int64_t>(size));
    archive_entry_set_mtime(e.get(), 0, 0);
    archive_entry_set_uid(e.get(), 0);
    archive_entry_set_gid(e.get(), 0);
    if (archive_write_header(a.get(), e.get()) != ARCHIVE_OK) {
      return Fail("header of '" + std::string(name) + "'");
    }
    return Status::OK();
  }

  Status Data(std::string_view name, const char* data, size_t n) {
    while (n > 0) {
      la_ssize_t w = archive_write_data(a.get(), data, n);
      if (w <= 0) return Fail("data of '" + std::string(name) + "'");
      data += w;
      n -= static_cast<size_t>(w);
    }
    return Status::OK();
  }
};

ArchiveWriter::ArchiveWriter(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}

ArchiveWriter::~ArchiveWriter() {
  if (impl_ && !impl_->finished) {
    impl_->a.reset();  // closes the file before it is removed
    std::error_code ec;
    std::filesystem::remove(impl_->partial, ec);
  }
}

Result<std::unique_ptr<ArchiveWriter>> ArchiveWriter::Create(
    const std::filesystem::path& out, Compression compression) {
  auto impl = std::make_unique<Impl>();
  impl->out = out;
  impl->partial = out.string() + ".partial";
  impl->a.reset(archive_write_new());
  if (!impl->a) return Status::Internal("libarchive: cannot allocate a writer");
  struct archive* a = impl->a.get();
  int r = compression == Compression::kZstd ? archive_write_add_filter_zstd(a)
                                            : archive_write_add_filter_gzip(a);
  if (r != ARCHIVE_OK) return impl->Fail("compression filter");
  // pax keeps long names and large sizes exact; "restricted" adds pax
  // headers only when ustar cannot represent an entry.
  if (archive_write_set_format_pax_restricted(a) != ARCHIVE_OK) {
    return impl->Fail("tar format");
  }
  if (compression == Compression::kGzip) {
    // No timestamp or name in the gzip header: same contents, same bytes.
    archive_write_set_filter_option(a, "gzip", "timestamp", nullptr);
  }
  if (archive_write_open_filename(a, impl->partial.c_str()) != ARCHIVE_OK) {
    return impl->Fail("cannot open '" + impl->partial.string() + "'");
  }
  return std::unique_ptr<ArchiveWriter>(new ArchiveWriter(std::move(impl)));
}

Status ArchiveWriter::AddBytes(std::string_view name, std::string_view bytes) {
  XW_RETURN_IF_ERROR(impl_->Header(name, bytes.size()));
  return impl_->Data(name, bytes.data(), bytes.size());
}

Status ArchiveWriter::AddFile(std::string_view name,
                              const std::filesystem::path& source) {
  std::error_code ec;
  const uintmax_t size = std::filesystem::file_size(source, ec);
  if (ec)
    return Status::IOError("cannot stat '" + source.string() +
                           "': " + ec.message());
  std::ifstream in(source, std::ios::binary);
  if (!in) return Status::IOError("cannot open '" + source.string() + "'");
  XW_RETURN_IF_ERROR(impl_->Header(name, size));
  std::vector<char> buf(1 << 16);
  uintmax_t left = size;
  while (left > 0) {
    const size_t want =
        static_cast<size_t>(std::min<uintmax_t>(left, buf.size()));
    in.read(buf.data(), static_cast<std::streamsize>(want));
    if (static_cast<size_t>(in.gcount()) != want) {
      return Status::IOError("'" + source.string() +
                             "' changed size while archiving");
    }
    XW_RETURN_IF_ERROR(impl_->Data(name, buf.data(), want));
    left -= want;
  }
  return Status::OK();
}

Status ArchiveWriter::Finish() {
  if (impl_->finished)
    return Status::FailedPrecondition("archive already finished");
  if (archive_write_close(impl_->a.get()) != ARCHIVE_OK)
    return impl_->Fail("close");
  std::error_code ec;
  std::filesystem::rename(impl_->partial, impl_->out, ec);
  if (ec) {
    return Status::IOError("cannot rename '" + impl_->partial.string() +
                           "' to '" + impl_->out.string() +
                           "': " + ec.message());
  }
  impl_->finished = true;
  return Status::OK();
}

}  // namespace xw::bundle
