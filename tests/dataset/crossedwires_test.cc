// CrossedWires import through the CLI: the study's published numbers, and
// bad CSVs that must leave the disk untouched.
#include "xwires/dataset/query/query.h"
#include "xwires/dataset/store/crossedwires.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "testing/cli_runner.h"
#include "testing/file_tree.h"
#include "testing/temp_dir.h"
#include "xwires/dataset/store/dataset.h"

namespace xw {
namespace {

namespace fs = std::filesystem;
using testutil::ShellQuote;
using testutil::Xwires;

// The study's CSVs: ../shared/crossedwires beside the clone if present, else
// the committed copy (identical files) under tests/fixtures.
std::string CsvDir() {
  std::string shared =
      std::string(XWIRES_SOURCE_DIR) + "/../shared/crossedwires";
  if (fs::exists(shared + "/vgg16_cifar10_results.csv")) return shared;
  return std::string(XWIRES_SOURCE_DIR) + "/tests/fixtures/crossedwires";
}

std::string Csv(const std::string& arch) {
  return CsvDir() + "/" + arch + "_cifar10_results.csv";
}

// Three significant digits, the precision the study reports.
std::string Sig3(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

// Parses `xwires ... --format csv` output (no quoted fields expected).
std::vector<std::map<std::string, std::string>> ParseCsv(
    const std::string& text) {
  std::istringstream in(text);
  std::string line;
  std::vector<std::string> header;
  std::vector<std::map<std::string, std::string>> rows;
  auto split = [](const std::string& l) {
    std::vector<std::string> out;
    std::stringstream ss(l);
    std::string cell;
    while (std::getline(ss, cell, ',')) out.push_back(cell);
    return out;
  };
  while (std::getline(in, line)) {
    if (header.empty()) {
      header = split(line);
      continue;
    }
    auto cells = split(line);
    std::map<std::string, std::string> row;
    for (size_t i = 0; i < header.size() && i < cells.size(); ++i)
      row[header[i]] = cells[i];
    rows.push_back(row);
  }
  return rows;
}

class CrossedWiresImport : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    tmp_ = new testutil::TempDir();
    for (const char* arch : {"vgg16", "resnet50", "densenet121"}) {
      auto r = Xwires("import-crossedwires " + ShellQuote(Dir()) + " " +
                      ShellQuote(Csv(arch)) + " --arch " + arch);
      ASSERT_EQ(r.exit_code, 0) << r.err;
      imports_[arch] = r.out;
    }
  }
  static void TearDownTestSuite() {
    delete tmp_;
    tmp_ = nullptr;
  }
  static std::string Dir() { return tmp_->path() + "/cw"; }

  static testutil::TempDir* tmp_;
  static std::map<std::string, std::string> imports_;
};
testutil::TempDir* CrossedWiresImport::tmp_ = nullptr;
std::map<std::string, std::string> CrossedWiresImport::imports_;

TEST_F(CrossedWiresImport, ReportsEveryRowIncludingUnfinishedRuns) {
  EXPECT_NE(
      imports_["vgg16"].find("400 rows (400 finished); imported 400 trials"),
      std::string::npos)
      << imports_["vgg16"];
  EXPECT_NE(imports_["vgg16"].find("2 rows without loss curves"),
            std::string::npos);
  EXPECT_NE(imports_["resnet50"].find(
                "400 rows (399 finished, 1 running); imported 400"),
            std::string::npos)
      << imports_["resnet50"];
  auto ds = Dataset::Open(Dir()).value();
  EXPECT_EQ(ds->Count({}).value(), 1200);
  TrialQuery running;
  running.statuses = {"incomplete"};
  auto rows = ds->Query(running).value();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].external_id, "dual_train_3450eb44");
  EXPECT_NE(rows[0].extra_json.find("\"state\":\"running\""),
            std::string::npos);
  EXPECT_EQ(ds->ProfileNames().value(),
            (std::vector<std::string>{"pytorch", "tensorflow"}));
}

