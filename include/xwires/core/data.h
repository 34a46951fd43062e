// Image classification datasets: file loaders (CIFAR-10/100 binary, MNIST and
// Fashion-MNIST IDX, plain or gzip) and the built-in synthetic dataset that
// is the product's default.
//
// Every loader produces an ImageDataset in one layout and one pixel scaling:
//   images: Tensor [N, C, H, W] float32 (NCHW), pixel
//           x = static_cast<float>(byte) / 255.0f
//           (one IEEE single-precision division, correctly rounded; no mean
//           or std normalisation is applied here),
//   labels: N int32 values in [0, num_classes).
// Records keep their file order; limits keep the FIRST N records of a split
// and are applied while reading (the rest of the file is not read).
//
// Failures are returned as Status, never thrown. Messages name the file and
// the problem: missing file or directory (kNotFound), truncated file or a size
// that is not a multiple of the record size, bad IDX magic number, label out
// of range, image/label count mismatch (kCorruption), unknown spec prefix
// (kInvalidArgument).
//
// Thread-safety: all functions are reentrant; they share no state. Loaded
// datasets are plain values (copyable; move them to avoid copies).
#ifndef XWIRES_CORE_DATA_H_
#define XWIRES_CORE_DATA_H_

#include <cstdint>
#include <string>
#include <vector>

#include "xwires/core/status.h"
#include "xwires/core/tensor.h"

namespace xw {

// One split of an image classification dataset.
struct ImageDataset {
  Tensor images;                // [N, C, H, W], values in [0, 1]
  std::vector<int32_t> labels;  // [N], each in [0, num_classes)
  int num_classes = 0;

  int64_t size() const { return static_cast<int64_t>(labels.size()); }
  int64_t channels() const { return images.rank() == 4 ? images.dim(1) : 0; }
  int64_t height() const { return images.rank() == 4 ? images.dim(2) : 0; }
  int64_t width() const { return images.rank() == 4 ? images.dim(3) : 0; }
};

struct DataSplits {
  ImageDataset train;
  ImageDataset test;
  std::string
      name;  // "synthetic", "cifar10", "cifar100", "mnist", "fashion-mnist"
};

struct DataOptions {
  // -1: the whole split. Otherwise keep the first N records in file order
  // (for "synthetic": generate exactly N images; image i does not depend on
  // N, so a smaller set is a prefix of a larger one).
  int64_t train_limit = -1;
  int64_t test_limit = -1;
  // Seed of the synthetic generator; ignored by file datasets.
  uint64_t seed = 0;
};

// Loads a dataset named by `spec`:
//   "synthetic" (also ""): MakeSynthetic, default sizes unless limits given,
//   "cifar10:DIR"   DIR/data_batch_1.bin .. data_batch_5.bin,
//   DIR/test_batch.bin "cifar100:DIR"  DIR/train.bin, DIR/test.bin (fine
//   labels, 100 classes) "mnist:DIR", "fashion-mnist:DIR"
//                   DIR/train-images-idx3-ubyte, train-labels-idx1-ubyte,
//                   t10k-images-idx3-ubyte, t10k-labels-idx1-ubyte; each name
//                   may instead carry a ".gz" suffix (the plain file wins).
Result<DataSplits> LoadDataSpec(const std::string& spec,
                                const DataOptions& opts);

// CIFAR binary batches, concatenated in the order given. Records are one
// label byte (CIFAR-10) or two (CIFAR-100: coarse then fine; the fine label
// is kept) followed by 3072 pixel bytes in CHW order (3x32x32).
// num_classes is 10 or 100. `limit` >= 0 keeps the first `limit` records
// across all files (later files are then not opened).
Result<ImageDataset> LoadCifarBinary(const std::vector<std::string>& files,
                                     bool cifar100, int64_t limit = -1);

// An IDX image file (magic 0x00000803, big-endian dims N, rows, cols) and its
// label file (magic 0x00000801, dim N), each plain or gzip (detected from the
// content, not the name). Images become [N, 1, rows, cols], num_classes 10.
Result<ImageDataset> LoadIdx(const std::string& images_path,
                             const std::string& labels_path,
                             int64_t limit = -1);

// Built-in synthetic dataset: 10 classes of 3x32x32 procedural images (shapes,
// textures, colour tendencies, clutter and noise; the exact generator is
// documented in src/data/synthetic.cc and docs/data.md). Deterministic:
// a pure function of (seed, split, index), identical for any thread count.
// Labels are balanced: each consecutive block of 10 images holds every class
// once, in a seeded order.
struct SyntheticOptions {
  static constexpr int64_t kDefaultTrainSize = 5000;
  static constexpr int64_t kDefaultTestSize = 1000;
  int64_t train_size = kDefaultTrainSize;
  int64_t test_size = kDefaultTestSize;
  uint64_t seed = 0;
};
DataSplits MakeSynthetic(const SyntheticOptions& opts);

// Copies the samples at `indices` (each in [0, ds.size())) into *images
// (resized to [n, C, H, W]) and *labels (resized to n), in index order.
// Parallel and deterministic. Used by trainers to assemble mini-batches.
void GatherBatch(const ImageDataset& ds, const int64_t* indices, int64_t n,
                 Tensor* images, std::vector<int32_t>* labels);

}  // namespace xw

#endif  // XWIRES_CORE_DATA_H_
