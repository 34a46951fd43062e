// The safe archive reader and writer (dataset/bundle/archive_io.h). Every malicious
// case is built with libarchive directly and must be rejected with an error
// naming the entry and the problem, leaving nothing behind: the extraction
// parent stays empty and nothing appears next to it.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "bundle_test_util.h"
#include "dataset/bundle/archive_io.h"
#include "dataset/store/sha256.h"
#include "testing/temp_dir.h"

namespace xw::bundle {
namespace {

namespace fs = std::filesystem;
using testutil::File;
using testutil::RawEntry;
using testutil::RawFilter;
using testutil::RawKind;
using testutil::Special;

class ArchiveTest : public ::testing::Test {
 protected:
  // Layout: <root>/in (archives), <root>/work/tmp (extraction parent).
  void SetUp() override {
    in_ = fs::path(root_.path()) / "in";
    work_ = fs::path(root_.path()) / "work";
    tmp_ = work_ / "tmp";
    fs::create_directories(in_);
    fs::create_directories(tmp_);
  }

  std::string Make(const std::vector<RawEntry>& entries,
                   RawFilter f = RawFilter::kZstd) {
    const std::string p =
        (in_ / ("a" + std::to_string(n_++) + ".tar")).string();
    testutil::WriteRawArchive(p, entries, f);
    return p;
  }

  // Extraction must fail with `code`, a message containing every `parts`,
  // and no trace in the work area.
  void ExpectRejected(const std::string& archive, Status::Code code,
                      const std::vector<std::string>& parts,
                      const ArchiveLimits& limits = {}) {
    auto r = ExtractArchive(archive, tmp_, limits);
    ASSERT_FALSE(r.ok()) << "accepted " << archive;
    EXPECT_EQ(r.status().code(), code) << r.status().ToString();
    for (const std::string& p : parts) {
      EXPECT_NE(r.status().message().find(p), std::string::npos)
          << "message lacks '" << p << "': " << r.status().message();
    }
    EXPECT_EQ(testutil::ListTree(work_.string()),
              std::vector<std::string>{"tmp"});
    EXPECT_FALSE(fs::exists(fs::path(root_.path()) / "evil"));
    EXPECT_FALSE(fs::exists("/tmp/xwires-evil-absolute"));
  }

  testutil::TempDir root_;
  fs::path in_, work_, tmp_;
  int n_ = 0;
};

TEST_F(ArchiveTest, ZstdRoundTripKeepsNamesBytesAndHashes) {
  const std::string out = (in_ / "b.tar.zst").string();
  const std::string big(200000, 'x');
  testutil::WriteFileBytes((in_ / "src.bin").string(), big);
  {
    auto w = ArchiveWriter::Create(out);
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    ASSERT_TRUE((*w)->AddBytes("manifest.json", "{}").ok());
    ASSERT_TRUE((*w)->AddFile("weights/t1/torch.h5", in_ / "src.bin").ok());
    ASSERT_TRUE((*w)->AddBytes("empty", "").ok());
    ASSERT_TRUE((*w)->Finish().ok());
  }
  EXPECT_FALSE(fs::exists(out + ".partial"));
  auto r = ExtractArchive(out, tmp_);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->compression, "zstd");
  ASSERT_EQ(r->files.size(), 3u);
  EXPECT_EQ(r->files[0].name, "manifest.json");
  const ExtractedFile* f = r->Find("weights/t1/torch.h5");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->bytes, big.size());
  EXPECT_EQ(f->sha256, Sha256Hex(big));
  EXPECT_EQ(testutil::ReadFileBytes(f->path.string()), big);
  EXPECT_EQ(r->Find("empty")->bytes, 0u);
  // Known SHA-256 of the empty string.
  EXPECT_EQ(r->Find("empty")->sha256,
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_TRUE(f->path.string().rfind(tmp_.string(), 0) == 0);
  const fs::path dir = r->dir.path();
  EXPECT_EQ(fs::status(dir).permissions() & fs::perms::all,
            fs::perms::owner_all);
  r = Status::Internal("drop");  // destroying the result removes the files
  EXPECT_FALSE(fs::exists(dir));
}

TEST_F(ArchiveTest, GzipIsReadAndSameContentsGiveSameBytes) {
  for (Compression c : {Compression::kGzip, Compression::kZstd}) {
    std::string bytes[2];
    for (int i = 0; i < 2; ++i) {
      const fs::path out = in_ / ("same" + std::to_string(i));
      auto w = ArchiveWriter::Create(out, c);
      ASSERT_TRUE(w.ok());
      ASSERT_TRUE((*w)->AddBytes("a.txt", "hello").ok());
      ASSERT_TRUE((*w)->Finish().ok());
      bytes[i] = testutil::ReadFileBytes(out.string());
    }
    EXPECT_EQ(bytes[0], bytes[1]);
    auto r = ExtractArchive(in_ / "same0", tmp_);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->compression, c == Compression::kGzip ? "gzip" : "zstd");
    EXPECT_EQ(testutil::ReadFileBytes(r->files.at(0).path.string()), "hello");
  }
}