TEST_F(CrossedWiresImport, LossCurvesKeepHugeValues) {
  // dual_train_5e67eae2 (vgg16, first row): the PyTorch loss exploded to
  // 58540646686793925000 at epoch 47 of 50.
  auto ds = Dataset::Open(Dir()).value();
  TrialQuery q;
  q.where = "name = dual_train_5e67eae2";
  auto rows = ds->Query(q).value();
  ASSERT_EQ(rows.size(), 1u);
  const ModelRow* pt = rows[0].Model("pytorch");
  ASSERT_NE(pt, nullptr);
  EXPECT_TRUE(pt->external);
  EXPECT_FALSE(pt->has_weights);
  auto curves = ds->LoadCurves(pt->id);
  ASSERT_TRUE(curves.ok()) << curves.status().ToString();
  ASSERT_EQ(curves->size(), 50u);
  EXPECT_EQ((*curves)[46].train_loss_mean, 58540646686793925000.0);
  EXPECT_DOUBLE_EQ((*curves)[0].train_loss_mean, 2.2262024879455566);
  EXPECT_DOUBLE_EQ(rows[0].divergence, 0.681519394);
  EXPECT_EQ(*rows[0].batch_size, 202);
}

TEST_F(CrossedWiresImport, StatsAgreeWithTheStudy) {
  // Known values: computed independently with pandas 1.5 (Debian
  // python3-pandas) from the three CSVs:
  //   d = pd.read_csv(f); d.accuracy_diff.agg(['min', 'max', 'median',
  //   'mean']), (d.accuracy_diff >= 0.05).mean(),
  //   d.pt_test_acc.agg(['min','max']), ...
  // and, over all 1200 rows, (accuracy_diff >= 0.05).mean() = 628/1200.
  struct Known {
    double min, max, median, mean, share, pt_min, pt_max, tf_min, tf_max;
  };
  const std::map<std::string, Known> known = {
      {"vgg16",
       {4.17e-10, 0.681519394, 0.0843387575, 0.12280131364205502, 0.5925,
        0.095912734, 0.785600001, 0.100000001, 0.79610002}},
      {"resnet50",
       {0.0001369467595728, 0.4520065635442734, 0.041836800103519,
        0.07793020935341255, 0.4525, 0.097813936157359, 0.6994659810126582,
        0.0493000000715255, 0.6712999939918518}},
      {"densenet121",
       {9.98986328577e-05, 0.4389605228515232, 0.0544690569241841,
        0.10978129264343824, 0.525, 0.0919075222272012, 0.7759999979734421,
        0.0882999971508979, 0.7656000256538391}},
  };
  auto r = Xwires("stats " + ShellQuote(Dir()) + " --format csv");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto rows = ParseCsv(r.out);
  ASSERT_EQ(rows.size(), 4u) << r.out;
  for (const auto& row : rows) {
    const std::string arch = row.at("arch");
    if (arch == "all") {
      EXPECT_EQ(row.at("trials"), "1200");
      char pct[16];
      std::snprintf(pct, sizeof pct, "%.1f",
                    100 * std::stod(row.at("share_ge_0.05")));
      EXPECT_STREQ(
          pct, "52.3");  // the study: 52.3% of 1200 trials diverge by >= 0.05
      continue;
    }
    SCOPED_TRACE(arch);
    const Known& k = known.at(arch);
    EXPECT_EQ(row.at("trials"), "400");
    EXPECT_EQ(Sig3(std::stod(row.at("div_min"))), Sig3(k.min));
    EXPECT_EQ(Sig3(std::stod(row.at("div_max"))), Sig3(k.max));
    EXPECT_EQ(Sig3(std::stod(row.at("div_median"))), Sig3(k.median));
    EXPECT_EQ(Sig3(std::stod(row.at("div_mean"))), Sig3(k.mean));
    EXPECT_EQ(Sig3(std::stod(row.at("share_ge_0.05"))), Sig3(k.share));
    EXPECT_EQ(Sig3(std::stod(row.at("acc_min_pytorch"))), Sig3(k.pt_min));
    EXPECT_EQ(Sig3(std::stod(row.at("acc_max_pytorch"))), Sig3(k.pt_max));
    EXPECT_EQ(Sig3(std::stod(row.at("acc_min_tensorflow"))), Sig3(k.tf_min));
    EXPECT_EQ(Sig3(std::stod(row.at("acc_max_tensorflow"))), Sig3(k.tf_max));
  }
}

