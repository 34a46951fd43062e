// LoadDataSpec: maps a dataset spec string to the loaders; GatherBatch.
#include <cstring>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "xwires/core/data.h"
#include "xwires/core/parallel.h"

namespace xw {
namespace {

Status CheckDirectory(const std::string& dir, const std::string& spec) {
  std::error_code ec;
  if (dir.empty()) {
    return Status::InvalidArgument("dataset spec '" + spec +
                                   "' names no directory");
  }
  if (!std::filesystem::exists(dir, ec)) {
    return Status::NotFound(dir + ": data directory not found (dataset spec '" +
                            spec + "')");
  }
  if (!std::filesystem::is_directory(dir, ec)) {
    return Status::InvalidArgument(dir + ": not a directory (dataset spec '" +
                                   spec + "')");
  }
  return Status::OK();
}

// DIR/name if it exists, else DIR/name.gz if that exists, else DIR/name (so
// the loader's "file not found" names the canonical file).
std::string IdxPath(const std::string& dir, const std::string& name) {
  const std::filesystem::path plain = std::filesystem::path(dir) / name;
  std::error_code ec;
  if (std::filesystem::exists(plain, ec)) return plain.string();
  const std::filesystem::path gz = std::filesystem::path(dir) / (name + ".gz");
  if (std::filesystem::exists(gz, ec)) return gz.string();
  return plain.string();
}

Result<DataSplits> LoadCifarDir(const std::string& dir, bool cifar100,
                                const DataOptions& opts) {
  const std::filesystem::path d(dir);
  std::vector<std::string> train, test;
  if (cifar100) {
    train = {(d / "train.bin").string()};
    test = {(d / "test.bin").string()};
  } else {
    for (int i = 1; i <= 5; ++i) {
      train.push_back(
          (d / ("data_batch_" + std::to_string(i) + ".bin")).string());
    }
    test = {(d / "test_batch.bin").string()};
  }
  DataSplits splits;
  splits.name = cifar100 ? "cifar100" : "cifar10";
  XW_ASSIGN_OR_RETURN(splits.train,
                      LoadCifarBinary(train, cifar100, opts.train_limit));
  XW_ASSIGN_OR_RETURN(splits.test,
                      LoadCifarBinary(test, cifar100, opts.test_limit));
  return splits;
}

Result<DataSplits> LoadIdxDir(const std::string& dir, const std::string& name,
                              const DataOptions& opts) {
  DataSplits splits;
  splits.name = name;
  XW_ASSIGN_OR_RETURN(
      splits.train,
      LoadIdx(IdxPath(dir, "train-images-idx3-ubyte"),
              IdxPath(dir, "train-labels-idx1-ubyte"), opts.train_limit));
  XW_ASSIGN_OR_RETURN(
      splits.test,
      LoadIdx(IdxPath(dir, "t10k-images-idx3-ubyte"),
              IdxPath(dir, "t10k-labels-idx1-ubyte"), opts.test_limit));
  return splits;
}

}  // namespace

Result<DataSplits> LoadDataSpec(const std::string& spec,
                                const DataOptions& opts) {
  if (spec.empty() || spec == "synthetic") {
    SyntheticOptions so;
    if (opts.train_limit >= 0) so.train_size = opts.train_limit;
    if (opts.test_limit >= 0) so.test_size = opts.test_limit;
    so.seed = opts.seed;
    return MakeSynthetic(so);
  }
  const size_t colon = spec.find(':');
  const std::string prefix = spec.substr(0, colon);
  const std::string dir =
      colon == std::string::npos ? "" : spec.substr(colon + 1);
  const bool known = prefix == "cifar10" || prefix == "cifar100" ||
                     prefix == "mnist" || prefix == "fashion-mnist";
  if (!known) {
    return Status::InvalidArgument(
        "unknown dataset spec '" + spec +
        "' (expected synthetic, cifar10:DIR, cifar100:DIR, mnist:DIR or "
        "fashion-mnist:DIR)");
  }
  XW_RETURN_IF_ERROR(CheckDirectory(dir, spec));
  if (prefix == "cifar10" || prefix == "cifar100") {
    return LoadCifarDir(dir, prefix == "cifar100", opts);
  }
  return LoadIdxDir(dir, prefix, opts);
}

void GatherBatch(const ImageDataset& ds, const int64_t* indices, int64_t n,
                 Tensor* images, std::vector<int32_t>* labels) {
  const Shape& s = ds.images.shape();
  const int64_t per = s[1] * s[2] * s[3];
  images->Resize(Shape{n, s[1], s[2], s[3]});
  labels->resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) (*labels)[i] = ds.labels[indices[i]];
  const float* src = ds.images.data();
  float* dst = images->data();
  ParallelFor(n, GrainFor(n, 8), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      std::memcpy(dst + i * per, src + indices[i] * per, sizeof(float) * per);
    }
  });
}

}  // namespace xw
