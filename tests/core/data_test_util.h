// Test helpers for the data loaders: a scratch directory and writers for the
// official file formats (plain and gzip).
#ifndef XWIRES_TESTS_CORE_DATA_TEST_UTIL_H_
#define XWIRES_TESTS_CORE_DATA_TEST_UTIL_H_

#include <unistd.h>
#include <zlib.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace xw::testing {

using Bytes = std::vector<unsigned char>;

// A fresh directory under the system temp dir, removed with its contents.
class ScratchDir {
 public:
  ScratchDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = std::filesystem::temp_directory_path() /
            ("xwires_data_" + std::string(info->test_suite_name()) + "_" +
             info->name() + "_" + std::to_string(::getpid()));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string File(const std::string& name) const {
    return (path_ / name).string();
  }
  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

inline void WriteFile(const std::string& path, const Bytes& bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(bytes.data()),
          static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(f.good()) << path;
}

inline void WriteGzFile(const std::string& path, const Bytes& bytes) {
  gzFile f = gzopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr) << path;
  if (!bytes.empty()) {
    ASSERT_EQ(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())),
              static_cast<int>(bytes.size()));
  }
  ASSERT_EQ(gzclose(f), Z_OK);
}

inline Bytes ReadFileBytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(f),
               std::istreambuf_iterator<char>());
}

inline void PutBigEndian32(Bytes* b, uint32_t v) {
  for (int s = 24; s >= 0; s -= 8)
    b->push_back(static_cast<unsigned char>(v >> s));
}

// Deterministic pixel byte of image i, position p (covers all 256 values).
inline unsigned char PixelByte(int64_t i, int64_t p) {
  return static_cast<unsigned char>((i * 37 + p * 11 + (p >> 8)) & 0xff);
}

// An IDX3 image file: magic 0x00000803, dims n, rows, cols; `n_data` images
// of data (defaults to n; fewer makes a truncated file).
inline Bytes IdxImages(uint32_t n, uint32_t rows, uint32_t cols,
                       int64_t n_data = -1, uint32_t magic = 0x00000803) {
  Bytes b;
  PutBigEndian32(&b, magic);
  PutBigEndian32(&b, n);
  PutBigEndian32(&b, rows);
  PutBigEndian32(&b, cols);
  if (n_data < 0) n_data = n;
  for (int64_t i = 0; i < n_data; ++i) {
    for (int64_t p = 0; p < int64_t{rows} * cols; ++p)
      b.push_back(PixelByte(i, p));
  }
  return b;
}

inline Bytes IdxLabels(const std::vector<int>& labels,
                       uint32_t magic = 0x00000801) {
  Bytes b;
  PutBigEndian32(&b, magic);
  PutBigEndian32(&b, static_cast<uint32_t>(labels.size()));
  for (int l : labels) b.push_back(static_cast<unsigned char>(l));
  return b;
}

// CIFAR records: label byte(s) then 3072 CHW pixel bytes; `first` offsets the
// pixel pattern so records in different files differ.
inline Bytes CifarRecords(const std::vector<std::vector<int>>& label_bytes,
                          int64_t first) {
  Bytes b;
  for (size_t r = 0; r < label_bytes.size(); ++r) {
    for (int l : label_bytes[r]) b.push_back(static_cast<unsigned char>(l));
    for (int64_t p = 0; p < 3072; ++p) {
      b.push_back(PixelByte(first + static_cast<int64_t>(r), p));
    }
  }
  return b;
}

// The one pixel scaling formula, computed independently of the library.
inline float Scaled(unsigned char b) { return static_cast<float>(b) / 255.0f; }

}  // namespace xw::testing

#endif  // XWIRES_TESTS_CORE_DATA_TEST_UTIL_H_
