// Runs the snippets of docs/python.md ("python sqlite" blocks, then the
// "python torch" block) with Debian's /usr/bin/python3 against real
// datasets: the imported CrossedWires VGG-16 results plus a pair trained by
// `xwires train`, and the imported results alone; the sqlite3/pandas/h5py
// part always, the torch part when `import torch` works. The snippets check
// the weights' sha256 themselves; this test also checks what they print.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "testing/cli_runner.h"
#include "testing/temp_dir.h"
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
    ds.reset();
    auto r = testutil::Xwires(
        "train --arch simple_cnn --width 0.125 --epochs 2 --batch-size 16 --train-limit 48 "
        "--test-limit 20 --lr 0.05 --adam-eps 0.5 --threads 2 --seed 4 --profiles torch,tf "
        "--quiet --dataset " + ShellQuote(dir_));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    imported_ = tmp_.path() + "/imported";
    auto only = Dataset::Open(imported_, OpenMode::kCreate).value();
    ASSERT_TRUE(ImportCrossedWires(*only, csv, "vgg16").ok());
    std::ifstream in(std::string(XWIRES_SOURCE_DIR) + "/docs/python.md");
    markdown_ = std::string((std::istreambuf_iterator<char>(in)),
                            std::istreambuf_iterator<char>());
    ASSERT_FALSE(CodeBlocks(markdown_, "python sqlite").empty());
  }

  testutil::CommandResult RunPython(const std::string& code, const std::string& dataset) {
    std::string script = tmp_.path() + "/snippet.py";
    std::ofstream(script) << code;
    return testutil::Run("XWIRES_DATASET=" + ShellQuote(dataset) +
                         " PYTHONPATH=" + ShellQuote(XWIRES_BINARY_DIR "/python") +
                         " /usr/bin/python3 " + script);
  }

  static bool HaveTorch() {
    return std::system("/usr/bin/python3 -c 'import torch' 2>/dev/null") == 0;
  }

  testutil::TempDir tmp_;
  std::string dir_, imported_, markdown_;
};

TEST_F(PythonDocs, SqlitePandasAndH5pySnippetsRun) {
  auto r = RunPython(CodeBlocks(markdown_, "python sqlite"), dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // 400 vgg16 trials, 237 of them >= 0.05, plus the trained pair.
  EXPECT_NE(r.out.find(" of 401 trials diverge by at least 0.05"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("simple_cnn {'conv1.weight': (4, 3, 3, 3)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("test accuracy per epoch: ["), std::string::npos) << r.out;
}

TEST_F(PythonDocs, SnippetsRunOnImportedResultsWithoutWeights) {
  std::string code = CodeBlocks(markdown_, "python sqlite");
  if (HaveTorch()) code += CodeBlocks(markdown_, "python torch");
  auto r = RunPython(code, imported_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("59.2% of 400 trials diverge by at least 0.05"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("no model of this dataset has stored weights"), std::string::npos)
      << r.out;
}

TEST_F(PythonDocs, TorchSnippetLoadsTheStateDict) {
  if (!HaveTorch()) GTEST_SKIP() << "python3-torch not installed";
  auto r = RunPython(CodeBlocks(markdown_, "python sqlite") +
                         CodeBlocks(markdown_, "python torch") +
                         "sd = model.state_dict()\n"
                         "assert sorted(sd) == sorted(state)\n"
                         "assert all(torch.equal(sd[k], torch.from_numpy(v)) for k, v in "
                         "state.items())\n"
                         "print('loaded', len(sd), 'tensors')\n",
                     dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("tensor(["), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("loaded "), std::string::npos) << r.out;
}

}  // namespace
}  // namespace xw
