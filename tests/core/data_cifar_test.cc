// CIFAR-10/100 binary loader: values, labels, shapes, limits, scaling, errors.
#include <bit>
#include <cstring>

#include "data_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "xwires/core/data.h"

namespace xw {
namespace {

using testing::Bytes;
using testing::CifarRecords;
using ::testing::HasSubstr;
using testing::PixelByte;
using testing::ReadFileBytes;
using testing::Scaled;
using testing::ScratchDir;
using testing::WriteFile;

// Every pixel of sample `i` equals Scaled(PixelByte(first + i, p)), bitwise.
void ExpectPixels(const ImageDataset& ds, int64_t i, int64_t pattern_index) {
  const float* px = ds.images.data() + i * 3072;
  for (int64_t p = 0; p < 3072; ++p) {
    const float want = Scaled(PixelByte(pattern_index, p));
    ASSERT_EQ(std::bit_cast<uint32_t>(px[p]), std::bit_cast<uint32_t>(want))
        << "sample " << i << " pixel " << p;
  }
}

TEST(CifarTest, Cifar10ConcatenatesFilesInOrder) {
  ScratchDir dir;
  WriteFile(dir.File("a.bin"), CifarRecords({{3}, {0}, {9}}, 0));
  WriteFile(dir.File("b.bin"), CifarRecords({{7}, {1}}, 3));
  auto r = LoadCifarBinary({dir.File("a.bin"), dir.File("b.bin")}, false);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->images.shape(), (Shape{5, 3, 32, 32}));
  EXPECT_EQ(r->labels, (std::vector<int32_t>{3, 0, 9, 7, 1}));
  EXPECT_EQ(r->num_classes, 10);
  for (int64_t i = 0; i < 5; ++i) ExpectPixels(*r, i, i);
  // Layout is CHW: channel 1 (green), row 2, column 5 of sample 4.
  EXPECT_EQ(r->images.at(4, 1, 2, 5), Scaled(PixelByte(4, 1024 + 2 * 32 + 5)));
}

TEST(CifarTest, ScalingFormulaIsBitExact) {
  // Known bits of byte / 255.0f (correctly rounded IEEE single division).
  ScratchDir dir;
  Bytes rec(3073, 0);
  rec[0] = 2;
  const unsigned char bytes[] = {0, 1, 3, 51, 128, 254, 255};
  const uint32_t bits[] = {0x00000000, 0x3b808081, 0x3c40c0c1, 0x3e4ccccd,
                           0x3f008081, 0x3f7efeff, 0x3f800000};
  for (int k = 0; k < 7; ++k) rec[1 + k] = bytes[k];
  WriteFile(dir.File("one.bin"), rec);
  auto r = LoadCifarBinary({dir.File("one.bin")}, false);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  for (int k = 0; k < 7; ++k) {
    EXPECT_EQ(std::bit_cast<uint32_t>(r->images[k]), bits[k])
        << "byte " << int{bytes[k]};
  }
}

TEST(CifarTest, Cifar100KeepsFineLabel) {
  ScratchDir dir;
  WriteFile(dir.File("train.bin"),
            CifarRecords({{19, 99}, {0, 42}, {5, 0}}, 10));
  auto r = LoadCifarBinary({dir.File("train.bin")}, true);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->labels, (std::vector<int32_t>{99, 42, 0}));
  EXPECT_EQ(r->num_classes, 100);
  for (int64_t i = 0; i < 3; ++i) ExpectPixels(*r, i, 10 + i);
}

TEST(CifarTest, LimitKeepsFirstRecordsAndSkipsLaterFiles) {
  ScratchDir dir;
  WriteFile(dir.File("a.bin"), CifarRecords({{1}, {2}, {3}}, 0));
  WriteFile(dir.File("b.bin"), CifarRecords({{4}, {5}}, 3));
  auto r = LoadCifarBinary({dir.File("a.bin"), dir.File("b.bin")}, false, 4);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->labels, (std::vector<int32_t>{1, 2, 3, 4}));
  EXPECT_EQ(r->images.dim(0), 4);
  ExpectPixels(*r, 3, 3);
  // With limit 2 the (missing) second file is never opened.
  auto r2 =
      LoadCifarBinary({dir.File("a.bin"), dir.File("missing.bin")}, false, 2);
  ASSERT_TRUE(r2.ok()) << r2.status().ToString();
  EXPECT_EQ(r2->labels, (std::vector<int32_t>{1, 2}));
  auto r0 = LoadCifarBinary({dir.File("a.bin")}, false, 0);
  ASSERT_TRUE(r0.ok());
  EXPECT_EQ(r0->images.shape(), (Shape{0, 3, 32, 32}));
}

TEST(CifarTest, MissingFileIsNamed) {
  ScratchDir dir;
  auto r = LoadCifarBinary({dir.File("nope.bin")}, false);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kNotFound);
  EXPECT_THAT(r.status().message(), HasSubstr(dir.File("nope.bin")));
  EXPECT_THAT(r.status().message(), HasSubstr("not found"));
}

