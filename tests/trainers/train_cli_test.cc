// `xwires train` and `xwires predict` end to end: files, metrics.json,
// printed accuracies, and bad input (clear error, exit code 2, existing files
// untouched).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "testing/cli_runner.h"
#include "testing/file_tree.h"
#include "testing/temp_dir.h"
#include "xwires/dataset/store/tensor_file.h"
#include "xwires/trainers/architectures.h"

namespace xw {
namespace {

namespace fs = std::filesystem;

using CliRun = testutil::CommandResult;  // stdout and stderr merged in `out`
using testutil::ReadFile;

CliRun Xwires(const std::string& args) { return testutil::XwiresMerged(args); }

const char* kTiny =
    "--arch simple_cnn --width 0.125 --epochs 2 --batch-size 16 --train-limit 48 "
    "--test-limit 20 --lr 0.05 --adam-eps 0.5 --threads 2 --seed 4";

TEST(TrainCliTest, TrainsBothProfilesAndWritesWeightsAndMetrics) {
  testutil::TempDir tmp("xwires-train-cli-train");
  const std::string dir = tmp.path();
  CliRun r = Xwires(std::string("train ") + kTiny + " --profiles torch,tf --out " + dir +
                     " --dataset " + dir + "/store");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("stored trial 1 in " + dir + "/store"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("torch"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("|difference|"), std::string::npos) << r.out;

  const auto metrics = nlohmann::json::parse(ReadFile(dir + "/metrics.json"));
  EXPECT_EQ(metrics["format"], "xwires-train-metrics-1");
  EXPECT_EQ(metrics["arch"], "simple_cnn");
  EXPECT_EQ(metrics["hparams"]["adam_eps"], 0.5);
  EXPECT_EQ(metrics["data"]["train_size"], 48);
  ASSERT_EQ(metrics["models"].size(), 2u);
  const double a = metrics["models"][0]["test_acc"], b = metrics["models"][1]["test_acc"];
  EXPECT_DOUBLE_EQ(metrics["test_acc_difference"].get<double>(), std::fabs(a - b));
  EXPECT_EQ(metrics["models"][0]["curves"].size(), 2u);
  EXPECT_TRUE(metrics["fingerprint"].contains("isa"));

  for (int i = 0; i < 2; ++i) {
    const auto& m = metrics["models"][i];
    auto w = ReadTensorFile(dir + "/" + m["weights_file"].get<std::string>());
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    EXPECT_EQ(WeightsSha256(*w), m["weights_sha256"]);
    EXPECT_EQ(w->front().name, "conv1.weight");
    auto model = BuildModel("simple_cnn", InputSpec{}, ArchOptions{0.125});
    ASSERT_TRUE(model.ok());
    EXPECT_TRUE((*model)->LoadState(*w, "file").ok());
  }

  // predict with the torch weights reproduces logits for a few images.
  const std::string x_path = dir + "/x.h5";
  ASSERT_TRUE(WriteTensorFile(x_path, {{"x", Tensor({3, 3, 32, 32}, 0.5f), false}}).ok());
  CliRun p = Xwires("predict --arch simple_cnn --weights " + dir + "/torch.h5 --input " + x_path +
                 " --output " + dir + "/y.h5");
  ASSERT_EQ(p.exit_code, 0) << p.out;
  auto y = ReadTensorFile(dir + "/y.h5");
  ASSERT_TRUE(y.ok());
  ASSERT_EQ(y->size(), 1u);
  EXPECT_EQ(y->front().name, "logits");
  EXPECT_EQ(y->front().value.shape(), (Shape{3, 10}));
  fs::remove_all(dir);
}

TEST(TrainCliTest, BadInputFailsCleanlyAndLeavesFilesIntact) {
  testutil::TempDir tmp("xwires-train-cli-bad");
  const std::string dir = tmp.path();
  const std::string keep = dir + "/metrics.json";
  { std::ofstream(keep) << "previous run\n"; }
  struct Case {
    std::string args, message;
  } cases[] = {
      {"--profiles torch,nosuchprofile", "nosuchprofile"},
      {"--arch resnet21", "resnet21"},
      {"--batch-size 0", "batch_size"},
      {"--data cifar10:/nonexistent/dir", "/nonexistent/dir"},
      {"--init-weights " + dir + "/missing.h5", "missing.h5"},
      {"--adam-eps -1", "eps"},
  };
  for (const Case& c : cases) {
    CliRun r = Xwires(std::string("train ") + kTiny + " " + c.args + " --out " + dir);
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.out;
    EXPECT_NE(r.out.find("xwires: error:"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(c.message), std::string::npos) << c.args << "\n" << r.out;
  }
  EXPECT_EQ(ReadFile(keep), "previous run\n");
  EXPECT_FALSE(fs::exists(dir + "/torch.h5"));
  // A rejected run creates neither its output directory nor its dataset.
  CliRun fresh = Xwires(std::string("train ") + kTiny + " --arch resnet21 --out " + dir +
                        "/fresh --dataset " + dir + "/store");
  EXPECT_EQ(fresh.exit_code, 2) << fresh.out;
  EXPECT_FALSE(fs::exists(dir + "/fresh"));
  EXPECT_FALSE(fs::exists(dir + "/store"));

  // predict: missing 'x', wrong image shape, output not written.
  const std::string in = dir + "/in.h5", w = dir + "/w.h5";
  ASSERT_TRUE(WriteTensorFile(in, {{"images", Tensor({1, 3, 32, 32}), false}}).ok());
  CliRun p = Xwires("predict --arch mlp --weights " + in + " --input " + in + " --output " + dir +
                 "/y.h5");
  EXPECT_NE(p.exit_code, 0);
  EXPECT_NE(p.out.find("no dataset 'x'"), std::string::npos) << p.out;
  auto model = BuildModel("mlp", InputSpec{}, ArchOptions{0.125});
  ASSERT_TRUE(model.ok());
  ASSERT_TRUE(WriteTensorFile(w, (*model)->ExportState()).ok());
  ASSERT_TRUE(WriteTensorFile(in, {{"x", Tensor({2, 1, 28, 28}), false}}).ok());
  p = Xwires("predict --arch mlp --width 0.125 --weights " + w + " --input " + in +
             " --output " + dir + "/y.h5");
  EXPECT_EQ(p.exit_code, 2) << p.out;
  EXPECT_NE(p.out.find("fc1.weight"), std::string::npos) << p.out;
  EXPECT_FALSE(fs::exists(dir + "/y.h5"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace xw