TEST_F(CrossedWiresImport, TopListsTheMostDivergentTrials) {
  auto r = Xwires("top " + ShellQuote(Dir()) + " --k 3 --format csv");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto rows = ParseCsv(r.out);
  ASSERT_EQ(rows.size(), 9u);
  // The largest vgg16 difference (pandas: d.nlargest(1, 'accuracy_diff')).
  EXPECT_EQ(rows[6].at("arch"), "vgg16");
  EXPECT_EQ(rows[6].at("name"), "dual_train_5e67eae2");
  EXPECT_EQ(rows[0].at("name"), "dual_train_a0e76fd4");  // densenet121
  EXPECT_EQ(rows[3].at("name"), "dual_train_85721cc8");  // resnet50
  auto b = Xwires("top " + ShellQuote(Dir()) +
                  " --k 1 --bottom --arch resnet50 --format csv");
  ASSERT_EQ(b.exit_code, 0) << b.err;
  auto brows = ParseCsv(b.out);
  ASSERT_EQ(brows.size(), 1u);
  EXPECT_EQ(brows[0].at("name"), "dual_train_98577868");
}

TEST_F(CrossedWiresImport, ReimportSkipsEverythingAndChangesNothing) {
  std::string before = testutil::HashTree(Dir());
  auto r = Xwires("import-crossedwires " + ShellQuote(Dir()) + " " +
                  ShellQuote(Csv("vgg16")) + " --arch vgg16");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("imported 0 trials as arch vgg16, skipped 400"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(testutil::HashTree(Dir()), before);
}

TEST_F(CrossedWiresImport, QueryFromTheIssue) {
  auto r = Xwires(
      "query " + ShellQuote(Dir()) +
      " --where 'lr >= 1e-3 and batch_size < 500 and diff > 0.3' --arch vgg16"
      " --sort -diff --limit 10 --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"name\": \"dual_train_5e67eae2\""), std::string::npos);
  auto n = Xwires(
      "query " + ShellQuote(Dir()) +
      " --where 'lr >= 1e-3 and batch_size < 500 and diff > 0.3' --count");
  // pandas: ((d.learning_rate >= 1e-3) & (d.batch_size < 500) &
  // (d.accuracy_diff > 0.3)).sum() summed over the three files = 40.
  EXPECT_EQ(n.out, "40\n");
}