TEST_F(ArchiveTest, WriterRejectsBadNamesAndRemovesAbandonedOutput) {
  const fs::path out = in_ / "x.tar.zst";
  {
    auto w = ArchiveWriter::Create(out);
    ASSERT_TRUE(w.ok());
    EXPECT_EQ((*w)->AddBytes("../x", "1").code(),
              Status::Code::kInvalidArgument);
    ASSERT_TRUE((*w)->AddBytes("x", "1").ok());
    EXPECT_EQ((*w)->AddBytes("x", "2").code(), Status::Code::kInvalidArgument);
    EXPECT_TRUE(fs::exists(out.string() + ".partial"));
  }
  EXPECT_FALSE(fs::exists(out.string() + ".partial"));
  EXPECT_FALSE(fs::exists(out));
}

TEST_F(ArchiveTest, DirectoryEntriesAreAccepted) {
  auto r = ExtractArchive(
      Make({Special(RawKind::kDir, "w/"), File("w/a", "1")}), tmp_);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->files.size(), 1u);
  EXPECT_EQ(r->files[0].name, "w/a");
}

TEST_F(ArchiveTest, RejectsAbsolutePath) {
  ExpectRejected(
      Make({File("ok", "1"), File("/tmp/xwires-evil-absolute", "x")}),
      Status::Code::kInvalidArgument,
      {"/tmp/xwires-evil-absolute", "absolute path"});
}

TEST_F(ArchiveTest, RejectsDotDotEntries) {
  ExpectRejected(Make({File("../evil", "x")}), Status::Code::kInvalidArgument,
                 {"'../evil'", "'..'"});
  ExpectRejected(Make({File("a/../../evil", "x")}),
                 Status::Code::kInvalidArgument, {"a/../../evil", "'..'"});
  ExpectRejected(Make({Special(RawKind::kDir, "../evil/")}),
                 Status::Code::kInvalidArgument, {"'..'"});
}

TEST_F(ArchiveTest, RejectsSymlinks) {
  ExpectRejected(Make({Special(RawKind::kSymlink, "link", "../evil")}),
                 Status::Code::kInvalidArgument,
                 {"'link'", "symbolic link", "not allowed"});
}

TEST_F(ArchiveTest, RejectsHardLinks) {
  ExpectRejected(Make({File("a", "1"), Special(RawKind::kHardlink, "b", "a")}),
                 Status::Code::kInvalidArgument, {"'b'", "hard link"});
  ExpectRejected(Make({Special(RawKind::kHardlink, "b", "/etc/passwd")}),
                 Status::Code::kInvalidArgument, {"'b'", "hard link"});
}

TEST_F(ArchiveTest, RejectsDevicesAndFifos) {
  ExpectRejected(Make({Special(RawKind::kCharDevice, "null")}),
                 Status::Code::kInvalidArgument,
                 {"'null'", "character device"});
  ExpectRejected(Make({Special(RawKind::kBlockDevice, "disk")}),
                 Status::Code::kInvalidArgument, {"'disk'", "block device"});
  ExpectRejected(Make({Special(RawKind::kFifo, "pipe")}),
                 Status::Code::kInvalidArgument, {"'pipe'", "fifo"});
}

TEST_F(ArchiveTest, RejectsDuplicatesAndFileDirectoryClashes) {
  ExpectRejected(Make({File("a", "1"), File("a", "2")}),
                 Status::Code::kInvalidArgument, {"'a'", "duplicate"});
  ExpectRejected(Make({File("a", "1"), File("a/b", "2")}),
                 Status::Code::kInvalidArgument,
                 {"'a/b'", "parent 'a' is a file"});
  ExpectRejected(Make({File("a/b", "1"), File("a", "2")}),
                 Status::Code::kInvalidArgument, {"'a'", "duplicate"});
}

TEST_F(ArchiveTest, RejectsTooManyEntries) {
  ArchiveLimits limits;
  limits.max_entries = 3;
  ExpectRejected(
      Make({File("a", "1"), File("b", "1"), File("c", "1"), File("d", "1")}),
      Status::Code::kInvalidArgument, {"more than 3 entries"}, limits);
}

