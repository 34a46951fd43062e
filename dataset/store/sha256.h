// SHA-256 of bytes and files, as lowercase hex, through OpenSSL's EVP API.
//
// Part of the store (the bottom layer) so that both the store, which checks
// the hashes recorded with stored results, and the bundle layer, which checks
// every file of an untrusted contribution against its manifest and names a
// bundle by the hash of its archive, can use it.
// A Sha256 object is not thread-safe; separate objects are independent.
#ifndef XWIRES_DATASET_STORE_SHA256_H_
#define XWIRES_DATASET_STORE_SHA256_H_

#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "xwires/core/status.h"

namespace xw {

// Incremental hasher: Update() any number of times, then Finish() once.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(Sha256&&) noexcept;
  Sha256& operator=(Sha256&&) noexcept;

  void Update(const void* data, size_t size);
  void Update(std::string_view bytes) { Update(bytes.data(), bytes.size()); }
  // 64 lowercase hex digits. The object must not be used afterwards.
  std::string Finish();

 private:
  struct Ctx;
  std::unique_ptr<Ctx> ctx_;
};

std::string Sha256Hex(std::string_view bytes);
// Streams the file; IOError names the path when it cannot be read.
Result<std::string> Sha256File(const std::filesystem::path& path);
// True for exactly 64 lowercase hex digits.
bool IsSha256Hex(std::string_view s);

}  // namespace xw

#endif  // XWIRES_DATASET_STORE_SHA256_H_