// Degenerate models (degenerate.h) in the study's data. Known values from
// the CSVs with Python (csv, math): at chance = min(pt_test_acc,
// tf_test_acc) <= 0.1 + 3 sqrt(0.1 * 0.9 / 10000) = 0.109; collapsed = any
// value of pt_average_training_loss, pt_latest_training_loss or
// tf_training_loss non-finite or > 10 ln(10) = 23.03. Over 1200 trials: 19
// collapsed, 135 at chance, 145 either; of the 113 with diff > 0.3, 45 at
// chance and 1 collapsed (dual_train_5e67eae2). The 2 rows without loss
// curves have collapsed unknown, which --exclude-degenerate keeps.
TEST_F(CrossedWiresImport, DegenerateFlagsFromTheStudy) {
  auto count = [&](const std::string& args) {
    auto r = Xwires("query " + ShellQuote(Dir()) + " " + args + " --count");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
  };
  EXPECT_EQ(count("--where 'collapsed = 1'"), "19\n");
  EXPECT_EQ(count("--where 'at_chance = 1'"), "135\n");
  EXPECT_EQ(count("--where 'collapsed = 1 or at_chance = 1'"), "145\n");
  EXPECT_EQ(count("--where 'collapsed = 0 and at_chance = 0'"), "1053\n");
  // The two rows without loss curves: no loss known, so collapsed is unknown.
  EXPECT_EQ(count("--where 'collapsed is null'"), "2\n");
  EXPECT_EQ(count("--where 'diff > 0.3 and at_chance = 1'"), "45\n");
  EXPECT_EQ(count("--where 'diff > 0.3'"), "113\n");
  EXPECT_EQ(count("--where 'diff > 0.3' --exclude-degenerate"), "68\n");
  EXPECT_EQ(count("--where 'collapsed = 1' --arch vgg16"), "6\n");

  // The top VGG16 divergence: PyTorch's loss exploded to 5.85e19 (stored
  // with status ok) and its accuracy is 0.09998: both flags, in the table.
  auto top = Xwires("top " + ShellQuote(Dir()) + " --k 1 --arch vgg16 --format csv");
  ASSERT_EQ(top.exit_code, 0) << top.err;
  auto rows = ParseCsv(top.out);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].at("name"), "dual_train_5e67eae2");
  EXPECT_EQ(rows[0].at("collapsed"), "1");
  EXPECT_EQ(rows[0].at("at_chance"), "1");
  // Left out on request: the largest non-degenerate VGG16 difference.
  auto clean = Xwires("top " + ShellQuote(Dir()) +
                      " --k 1 --arch vgg16 --exclude-degenerate --format csv");
  ASSERT_EQ(clean.exit_code, 0) << clean.err;
  rows = ParseCsv(clean.out);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].at("name"), "dual_train_df0e2a34");
  EXPECT_EQ(rows[0].at("collapsed"), "0");
  EXPECT_EQ(rows[0].at("at_chance"), "0");

  // stats: the share >= 0.05 over the 1055 non-degenerate trials is 543/1055.
  auto st = Xwires("stats " + ShellQuote(Dir()) +
                   " --by none --exclude-degenerate --format csv");
  ASSERT_EQ(st.exit_code, 0) << st.err;
  rows = ParseCsv(st.out);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].at("trials"), "1055");
  EXPECT_NEAR(std::stod(rows[0].at("share_ge_0.05")), 543.0 / 1055, 1e-12);

  // show: per model, and the facts the flags come from.
  auto ds = Dataset::Open(Dir()).value();
  TrialQuery q;
  q.where = "name = dual_train_5e67eae2";
  auto trial = ds->Query(q).value();
  ASSERT_EQ(trial.size(), 1u);
  EXPECT_NE(trial[0].extra_json.find("\"loss_peak\":{\"pytorch\":5.8540646686793925e+19"),
            std::string::npos)
      << trial[0].extra_json;
  auto show = Xwires("show " + ShellQuote(Dir()) + " " + std::to_string(trial[0].id));
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_NE(show.out.find("collapsed  at_chance"), std::string::npos) << show.out;

  // A bundle carries the facts: imported elsewhere, the pair keeps its flags.
  q.where = "name = dual_train_df0e2a34";
  const int64_t clean_id = ds->Query(q).value().at(0).id;
  const std::string bundle = tmp_->path() + "/two.tar.zst", other = tmp_->path() + "/other";
  auto made = Xwires("bundle create " + ShellQuote(Dir()) + " --trials " +
                     std::to_string(trial[0].id) + "," + std::to_string(clean_id) + " -o " +
                     ShellQuote(bundle));
  ASSERT_EQ(made.exit_code, 0) << made.err;
  auto imported = Xwires("bundle import " + ShellQuote(other) + " " + ShellQuote(bundle));
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  for (const char* where : {"collapsed = 1 and at_chance = 1", "collapsed = 0 and at_chance = 0"}) {
    auto n = Xwires("query " + ShellQuote(other) + " --where '" + where + "' --count");
    EXPECT_EQ(n.out, "1\n") << where << n.err;
  }
}

// Writes `text` as a CSV and runs the import into a fresh directory.
struct BadImport {
  testutil::TempDir tmp;
  testutil::CommandResult Run(const std::string& text) {
    std::string csv = tmp.path() + "/in.csv";
    std::ofstream(csv) << text;
    return Xwires("import-crossedwires " + ShellQuote(tmp.path() + "/ds") +
                  " " + ShellQuote(csv) + " --arch vgg16");
  }
};

const char* kHeader =
    "Name,accuracy_diff,pt_test_acc,tf_test_acc,State,adam_epsilon,batch_size,"
    "epochs,"
    "learning_rate,pt_average_training_loss,pt_latest_training_loss,tf_"
    "training_loss\n";

