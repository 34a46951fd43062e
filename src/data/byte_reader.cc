#include "byte_reader.h"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace xw::data_internal {
namespace {

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using FilePtr = std::unique_ptr<std::FILE, FileCloser>;

struct GzCloser {
  void operator()(gzFile_s* f) const { gzclose(f); }
};
using GzPtr = std::unique_ptr<gzFile_s, GzCloser>;

class PlainReader : public ByteReader {
 public:
  PlainReader(std::string path, FilePtr f, int64_t size)
      : ByteReader(std::move(path)), f_(std::move(f)), size_(size) {}

  Result<int64_t> Read(void* buf, int64_t n) override {
    size_t got = std::fread(buf, 1, static_cast<size_t>(n), f_.get());
    if (got < static_cast<size_t>(n) && std::ferror(f_.get())) {
      return Status::IOError(path_ + ": read failed: " + std::strerror(errno));
    }
    return static_cast<int64_t>(got);
  }
  int64_t KnownSize() const override { return size_; }

 private:
  FilePtr f_;
  int64_t size_;
};

class GzReader : public ByteReader {
 public:
  GzReader(std::string path, GzPtr f)
      : ByteReader(std::move(path)), f_(std::move(f)) {}

  Result<int64_t> Read(void* buf, int64_t n) override {
    // gzread takes an unsigned count; read in chunks below INT_MAX.
    auto* out = static_cast<unsigned char*>(buf);
    int64_t total = 0;
    while (total < n) {
      unsigned chunk =
          static_cast<unsigned>(std::min<int64_t>(n - total, 1 << 30));
      int got = gzread(f_.get(), out + total, chunk);
      if (got < 0) {
        int err = 0;
        const char* msg = gzerror(f_.get(), &err);
        return Status::Corruption(path_ + ": gzip stream is corrupt: " +
                                  (msg ? msg : "unknown zlib error"));
      }
      if (got == 0) break;
      total += got;
    }
    if (total < n) {
      // A gzip stream cut short reads as end of data; report it as corrupt.
      int err = 0;
      const char* msg = gzerror(f_.get(), &err);
      if (err != Z_OK && err != Z_STREAM_END) {
        return Status::Corruption(path_ + ": gzip stream is corrupt: " +
                                  (msg ? msg : "unknown zlib error"));
      }
    }
    return total;
  }
  int64_t KnownSize() const override { return -1; }

 private:
  GzPtr f_;
};

}  // namespace

Result<std::unique_ptr<ByteReader>> OpenByteReader(const std::string& path,
                                                   bool allow_gzip) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) {
    return Status::NotFound(path + ": file not found");
  }
  if (!std::filesystem::is_regular_file(status)) {
    return Status::InvalidArgument(path + ": not a regular file");
  }
  FilePtr f(std::fopen(path.c_str(), "rb"));
  if (!f) {
    return Status::IOError(path + ": cannot open: " + std::strerror(errno));
  }
  std::array<unsigned char, 2> magic{};
  size_t got = std::fread(magic.data(), 1, 2, f.get());
  if (allow_gzip && got == 2 && magic[0] == 0x1f && magic[1] == 0x8b) {
    f.reset();
    GzPtr gz(gzopen(path.c_str(), "rb"));
    if (!gz) return Status::IOError(path + ": cannot open gzip file");
    return std::unique_ptr<ByteReader>(new GzReader(path, std::move(gz)));
  }
  std::rewind(f.get());
  const auto size = static_cast<int64_t>(std::filesystem::file_size(path, ec));
  if (ec) return Status::IOError(path + ": cannot stat: " + ec.message());
  return std::unique_ptr<ByteReader>(new PlainReader(path, std::move(f), size));
}

Status ReadExact(ByteReader* r, void* buf, int64_t n, const std::string& what) {
  XW_ASSIGN_OR_RETURN(int64_t got, r->Read(buf, n));
  if (got != n) {
    return Status::Corruption(r->path() + ": truncated file (" + what +
                              ": expected " + std::to_string(n) +
                              " bytes, got " + std::to_string(got) + ")");
  }
  return Status::OK();
}

const float* ByteToUnitTable() {
  static const std::array<float, 256> table = [] {
    std::array<float, 256> t{};
    for (int b = 0; b < 256; ++b) t[b] = static_cast<float>(b) / 255.0f;
    return t;
  }();
  return table.data();
}

}  // namespace xw::data_internal
