// Internal: sequential byte readers over plain and gzip files (RAII).
//
// The loaders read records one buffer at a time through this interface, so a
// limit stops reading early and a truncated file shows up as a short read.
// Not thread-safe: one reader per thread.
#ifndef XWIRES_SRC_DATA_BYTE_READER_H_
#define XWIRES_SRC_DATA_BYTE_READER_H_

#include <cstdint>
#include <memory>
#include <string>

#include "xwires/core/status.h"

namespace xw::data_internal {

class ByteReader {
 public:
  virtual ~ByteReader() = default;
  // Reads up to n bytes into buf; returns how many were read (fewer than n
  // only at end of file). Errors (I/O, corrupt gzip stream) name the file.
  virtual Result<int64_t> Read(void* buf, int64_t n) = 0;
  // Size of the uncompressed content if known without reading it (plain
  // files), -1 otherwise (gzip).
  virtual int64_t KnownSize() const = 0;
  const std::string& path() const { return path_; }

 protected:
  explicit ByteReader(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

// Opens `path` for reading. Gzip content (magic 1f 8b) is decompressed
// transparently when allow_gzip is set. Missing file -> kNotFound.
Result<std::unique_ptr<ByteReader>> OpenByteReader(const std::string& path,
                                                   bool allow_gzip);

// Reads exactly n bytes or fails with kCorruption "<path>: truncated ...
// (<what>: expected n bytes, got k)".
Status ReadExact(ByteReader* r, void* buf, int64_t n, const std::string& what);

// The correctly rounded float of byte / 255 for every byte value (the one
// pixel scaling formula of all loaders).
const float* ByteToUnitTable();

}  // namespace xw::data_internal

#endif  // XWIRES_SRC_DATA_BYTE_READER_H_
