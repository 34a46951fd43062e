// MNIST / Fashion-MNIST IDX loader: plain and gzip, values, limits, errors.
#include <bit>

#include "data_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "xwires/core/data.h"

namespace xw {
namespace {

using testing::Bytes;
using ::testing::HasSubstr;
using testing::IdxImages;
using testing::IdxLabels;
using testing::PixelByte;
using testing::ReadFileBytes;
using testing::Scaled;
using testing::ScratchDir;
using testing::WriteFile;
using testing::WriteGzFile;

void ExpectIdxPixels(const ImageDataset& ds, int64_t pixels) {
  for (int64_t i = 0; i < ds.size(); ++i) {
    for (int64_t p = 0; p < pixels; ++p) {
      ASSERT_EQ(std::bit_cast<uint32_t>(ds.images[i * pixels + p]),
                std::bit_cast<uint32_t>(Scaled(PixelByte(i, p))))
          << "image " << i << " pixel " << p;
    }
  }
}

TEST(IdxTest, LoadsPlainFiles) {
  ScratchDir dir;
  WriteFile(dir.File("img"), IdxImages(4, 5, 7));
  WriteFile(dir.File("lab"), IdxLabels({3, 1, 4, 1}));
  auto r = LoadIdx(dir.File("img"), dir.File("lab"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->images.shape(), (Shape{4, 1, 5, 7}));
  EXPECT_EQ(r->labels, (std::vector<int32_t>{3, 1, 4, 1}));
  EXPECT_EQ(r->num_classes, 10);
  ExpectIdxPixels(*r, 35);
  EXPECT_EQ(r->images.at(2, 0, 3, 6), Scaled(PixelByte(2, 3 * 7 + 6)));
}

TEST(IdxTest, LoadsGzipFilesLikePlainOnes) {
  ScratchDir dir;
  WriteFile(dir.File("img"), IdxImages(6, 28, 28));
  WriteFile(dir.File("lab"), IdxLabels({0, 1, 2, 3, 4, 9}));
  WriteGzFile(dir.File("img.gz"), IdxImages(6, 28, 28));
  WriteGzFile(dir.File("lab.gz"), IdxLabels({0, 1, 2, 3, 4, 9}));
  auto plain = LoadIdx(dir.File("img"), dir.File("lab"));
  auto gz = LoadIdx(dir.File("img.gz"), dir.File("lab.gz"));
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  ASSERT_TRUE(gz.ok()) << gz.status().ToString();
  EXPECT_EQ(gz->images.shape(), (Shape{6, 1, 28, 28}));
  EXPECT_TRUE(gz->images.BitwiseEqual(plain->images));
  EXPECT_EQ(gz->labels, plain->labels);
  ExpectIdxPixels(*gz, 784);
}

TEST(IdxTest, LimitKeepsFirstItems) {
  ScratchDir dir;
  WriteGzFile(dir.File("img.gz"), IdxImages(5, 3, 3));
  WriteFile(dir.File("lab"), IdxLabels({5, 6, 7, 8, 9}));
  auto r = LoadIdx(dir.File("img.gz"), dir.File("lab"), 2);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->images.shape(), (Shape{2, 1, 3, 3}));
  EXPECT_EQ(r->labels, (std::vector<int32_t>{5, 6}));
  ExpectIdxPixels(*r, 9);
  auto big = LoadIdx(dir.File("img.gz"), dir.File("lab"), 100);
  ASSERT_TRUE(big.ok());
  EXPECT_EQ(big->size(), 5);
}

TEST(IdxTest, BadMagicIsNamed) {
  ScratchDir dir;
  WriteFile(dir.File("img"), IdxImages(2, 2, 2, -1, 0x00000801));
  WriteFile(dir.File("lab"), IdxLabels({1, 2}));
  auto r = LoadIdx(dir.File("img"), dir.File("lab"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kCorruption);
  EXPECT_THAT(r.status().message(), HasSubstr(dir.File("img")));
  EXPECT_THAT(r.status().message(), HasSubstr("bad magic number 0x00000801"));
  EXPECT_THAT(r.status().message(), HasSubstr("expected 0x00000803"));

  WriteFile(dir.File("img"), IdxImages(2, 2, 2));
  WriteGzFile(dir.File("lab.gz"), IdxLabels({1, 2}, 0x00000803));
  auto r2 = LoadIdx(dir.File("img"), dir.File("lab.gz"));
  ASSERT_FALSE(r2.ok());
  EXPECT_THAT(r2.status().message(), HasSubstr(dir.File("lab.gz")));
  EXPECT_THAT(r2.status().message(), HasSubstr("bad magic number 0x00000803"));
}

TEST(IdxTest, TruncatedPlainFileIsNamedAndLeftIntact) {
  ScratchDir dir;
  Bytes img = IdxImages(3, 4, 4, 2);  // header promises 3 images, holds 2
  WriteFile(dir.File("img"), img);
  WriteFile(dir.File("lab"), IdxLabels({1, 2, 3}));
  auto r = LoadIdx(dir.File("img"), dir.File("lab"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kCorruption);
  EXPECT_THAT(r.status().message(), HasSubstr(dir.File("img")));
  EXPECT_THAT(r.status().message(), HasSubstr("truncated"));
  EXPECT_THAT(r.status().message(), HasSubstr("header promises 48 data bytes"));
  EXPECT_EQ(ReadFileBytes(dir.File("img")), img);
  // A file cut inside its header.
  WriteFile(dir.File("short"), Bytes{0, 0, 8});
  auto h = LoadIdx(dir.File("short"), dir.File("lab"));
  ASSERT_FALSE(h.ok());
  EXPECT_THAT(h.status().message(), HasSubstr(dir.File("short")));
  EXPECT_THAT(h.status().message(), HasSubstr("truncated"));
}

TEST(IdxTest, TruncatedGzipFileIsNamed) {
  ScratchDir dir;
  WriteGzFile(dir.File("img.gz"), IdxImages(3, 4, 4, 2));
  WriteGzFile(dir.File("lab.gz"), IdxLabels({1, 2, 3}));
  auto r = LoadIdx(dir.File("img.gz"), dir.File("lab.gz"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kCorruption);
  EXPECT_THAT(r.status().message(), HasSubstr(dir.File("img.gz")));
  EXPECT_THAT(r.status().message(), HasSubstr("truncated"));
  EXPECT_THAT(r.status().message(), HasSubstr("expected 48 bytes, got 32"));
}

TEST(IdxTest, CorruptGzipStreamIsNamed) {
  ScratchDir dir;
  WriteGzFile(dir.File("img.gz"), IdxImages(50, 8, 8));
  Bytes gz = ReadFileBytes(dir.File("img.gz"));
  gz.resize(gz.size() / 2);  // cut the deflate stream mid-way
  WriteFile(dir.File("cut.gz"), gz);
  WriteFile(dir.File("lab"), IdxLabels(std::vector<int>(50, 1)));
  auto r = LoadIdx(dir.File("cut.gz"), dir.File("lab"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kCorruption);
  EXPECT_THAT(r.status().message(), HasSubstr(dir.File("cut.gz")));
}

TEST(IdxTest, CountMismatchNamesBothFiles) {
  ScratchDir dir;
  WriteFile(dir.File("img"), IdxImages(3, 2, 2));
  WriteFile(dir.File("lab"), IdxLabels({1, 2}));
  auto r = LoadIdx(dir.File("img"), dir.File("lab"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kCorruption);
  EXPECT_THAT(r.status().message(), HasSubstr("image/label count mismatch"));
  EXPECT_THAT(r.status().message(),
              HasSubstr(dir.File("img") + " holds 3 images"));
  EXPECT_THAT(r.status().message(),
              HasSubstr(dir.File("lab") + " holds 2 labels"));
}

TEST(IdxTest, LabelOutOfRangeIsNamed) {
  ScratchDir dir;
  WriteFile(dir.File("img"), IdxImages(3, 2, 2));
  WriteFile(dir.File("lab"), IdxLabels({1, 10, 2}));
  auto r = LoadIdx(dir.File("img"), dir.File("lab"));
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr(dir.File("lab")));
  EXPECT_THAT(r.status().message(),
              HasSubstr("label 10 of item 1 out of range [0, 10)"));
}

TEST(IdxTest, MissingFileIsNamed) {
  ScratchDir dir;
  WriteFile(dir.File("img"), IdxImages(1, 2, 2));
  auto r = LoadIdx(dir.File("img"), dir.File("nolabels"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kNotFound);
  EXPECT_THAT(r.status().message(), HasSubstr(dir.File("nolabels")));
}

TEST(IdxTest, SpecFindsPlainAndGzipNames) {
  ScratchDir dir;
  WriteGzFile(dir.File("train-images-idx3-ubyte.gz"), IdxImages(4, 28, 28));
  WriteFile(dir.File("train-labels-idx1-ubyte"), IdxLabels({1, 2, 3, 4}));
  WriteFile(dir.File("t10k-images-idx3-ubyte"), IdxImages(2, 28, 28));
  WriteGzFile(dir.File("t10k-labels-idx1-ubyte.gz"), IdxLabels({9, 0}));
  for (const char* name : {"mnist", "fashion-mnist"}) {
    DataOptions opts;
    opts.train_limit = 3;
    auto r = LoadDataSpec(std::string(name) + ":" + dir.path(), opts);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->name, name);
    EXPECT_EQ(r->train.images.shape(), (Shape{3, 1, 28, 28}));
    EXPECT_EQ(r->train.labels, (std::vector<int32_t>{1, 2, 3}));
    EXPECT_EQ(r->test.labels, (std::vector<int32_t>{9, 0}));
    ExpectIdxPixels(r->test, 784);
  }
}

TEST(DataSpecTest, UnknownPrefixAndMissingDirectory) {
  auto r = LoadDataSpec("imagenet:/tmp", DataOptions{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument);
  EXPECT_THAT(r.status().message(),
              HasSubstr("unknown dataset spec 'imagenet:/tmp'"));
  ScratchDir dir;
  const std::string missing = dir.File("does-not-exist");
  auto m = LoadDataSpec("mnist:" + missing, DataOptions{});
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), Status::Code::kNotFound);
  EXPECT_THAT(m.status().message(), HasSubstr(missing));
  EXPECT_THAT(m.status().message(), HasSubstr("data directory not found"));
  auto e = LoadDataSpec("cifar10", DataOptions{});
  ASSERT_FALSE(e.ok());
  EXPECT_THAT(e.status().message(), HasSubstr("names no directory"));
}

}  // namespace
}  // namespace xw
