// MNIST / Fashion-MNIST IDX files (http://yann.lecun.com/exdb/mnist/).
//
// An IDX file starts with a big-endian magic word (0x00000803: unsigned byte
// data with 3 dimensions; 0x00000801: 1 dimension), then one big-endian
// 32-bit size per dimension, then the data bytes in row-major order. The
// official downloads are gzip-compressed; both forms are accepted and the
// compression is detected from the content.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "byte_reader.h"
#include "xwires/core/data.h"
#include "xwires/core/parallel.h"

namespace xw {
namespace {

constexpr uint32_t kImagesMagic = 0x00000803;
constexpr uint32_t kLabelsMagic = 0x00000801;
constexpr int kIdxClasses = 10;
constexpr int64_t kMaxPayload = int64_t{1} << 31;

uint32_t BigEndian32(const unsigned char* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) |
         (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

std::string Hex32(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "0x%08x", v);
  return buf;
}

// Reads the magic word and `dims` sizes; checks the magic and, for a plain
// file, that the size matches what the header promises.
Result<std::vector<int64_t>> ReadIdxHeader(data_internal::ByteReader* r,
                                           uint32_t magic, int dims,
                                           const char* kind) {
  std::array<unsigned char, 16> head{};
  const int64_t head_bytes = 4 + 4 * dims;
  XW_RETURN_IF_ERROR(
      data_internal::ReadExact(r, head.data(), head_bytes, "IDX header"));
  const uint32_t got = BigEndian32(head.data());
  if (got != magic) {
    return Status::Corruption(r->path() + ": bad magic number " + Hex32(got) +
                              " for an IDX " + kind + " file (expected " +
                              Hex32(magic) + ")");
  }
  std::vector<int64_t> sizes(dims);
  int64_t payload = 1;
  for (int d = 0; d < dims; ++d) {
    sizes[d] = BigEndian32(head.data() + 4 + 4 * d);
    payload *= sizes[d];
    // Dimensions come from the file: refuse absurd ones before allocating.
    if (payload > kMaxPayload) {
      return Status::Corruption(
          r->path() +
          ": implausible IDX header: dimensions promise more than " +
          std::to_string(kMaxPayload) + " data bytes");
    }
  }
  const int64_t known = r->KnownSize();
  if (known >= 0 && known != head_bytes + payload) {
    return Status::Corruption(
        r->path() + ": " +
        (known < head_bytes + payload ? "truncated file" : "trailing bytes") +
        ": header promises " + std::to_string(payload) +
        " data bytes, file holds " + std::to_string(known - head_bytes));
  }
  return sizes;
}

}  // namespace

Result<ImageDataset> LoadIdx(const std::string& images_path,
                             const std::string& labels_path, int64_t limit) {
  XW_ASSIGN_OR_RETURN(auto images,
                      data_internal::OpenByteReader(images_path, true));
  XW_ASSIGN_OR_RETURN(auto labels,
                      data_internal::OpenByteReader(labels_path, true));
  XW_ASSIGN_OR_RETURN(std::vector<int64_t> idims,
                      ReadIdxHeader(images.get(), kImagesMagic, 3, "images"));
  XW_ASSIGN_OR_RETURN(std::vector<int64_t> ldims,
                      ReadIdxHeader(labels.get(), kLabelsMagic, 1, "labels"));
  if (idims[0] != ldims[0]) {
    return Status::Corruption("image/label count mismatch: " + images_path +
                              " holds " + std::to_string(idims[0]) +
                              " images, " + labels_path + " holds " +
                              std::to_string(ldims[0]) + " labels");
  }
  if (idims[1] == 0 || idims[2] == 0) {
    return Status::Corruption(images_path + ": empty image dimensions " +
                              std::to_string(idims[1]) + "x" +
                              std::to_string(idims[2]));
  }
  const int64_t n = limit >= 0 ? std::min(limit, idims[0]) : idims[0];
  const int64_t pixels = idims[1] * idims[2];

  ImageDataset ds;
  ds.num_classes = kIdxClasses;
  std::vector<unsigned char> lbuf(static_cast<size_t>(n));
  XW_RETURN_IF_ERROR(
      data_internal::ReadExact(labels.get(), lbuf.data(), n, "labels"));
  ds.labels.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    if (lbuf[i] >= kIdxClasses) {
      return Status::Corruption(labels_path + ": label " +
                                std::to_string(lbuf[i]) + " of item " +
                                std::to_string(i) + " out of range [0, 10)");
    }
    ds.labels[i] = lbuf[i];
  }
  std::vector<unsigned char> ibuf(static_cast<size_t>(n * pixels));
  XW_RETURN_IF_ERROR(data_internal::ReadExact(images.get(), ibuf.data(),
                                              n * pixels, "image data"));
  ds.images = Tensor(Shape{n, 1, idims[1], idims[2]});
  const float* unit = data_internal::ByteToUnitTable();
  float* out = ds.images.data();
  const int64_t total = n * pixels;
  ParallelFor(total, GrainFor(total, 4096), [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) out[p] = unit[ibuf[p]];
  });
  return ds;
}

}  // namespace xw
