// CIFAR-10 / CIFAR-100 binary batches
// (https://www.cs.toronto.edu/~kriz/cifar.html).
//
// A batch file is a plain concatenation of fixed-size records: the label
// byte(s) then 3072 pixel bytes, 1024 per channel (R, G, B), each channel
// row-major 32x32, which is already NCHW for one image. There is no header,
// so the only structural checks are the size (a whole number of records) and
// the label range.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "byte_reader.h"
#include "xwires/core/data.h"
#include "xwires/core/parallel.h"

namespace xw {
namespace {

constexpr int64_t kCifarPixels = 3 * 32 * 32;
// Records per buffered read (about 3 MB).
constexpr int64_t kRecordsPerRead = 1024;

struct CifarLayout {
  int64_t label_bytes;
  int64_t record;
  int num_classes;
};

// Opens every file and counts records, so the tensor is allocated once and a
// malformed file is reported before any pixel work.
Result<std::vector<int64_t>> CountRecords(const std::vector<std::string>& files,
                                          const CifarLayout& layout,
                                          int64_t limit) {
  std::vector<int64_t> counts;
  int64_t total = 0;
  for (const std::string& path : files) {
    if (limit >= 0 && total >= limit) break;  // later files are not needed
    XW_ASSIGN_OR_RETURN(
        auto reader, data_internal::OpenByteReader(path, /*allow_gzip=*/false));
    const int64_t size = reader->KnownSize();
    if (size % layout.record != 0) {
      return Status::Corruption(
          path + ": file size " + std::to_string(size) +
          " is not a multiple of the record size " +
          std::to_string(layout.record) + " (" +
          std::to_string(layout.label_bytes) + " label byte(s) + " +
          std::to_string(kCifarPixels) +
          " pixels); truncated file or wrong CIFAR variant");
    }
    int64_t n = size / layout.record;
    if (limit >= 0) n = std::min(n, limit - total);
    counts.push_back(n);
    total += n;
  }
  return counts;
}

// Converts `n` raw records in buf into samples [first, first + n).
Status DecodeRecords(const std::string& path, const unsigned char* buf,
                     int64_t n, int64_t first, int64_t first_in_file,
                     const CifarLayout& layout, ImageDataset* ds) {
  for (int64_t i = 0; i < n; ++i) {
    const unsigned char* rec = buf + i * layout.record;
    if (layout.label_bytes == 2 && rec[0] >= 20) {
      return Status::Corruption(
          path + ": record " + std::to_string(first_in_file + i) +
          ": coarse label " + std::to_string(rec[0]) + " out of range [0, 20)");
    }
    const int label = rec[layout.label_bytes - 1];
    if (label >= layout.num_classes) {
      return Status::Corruption(path + ": record " +
                                std::to_string(first_in_file + i) + ": label " +
                                std::to_string(label) + " out of range [0, " +
                                std::to_string(layout.num_classes) + ")");
    }
    ds->labels[first + i] = label;
  }
  const float* unit = data_internal::ByteToUnitTable();
  float* out = ds->images.data() + first * kCifarPixels;
  ParallelFor(n, GrainFor(n, 16), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const unsigned char* px = buf + i * layout.record + layout.label_bytes;
      float* dst = out + i * kCifarPixels;
      for (int64_t p = 0; p < kCifarPixels; ++p) dst[p] = unit[px[p]];
    }
  });
  return Status::OK();
}

}  // namespace

Result<ImageDataset> LoadCifarBinary(const std::vector<std::string>& files,
                                     bool cifar100, int64_t limit) {
  const CifarLayout layout{cifar100 ? 2 : 1, (cifar100 ? 2 : 1) + kCifarPixels,
                           cifar100 ? 100 : 10};
  if (files.empty())
    return Status::InvalidArgument("LoadCifarBinary: no files given");
  XW_ASSIGN_OR_RETURN(std::vector<int64_t> counts,
                      CountRecords(files, layout, limit));
  int64_t total = 0;
  for (int64_t c : counts) total += c;

  ImageDataset ds;
  ds.num_classes = layout.num_classes;
  ds.images = Tensor(Shape{total, 3, 32, 32});
  ds.labels.assign(static_cast<size_t>(total), 0);
  std::vector<unsigned char> buf(
      static_cast<size_t>(kRecordsPerRead * layout.record));
  int64_t next = 0;
  for (size_t f = 0; f < counts.size(); ++f) {
    XW_ASSIGN_OR_RETURN(auto reader, data_internal::OpenByteReader(
                                         files[f], /*allow_gzip=*/false));
    for (int64_t done = 0; done < counts[f];) {
      const int64_t n = std::min(kRecordsPerRead, counts[f] - done);
      XW_RETURN_IF_ERROR(
          data_internal::ReadExact(reader.get(), buf.data(), n * layout.record,
                                   "records " + std::to_string(done) + ".." +
                                       std::to_string(done + n - 1)));
      XW_RETURN_IF_ERROR(
          DecodeRecords(files[f], buf.data(), n, next, done, layout, &ds));
      done += n;
      next += n;
    }
  }
  return ds;
}

}  // namespace xw
