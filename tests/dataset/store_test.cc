// The store: round trips of trials, weights and curves; read-only opens;
// schema versions; corrupt databases; concurrent writers.
#include <gtest/gtest.h>

#include <algorithm>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include "testing/cli_runner.h"
#include "testing/file_tree.h"
#include "testing/temp_dir.h"
#include "xwires/dataset/query/query.h"
#include "xwires/dataset/store/dataset.h"

namespace xw {
namespace {

namespace fs = std::filesystem;

TrialRecord MakeTrial(int i, bool with_weights) {
  TrialRecord t;
  t.arch = i % 2 ? "vgg16" : "resnet50";
  t.data_spec = "synthetic";
  t.lr = 1e-4 * (i + 1);
  t.adam_eps = 1e-8;
  t.batch_size = 16 * (i % 8 + 1);
  t.epochs = 1 + i % 5;
  t.seed = i;
  t.hparams_json = "{\"lr\": " + std::to_string(t.lr) + "}";
  t.provenance = "store_test";
  for (const char* p : {"torch", "tf"}) {
    ModelRecord m;
    m.profile = p;
    m.profile_json = std::string("{\"name\": \"") + p + "\"}";
    m.test_acc = 0.1 + 0.01 * (i % 80) + (p[1] == 'f' ? 0.05 : 0.0);  // in [0, 1]
    m.train_acc = std::min(1.0, m.test_acc + 0.1);  // an accuracy: at most 1
    m.test_loss = 2.0 - 0.01 * i;
    m.param_count = 6;
    m.fingerprint_json = "{\"isa\": \"x86-64\", \"compiler\": \"GNU 12\"}";
    m.threads = 2;
    m.curves = {{1, 2.0, 1.9, 0.2, 2.1, 0.15}, {2, 1.5, 1.4, 0.3, 1.6, 0.25}};
    if (with_weights) {
      Tensor w({2, 3});
      for (int k = 0; k < 6; ++k) w[k] = static_cast<float>(i * 10 + k);
      m.weights.push_back({"fc.weight", w});
      Tensor n(Shape{});
      n[0] = static_cast<float>(i);
      m.weights.push_back({"bn.num_batches_tracked", n, true});
    }
    t.models.push_back(std::move(m));
  }
  t.divergence = 0.05;
  return t;
}

std::unique_ptr<Dataset> Create(const std::string& dir) {
  auto ds = Dataset::Open(dir, OpenMode::kCreate);
  EXPECT_TRUE(ds.ok()) << ds.status().ToString();
  return std::move(ds).value();
}

TEST(Store, AddTrialRoundTrip) {
  testutil::TempDir tmp;
  std::string dir = tmp.path() + "/ds";
  auto ds = Create(dir);
  TrialRecord in = MakeTrial(3, true);
  auto id = ds->AddTrial(in);
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  auto row = ds->GetTrial(*id);
  ASSERT_TRUE(row.ok()) << row.status().ToString();
  EXPECT_EQ(row->arch, "vgg16");
  EXPECT_DOUBLE_EQ(row->lr, in.lr);
  EXPECT_EQ(*row->batch_size, in.batch_size);
  EXPECT_TRUE(std::isnan(row->beta1));  // unknown stays unknown
  EXPECT_EQ(row->provenance, "store_test");
  ASSERT_EQ(row->models.size(), 2u);
  const ModelRow* tf = row->Model("tf");
  ASSERT_NE(tf, nullptr);
  EXPECT_DOUBLE_EQ(tf->test_acc, in.models[1].test_acc);
  EXPECT_TRUE(tf->has_weights);
  EXPECT_EQ(tf->weights_sha256, WeightsSha256(in.models[1].weights));
  EXPECT_TRUE(fs::exists(dir + "/" + tf->h5_file));
  auto w = ds->LoadWeights(tf->id);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ASSERT_EQ(w->size(), 2u);
  EXPECT_TRUE((*w)[0].value.BitwiseEqual(in.models[1].weights[0].value));
  EXPECT_TRUE((*w)[1].is_int64);
  auto c = ds->LoadCurves(tf->id);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_EQ(c->size(), 2u);
  EXPECT_EQ((*c)[1].epoch, 2);
  EXPECT_DOUBLE_EQ((*c)[1].test_acc, 0.25);
}

TEST(Store, InvalidRecordsChangeNothing) {
  testutil::TempDir tmp;
  std::string dir = tmp.path() + "/ds";
  Create(dir)->AddTrial(MakeTrial(0, true)).value();
  std::string before = testutil::HashTree(dir);
  auto ds = Dataset::Open(dir, OpenMode::kReadWrite).value();
  TrialRecord bad = MakeTrial(1, true);
  bad.models[1].profile = "torch";  // duplicate
  EXPECT_EQ(ds->AddTrial(bad).status().code(), Status::Code::kInvalidArgument);
  bad = MakeTrial(1, true);
  bad.models[0].status = "exploded";
  Status s = ds->AddTrial(bad).status();
  EXPECT_NE(s.message().find("exploded"), std::string::npos) << s.ToString();
  bad = MakeTrial(1, true);
  bad.hparams_json = "{not json";
  EXPECT_EQ(ds->AddTrial(bad).status().code(), Status::Code::kInvalidArgument);
  bad = MakeTrial(1, true);
  bad.search_id =
      12345;  // no such search: the SQL fails after the HDF5 bundle was written
  EXPECT_FALSE(ds->AddTrial(bad).ok());
  bad = MakeTrial(1, true);
  bad.models[0].weights.push_back(
      {"fc.weight", Tensor({1})});  // duplicate tensor name
  EXPECT_FALSE(ds->AddTrial(bad).ok());
  ds.reset();
  EXPECT_EQ(testutil::HashTree(dir), before);
}

TEST(Store, ReadOnlyOpenCreatesNothing) {
  testutil::TempDir tmp;
  std::string dir = tmp.path() + "/ds";
  EXPECT_EQ(Dataset::Open(dir).status().code(), Status::Code::kNotFound);
  EXPECT_FALSE(fs::exists(dir));
  Create(dir)->AddTrial(MakeTrial(0, false)).value();
  std::string before = testutil::HashTree(dir);
  {
    auto ds = Dataset::Open(dir);
    ASSERT_TRUE(ds.ok()) << ds.status().ToString();
    EXPECT_EQ((*ds)->Count({}).value(), 1);
    EXPECT_EQ((*ds)->AddTrial(MakeTrial(1, false)).status().code(),
              Status::Code::kFailedPrecondition);
  }
  EXPECT_EQ(testutil::HashTree(dir), before);
}

TEST(Store, CreateRefusesNonEmptyForeignDirectory) {
  testutil::TempDir tmp;
  std::ofstream(tmp.path() + "/notes.txt") << "mine";
  auto ds = Dataset::Open(tmp.path(), OpenMode::kCreate);
  EXPECT_EQ(ds.status().code(), Status::Code::kInvalidArgument);
  EXPECT_FALSE(fs::exists(tmp.path() + "/xwires.db"));
}

int RunPython(const std::string& code) {
  return std::system(
      ("/usr/bin/python3 -c " + testutil::ShellQuote(code)).c_str());
}

TEST(Store, NewerSchemaIsRefusedWithoutChange) {
  testutil::TempDir tmp;
  std::string dir = tmp.path() + "/ds";
  Create(dir)->AddTrial(MakeTrial(0, false)).value();
  ASSERT_EQ(
      RunPython("import sqlite3; c = sqlite3.connect('" + dir +
                "/xwires.db'); c.execute(\"INSERT INTO schema_version VALUES "
                "(99, 'x', 'future')\"); c.commit(); c.close()"),
      0);
  std::string before = testutil::HashTree(dir);
  for (OpenMode mode :
       {OpenMode::kReadOnly, OpenMode::kReadWrite, OpenMode::kCreate}) {
    auto ds = Dataset::Open(dir, mode);
    ASSERT_FALSE(ds.ok());
    EXPECT_EQ(ds.status().code(), Status::Code::kNotSupported);
    EXPECT_NE(ds.status().message().find("schema version 99"),
              std::string::npos)
        << ds.status().message();
  }
  EXPECT_EQ(testutil::HashTree(dir), before);
}

TEST(Store, CorruptAndTruncatedDatabasesAreRefusedWithoutChange) {
  testutil::TempDir tmp;
  std::string dir = tmp.path() + "/ds";
  {
    auto ds = Create(dir);
    std::vector<TrialRecord> many;
    for (int i = 0; i < 300; ++i) many.push_back(MakeTrial(i, false));
    ds->AddTrials(many).value();
  }
  std::string db = dir + "/xwires.db";
  // Truncated.
  fs::resize_file(db, fs::file_size(db) / 2);
  std::string before = testutil::HashTree(dir);
  for (OpenMode mode : {OpenMode::kReadOnly, OpenMode::kReadWrite}) {
    auto ds = Dataset::Open(dir, mode);
    Status s = ds.ok() ? (*ds)->Query({}).status() : ds.status();
    EXPECT_EQ(s.code(), Status::Code::kCorruption) << s.ToString();
    EXPECT_NE(s.message().find("xwires.db"), std::string::npos) << s.message();
  }
  EXPECT_EQ(testutil::HashTree(dir), before);
  // Not SQLite at all.
  std::ofstream(db, std::ios::trunc)
      << "garbage garbage garbage garbage garbage garbage garbage "
         "garbage garbage garbage garbage garbage garbage garbage";
  before = testutil::HashTree(dir);
  auto ds = Dataset::Open(dir, OpenMode::kReadWrite);
  ASSERT_FALSE(ds.ok());
  EXPECT_EQ(ds.status().code(), Status::Code::kCorruption);
  EXPECT_NE(ds.status().message().find("not an SQLite database"),
            std::string::npos);
  EXPECT_EQ(testutil::HashTree(dir), before);
}

TEST(Store, ConcurrentWritersLoseNothing) {
  testutil::TempDir tmp;
  std::string dir = tmp.path() + "/ds";
  Create(dir);
  constexpr int kProcs = 4, kEach = 15;
  std::vector<pid_t> pids;
  for (int p = 0; p < kProcs; ++p) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      auto ds = Dataset::Open(dir, OpenMode::kReadWrite);
      if (!ds.ok()) _exit(10);
      for (int i = 0; i < kEach; ++i) {
        TrialRecord t = MakeTrial(p * 100 + i, /*with_weights=*/i % 2 == 0);
        t.external_id = "p" + std::to_string(p) + "-" + std::to_string(i);
        if (!(*ds)->AddTrial(t).ok()) _exit(11);
      }
      _exit(0);
    }
    pids.push_back(pid);
  }
  for (pid_t pid : pids) EXPECT_EQ(testutil::WaitExit(pid), 0) << "writer failed";
  auto ds = Dataset::Open(dir);
  ASSERT_TRUE(ds.ok());
  EXPECT_EQ((*ds)->Count({}).value(), kProcs * kEach);
  auto rows = (*ds)->Query({}).value();
  std::set<std::string> names;
  for (const auto& r : rows) {
    names.insert(r.external_id);
    EXPECT_EQ(r.models.size(), 2u);
  }
  EXPECT_EQ(names.size(), static_cast<size_t>(kProcs * kEach));
  int files = 0;
  for (auto& e : fs::recursive_directory_iterator(dir + "/h5"))
    files += e.is_regular_file();
  EXPECT_EQ(
      files,
      kProcs * kEach);  // every call wrote one bundle (curves in all of them)
}

}  // namespace
}  // namespace xw