TEST(CrossedWiresBadInput, GoodMinimalFileImports) {
  BadImport b;
  auto r = b.Run(
      std::string(kHeader) +
      "a,0.1,0.5,0.4,finished,0.1,32,2,0.01,\"[1,NaN]\",\"[1,2]\",\"[]\"\n");
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST(CrossedWiresBadInput, MissingColumnNonNumericAndBadListsChangeNothing) {
  struct Case {
    std::string csv, message;
  };
  std::vector<Case> cases = {
      {"Name,accuracy_diff,pt_test_acc\na,0.1,0.5\n",
       "missing required column(s): tf_test_acc, State"},
      {std::string(kHeader) + "a,0.1,0.5,0.4,finished,0.1,32,2,abc,[],[],[]\n",
       "in.csv:2: column 'learning_rate': 'abc' is not a number"},
      {std::string(kHeader) + "a,0.1,0.5,0.4,finished,0.1,3.5,2,0.1,[],[],[]\n",
       "column 'batch_size': '3.5' is not a positive integer"},
      {std::string(kHeader) +
           "a,0.1,0.5,0.4,finished,0.1,32,2,0.1,\"[1,x]\",[],[]\n",
       "column 'pt_average_training_loss': item 2 'x' of the loss list is not "
       "a number"},
      {std::string(kHeader) + "a,0.1,0.5,0.4,finished,0.1,32,2,0.1,[],[],[]\n"
                              "a,0.1,0.5,0.4,finished,0.1,32,2,0.1,[],[],[]\n",
       "duplicate trial name 'a'"},
      {std::string(kHeader) + "a,0.1,0.5\n", "line"},
      {std::string(kHeader), "no data rows"},
  };
  for (const Case& c : cases) {
    BadImport b;
    auto r = b.Run(c.csv);
    EXPECT_EQ(r.exit_code, 2) << c.csv;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(b.tmp.path() + "/ds"))
        << "a failed import created the dataset";
  }
  // Into an existing dataset: nothing changes either.
  BadImport b;
  ASSERT_EQ(b.Run(std::string(kHeader) +
                  "ok,0.1,0.5,0.4,finished,0.1,32,2,0.1,[],[],[]\n")
                .exit_code,
            0);
  std::string before = testutil::HashTree(b.tmp.path() + "/ds");
  auto r = b.Run(std::string(kHeader) +
                 "new,0.1,0.5,0.4,finished,0.1,32,2,zero,[],[],[]\n");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(testutil::HashTree(b.tmp.path() + "/ds"), before);
  auto missing =
      Xwires("import-crossedwires " + ShellQuote(b.tmp.path() + "/ds") +
             " /nonexistent.csv --arch vgg16");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("/nonexistent.csv: no such file"),
            std::string::npos);
}

// Impossible values in a row (the issue's table): the import names the file,
// row, column and value, stores nothing, and a good file still imports.
TEST(CrossedWiresBadInput, ImpossibleValuesAreRejectedAndChangeNothing) {
  const std::string good = "g,0.1,0.5,0.4,finished,0.1,32,2,0.01,[],[],[]\n";
  struct Case {
    std::string row, message;
  };
  const std::vector<Case> cases = {
      {"b,0.1,0.5,2.5,finished,0.1,32,2,0.01,[],[],[]\n",
       "in.csv:3: column 'tf_test_acc': '2.5' is not an accuracy in [0, 1]"},
      {"b,0.1,-0.3,0.4,finished,0.1,32,2,0.01,[],[],[]\n",
       "in.csv:3: column 'pt_test_acc': '-0.3' is not an accuracy in [0, 1]"},
      {"b,0.1,nan,0.4,finished,0.1,32,2,0.01,[],[],[]\n",
       "in.csv:3: column 'pt_test_acc': missing value"},
      {"b,0.1,0.5,0.4,finished,0.1,1e300,2,0.01,[],[],[]\n",
       "in.csv:3: column 'batch_size': '1e300' is not a positive integer that fits 64 bits"},
      {"b,0.1,0.5,0.4,finished,inf,32,2,0.01,[],[],[]\n",
       "in.csv:3: column 'adam_epsilon': 'inf' is not a finite number > 0"},
      {"b,0.1,0.5,0.4,finished,0.1,32,2,-0.01,[],[],[]\n",
       "in.csv:3: column 'learning_rate': '-0.01' is not a finite number > 0"},
      {"b,0.9,0.78,0.1,finished,0.1,32,2,0.01,[],[],[]\n",
       "in.csv:3: column 'accuracy_diff': 0.9 differs from |pt_test_acc - tf_test_acc| = "
       "|0.78 - 0.1| = 0.68"},
  };
  BadImport b;
  ASSERT_EQ(b.Run(std::string(kHeader) + good).exit_code, 0);
  const std::string before = testutil::HashTree(b.tmp.path() + "/ds");
  for (const Case& c : cases) {
    auto r = b.Run(std::string(kHeader) + "n," + good.substr(2) + c.row);
    EXPECT_EQ(r.exit_code, 2) << c.row;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
    EXPECT_EQ(testutil::HashTree(b.tmp.path() + "/ds"), before) << c.row;
  }
  EXPECT_EQ(b.Run(std::string(kHeader) + "n," + good.substr(2)).exit_code, 0);
  EXPECT_NE(testutil::HashTree(b.tmp.path() + "/ds"), before);
}

}  // namespace
}  // namespace xw
