// Weights files: round trip, order, int64 scalars, atomicity, hashes and the
// errors for missing / non-HDF5 / truncated files.
#include "xwires/dataset/store/tensor_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "testing/file_tree.h"
#include "testing/temp_dir.h"

namespace xw {
namespace {

namespace fs = std::filesystem;

NamedTensors SampleTensors() {
  NamedTensors t;
  Tensor w({2, 3, 1, 1});
  for (int i = 0; i < 6; ++i) w[i] = 0.5f * i - 1.0f;
  t.push_back({"features.0.weight", w});
  t.push_back({"features.0.bias", Tensor({2}, 0.25f)});
  t.push_back({"bn1.running_mean", Tensor({2}, -3.0f)});
  Tensor count(Shape{});
  count[0] = 1234;
  t.push_back({"bn1.num_batches_tracked", count, true});
  t.push_back({"a.empty", Tensor({0})});
  return t;
}

TEST(TensorFile, RoundTripPreservesOrderShapesAndBits) {
  testutil::TempDir dir;
  std::string path = dir.path() + "/w.h5";
  NamedTensors in = SampleTensors();
  ASSERT_TRUE(WriteTensorFile(path, in, {{"arch", "vgg16"}}).ok());
  auto out = ReadTensorFile(path);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_EQ(out->size(), in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    EXPECT_EQ((*out)[i].name, in[i].name);
    EXPECT_EQ((*out)[i].is_int64, in[i].is_int64);
    EXPECT_TRUE((*out)[i].value.BitwiseEqual(in[i].value)) << in[i].name;
  }
  EXPECT_EQ((*out)[3].value.rank(), 0);
  EXPECT_EQ(WeightsSha256(*out), WeightsSha256(in));
  auto attrs = ReadTensorFileAttrs(path);
  ASSERT_TRUE(attrs.ok());
  EXPECT_EQ(attrs->at("arch"), "vgg16");
  EXPECT_EQ(attrs->at("format"), "xwires-tensors-1");
  // No temp file left behind.
  int files = 0;
  for (auto& e : fs::directory_iterator(dir.path()))
    files += e.is_regular_file();
  EXPECT_EQ(files, 1);
}

TEST(TensorFile, Sha256OfKnownBytes) {
  // sha256 of 4 zero bytes (one float 0.0f) and of 8 zero bytes (one int64 0):
  // printf '\0\0\0\0' | sha256sum ; printf '\0\0\0\0\0\0\0\0' | sha256sum
  NamedTensors f{{"x", Tensor(Shape{}), false}};
  EXPECT_EQ(WeightsSha256(f),
            "df3f619804a92fdb4057192dc43dd748ea778adc52bc498ce80524c014b81119");
  NamedTensors i{{"x", Tensor(Shape{}), true}};
  EXPECT_EQ(WeightsSha256(i),
            "af5570f5a1810b7af78caf4bc70a660f0df51e42baf91d4de5b2328de0e83dfc");
  EXPECT_EQ(WeightsSha256({}),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(TensorFile, MissingFileIsNotFound) {
  auto r = ReadTensorFile("/nonexistent/dir/w.h5");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kNotFound);
  EXPECT_NE(r.status().message().find("/nonexistent/dir/w.h5"),
            std::string::npos);
}

TEST(TensorFile, NotHdf5IsCorruption) {
  testutil::TempDir dir;
  std::string path = dir.path() + "/w.h5";
  std::ofstream(path) << "this is not hdf5\n";
  auto r = ReadTensorFile(path);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kCorruption);
  EXPECT_NE(r.status().message().find("not an HDF5 file"), std::string::npos);
}

TEST(TensorFile, TruncatedIsCorruption) {
  testutil::TempDir dir;
  std::string path = dir.path() + "/w.h5";
  NamedTensors in{{"big", Tensor({64, 64}, 1.0f)}};
  ASSERT_TRUE(WriteTensorFile(path, in).ok());
  fs::resize_file(path, fs::file_size(path) / 2);
  std::string before = testutil::HashTree(dir.path());
  auto r = ReadTensorFile(path);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kCorruption)
      << r.status().ToString();
  EXPECT_NE(r.status().message().find(path), std::string::npos);
  EXPECT_EQ(testutil::HashTree(dir.path()), before);  // reading changes nothing
}

TEST(TensorFile, BadNamesAreRejectedAndLeaveNoFile) {
  testutil::TempDir dir;
  std::string path = dir.path() + "/w.h5";
  NamedTensors dup{{"a", Tensor({1})}, {"a", Tensor({1})}};
  Status s = WriteTensorFile(path, dup);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument) << s.ToString();
  NamedTensors slash{{"a/b", Tensor({1})}};
  EXPECT_EQ(WriteTensorFile(path, slash).code(),
            Status::Code::kInvalidArgument);
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

TEST(TensorFile, ReadsH5pyStyleFileWithoutOrderAttribute) {
  // Written with Debian's h5py as a Python user would from a state_dict.
  testutil::TempDir dir;
  std::string path = dir.path() + "/py.h5";
  std::string cmd =
      "/usr/bin/python3 -c \"import h5py, numpy as np; f = h5py.File('" + path +
      "', 'w'); f['b.weight'] = np.arange(6, dtype=np.float64).reshape(2, 3); "
      "f['a.num_batches_tracked'] = np.int64(7); f.close()\"";
  if (std::system("/usr/bin/python3 -c 'import h5py' 2>/dev/null") != 0)
    GTEST_SKIP() << "no h5py";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  auto r = ReadTensorFile(path);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0].name, "a.num_batches_tracked");
  EXPECT_TRUE((*r)[0].is_int64);
  EXPECT_EQ((*r)[0].value[0], 7.0f);
  EXPECT_EQ((*r)[1].value.shape(), (Shape{2, 3}));
  EXPECT_EQ((*r)[1].value[5], 5.0f);
}

}  // namespace
}  // namespace xw
