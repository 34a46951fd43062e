// Runs the snippets of docs/python.md with Debian's /usr/bin/python3 against
// a real dataset: the sqlite3/pandas/h5py part always, the torch part when
// `import torch` works. The snippets check the weights' sha256 themselves;
// this test also checks what they print.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "test_util.h"
#include "xwires/dataset/store/crossedwires.h"
#include "xwires/dataset/store/dataset.h"

namespace xw {
namespace {

using testutil::ShellQuote;

// Code blocks of `markdown` whose fence info is exactly `info`.
std::string CodeBlocks(const std::string& markdown, const std::string& info) {
  std::istringstream in(markdown);
  std::string line, code;
  bool inside = false, wanted = false;
  while (std::getline(in, line)) {
    if (line.rfind("```", 0) == 0) {
      if (!inside) {
        inside = true;
        wanted = line.substr(3) == info;
      } else {
        inside = false;
      }
      continue;
    }
    if (inside && wanted) code += line + "\n";
  }
  return code;
}

// A trial whose weights are the state_dict of
// torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.BatchNorm1d(2)).
TrialRecord TorchShapedTrial() {
  TrialRecord t;
  t.arch = "tiny_mlp";
  t.lr = 1e-3;
  t.batch_size = 8;
  t.epochs = 2;
  ModelRecord m;
  m.profile = "torch";
  m.test_acc = 0.75;
  Tensor w({2, 3});
  for (int i = 0; i < 6; ++i) w[i] = 0.1f * (i + 1);
  m.weights = {{"0.weight", w},
               {"0.bias", Tensor({2}, 0.5f)},
               {"1.weight", Tensor({2}, 1.0f)},
               {"1.bias", Tensor({2}, 0.0f)},
               {"1.running_mean", Tensor({2}, 0.25f)},
               {"1.running_var", Tensor({2}, 4.0f)},
               {"1.num_batches_tracked", Tensor(Shape{}, 17.0f), true}};
  m.curves = {{1, 1.0, 0.9, 0.5, 1.1, 0.5}, {2, 0.8, 0.7, 0.6, 0.9, 0.75}};
  t.models.push_back(std::move(m));
  return t;
}

class PythonDocs : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::system("/usr/bin/python3 -c 'import pandas, h5py' 2>/dev/null") !=
        0) {
      GTEST_SKIP() << "Debian python3-pandas / python3-h5py not installed";
    }
    dir_ = tmp_.path() + "/ds";
    auto ds = Dataset::Open(dir_, OpenMode::kCreate).value();
    std::string csv = std::string(XWIRES_SOURCE_DIR) +
                      "/tests/fixtures/crossedwires/vgg16_cifar10_results.csv";
    ASSERT_TRUE(ImportCrossedWires(*ds, csv, "vgg16").ok());
    ASSERT_TRUE(ds->AddTrial(TorchShapedTrial()).ok());
    std::ifstream in(std::string(XWIRES_SOURCE_DIR) + "/docs/python.md");
    markdown_ = std::string((std::istreambuf_iterator<char>(in)),
                            std::istreambuf_iterator<char>());
    ASSERT_FALSE(CodeBlocks(markdown_, "python").empty());
  }

  testutil::CommandResult RunPython(const std::string& code) {
    std::string script = tmp_.path() + "/snippet.py";
    std::ofstream(script) << code;
    return testutil::Run("XWIRES_DATASET=" + ShellQuote(dir_) +
                         " /usr/bin/python3 " + script);
  }

  testutil::TempDir tmp_;
  std::string dir_, markdown_;
};

TEST_F(PythonDocs, SqlitePandasAndH5pySnippetsRun) {
  auto r = RunPython(CodeBlocks(markdown_, "python"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // 400 vgg16 trials, 237 of them (59.25%) >= 0.05, plus the tiny_mlp trial
  // whose divergence is unknown (NaN >= 0.05 is False in pandas).
  EXPECT_NE(r.out.find("59.1% of 401 trials diverge by at least 0.05"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("'1.num_batches_tracked': ()"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("'0.weight': (2, 3)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("test accuracy per epoch: [0.5  0.75]"),
            std::string::npos)
      << r.out;
}

TEST_F(PythonDocs, TorchSnippetLoadsTheStateDict) {
  if (std::system("/usr/bin/python3 -c 'import torch' 2>/dev/null") != 0) {
    GTEST_SKIP() << "python3-torch not installed";
  }
  auto r = RunPython(
      CodeBlocks(markdown_, "python") + CodeBlocks(markdown_, "python torch") +
      "assert int(model[1].num_batches_tracked) == 17\n"
      "assert float(model[0].weight[1, 2]) == float(np.float32(0.6))\n"
      "assert float(model[1].running_var[0]) == 4.0\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("tensor("), std::string::npos) << r.out;
}

}  // namespace
}  // namespace xw