TEST_F(ArchiveTest, RejectsEntryAboveSizeLimit) {
  ArchiveLimits limits;
  limits.max_entry_bytes = 1000;
  ExpectRejected(Make({File("big", std::string(1001, 'b'))}),
                 Status::Code::kInvalidArgument,
                 {"'big'", "larger than the limit of 1000 bytes"}, limits);
}

TEST_F(ArchiveTest, RejectsDecompressionBombWhileStreaming) {
  // 6 files of 1 MiB of zeros: each under the per-file limit, a few KiB
  // compressed, but 6 MiB in total against a 4 MiB budget. Only counting
  // decompressed bytes as they stream catches this.
  std::vector<RawEntry> entries;
  for (int i = 0; i < 6; ++i)
    entries.push_back(testutil::Zeros("z" + std::to_string(i), 1 << 20));
  const std::string bomb = Make(entries);
  EXPECT_LT(fs::file_size(bomb), 64u * 1024);
  ArchiveLimits limits;
  limits.max_entry_bytes = 2 << 20;
  limits.max_total_bytes = 4 << 20;
  ExpectRejected(bomb, Status::Code::kInvalidArgument,
                 {"'z4'", "more than the limit of 4194304 bytes in total"},
                 limits);
}

TEST_F(ArchiveTest, RejectsUnsafeNames) {
  ExpectRejected(Make({File("a//b", "1")}), Status::Code::kInvalidArgument,
                 {"empty path component"});
  ExpectRejected(Make({File("./a", "1")}), Status::Code::kInvalidArgument,
                 {"'.' component"});
  ExpectRejected(Make({File("a b", "1")}), Status::Code::kInvalidArgument,
                 {"character outside"});
  ExpectRejected(Make({File("a\nb", "1")}), Status::Code::kInvalidArgument,
                 {"a\\x0ab"});
  ExpectRejected(Make({File(std::string(300, 'n'), "1")}),
                 Status::Code::kInvalidArgument, {"longer than 240 bytes"});
  ExpectRejected(Make({File("1/2/3/4/5/6/7/8/9", "1")}),
                 Status::Code::kInvalidArgument, {"deeper than 8"});
}

TEST_F(ArchiveTest, RejectsWrongContainers) {
  ExpectRejected(Make({File("a", "1")}, RawFilter::kNone),
                 Status::Code::kInvalidArgument, {"zstd or gzip"});
  ExpectRejected(Make({File("a", "1")}, RawFilter::kZstdOverGzip),
                 Status::Code::kInvalidArgument, {"2 layer(s)"});
  const std::string garbage = (in_ / "garbage").string();
  testutil::WriteFileBytes(garbage, std::string(5000, 'g'));
  ExpectRejected(garbage, Status::Code::kCorruption, {"garbage"});
  ExpectRejected(Make({}), Status::Code::kInvalidArgument, {"no entries"});
  auto missing = ExtractArchive(in_ / "nope.tar.zst", tmp_);
  EXPECT_EQ(missing.status().code(), Status::Code::kNotFound);
}

TEST_F(ArchiveTest, RejectsTruncatedArchive) {
  const std::string good =
      Make({File("a", std::string(100000, 'q') + "tail"), File("b", "2")});
  std::string bytes = testutil::ReadFileBytes(good);
  testutil::WriteFileBytes(good, bytes.substr(0, bytes.size() / 2));
  ExpectRejected(good, Status::Code::kCorruption, {});
}

TEST(ArchiveNames, ValidateEntryName) {
  const ArchiveLimits l;
  EXPECT_TRUE(ValidateEntryName("weights/0a/torch.h5", false, l).ok());
  EXPECT_TRUE(ValidateEntryName("dir/", true, l).ok());
  EXPECT_FALSE(ValidateEntryName("dir/", false, l).ok());
  EXPECT_FALSE(ValidateEntryName("", false, l).ok());
  EXPECT_FALSE(ValidateEntryName("..", false, l).ok());
  EXPECT_FALSE(ValidateEntryName("a/..", false, l).ok());
  EXPECT_FALSE(ValidateEntryName("a\\b", false, l).ok());
  EXPECT_FALSE(ValidateEntryName("/a", false, l).ok());
  EXPECT_EQ(PrintableName(std::string("a\0b\\", 4)), "a\\x00b\\x5c");
}

}  // namespace
}  // namespace xw::bundle