TEST(CifarTest, TruncatedFileIsNamedAndLeftIntact) {
  ScratchDir dir;
  Bytes b = CifarRecords({{1}, {2}}, 0);
  b.resize(b.size() - 100);
  WriteFile(dir.File("cut.bin"), b);
  auto r = LoadCifarBinary({dir.File("cut.bin")}, false);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kCorruption);
  EXPECT_THAT(r.status().message(), HasSubstr(dir.File("cut.bin")));
  EXPECT_THAT(r.status().message(),
              HasSubstr("not a multiple of the record size 3073"));
  EXPECT_EQ(ReadFileBytes(dir.File("cut.bin")), b);  // loaders never write
}

TEST(CifarTest, WrongRecordSizeIsReported) {
  // A CIFAR-100 file (3074-byte records) read as CIFAR-10 and vice versa.
  ScratchDir dir;
  WriteFile(dir.File("c100.bin"), CifarRecords({{1, 2}, {3, 4}}, 0));
  WriteFile(dir.File("c10.bin"), CifarRecords({{1}, {2}}, 0));
  auto r = LoadCifarBinary({dir.File("c100.bin")}, false);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr(dir.File("c100.bin")));
  EXPECT_THAT(r.status().message(), HasSubstr("record size 3073"));
  auto r2 = LoadCifarBinary({dir.File("c10.bin")}, true);
  ASSERT_FALSE(r2.ok());
  EXPECT_THAT(r2.status().message(), HasSubstr(dir.File("c10.bin")));
  EXPECT_THAT(r2.status().message(), HasSubstr("record size 3074"));
}

TEST(CifarTest, LabelOutOfRangeIsNamed) {
  ScratchDir dir;
  WriteFile(dir.File("bad.bin"), CifarRecords({{1}, {10}}, 0));
  auto r = LoadCifarBinary({dir.File("bad.bin")}, false);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kCorruption);
  EXPECT_THAT(r.status().message(), HasSubstr(dir.File("bad.bin")));
  EXPECT_THAT(r.status().message(),
              HasSubstr("record 1: label 10 out of range [0, 10)"));

  WriteFile(dir.File("bad100.bin"), CifarRecords({{3, 100}}, 0));
  auto r2 = LoadCifarBinary({dir.File("bad100.bin")}, true);
  ASSERT_FALSE(r2.ok());
  EXPECT_THAT(r2.status().message(),
              HasSubstr("label 100 out of range [0, 100)"));
  WriteFile(dir.File("coarse.bin"), CifarRecords({{20, 1}}, 0));
  auto r3 = LoadCifarBinary({dir.File("coarse.bin")}, true);
  ASSERT_FALSE(r3.ok());
  EXPECT_THAT(r3.status().message(), HasSubstr("coarse label 20 out of range"));
}

TEST(CifarTest, SpecLoadsOfficialFileNames) {
  ScratchDir dir;
  for (int b = 1; b <= 5; ++b) {
    WriteFile(dir.File("data_batch_" + std::to_string(b) + ".bin"),
              CifarRecords({{b}, {b + 1}}, 2 * (b - 1)));
  }
  WriteFile(dir.File("test_batch.bin"), CifarRecords({{9}, {8}, {7}}, 100));
  auto r = LoadDataSpec("cifar10:" + dir.path(), DataOptions{});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->name, "cifar10");
  EXPECT_EQ(r->train.labels,
            (std::vector<int32_t>{1, 2, 2, 3, 3, 4, 4, 5, 5, 6}));
  EXPECT_EQ(r->test.labels, (std::vector<int32_t>{9, 8, 7}));
  for (int64_t i = 0; i < 10; ++i) ExpectPixels(r->train, i, i);
  ExpectPixels(r->test, 2, 102);

  DataOptions limited;
  limited.train_limit = 3;
  limited.test_limit = 1;
  auto l = LoadDataSpec("cifar10:" + dir.path(), limited);
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  EXPECT_EQ(l->train.labels, (std::vector<int32_t>{1, 2, 2}));
  EXPECT_EQ(l->test.labels, (std::vector<int32_t>{9}));

  WriteFile(dir.File("train.bin"), CifarRecords({{0, 55}}, 0));
  WriteFile(dir.File("test.bin"), CifarRecords({{1, 66}, {2, 77}}, 0));
  auto c100 = LoadDataSpec("cifar100:" + dir.path(), DataOptions{});
  ASSERT_TRUE(c100.ok()) << c100.status().ToString();
  EXPECT_EQ(c100->name, "cifar100");
  EXPECT_EQ(c100->train.labels, (std::vector<int32_t>{55}));
  EXPECT_EQ(c100->test.labels, (std::vector<int32_t>{66, 77}));
}

TEST(CifarTest, SpecNamesMissingBatchFile) {
  ScratchDir dir;
  WriteFile(dir.File("data_batch_1.bin"), CifarRecords({{1}}, 0));
  auto r = LoadDataSpec("cifar10:" + dir.path(), DataOptions{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kNotFound);
  EXPECT_THAT(r.status().message(), HasSubstr("data_batch_2.bin"));
}

}  // namespace
}  // namespace xw
