// The report draws what it claims: densities reflected at the bounds of
// [0, 1], one fixed colour per profile, a best-so-far plot per search,
// compare's modules named on the axis, attribute's table with the CLI's
// columns, pair MI on its own axis, and -- rendered in headless Chromium --
// every chart's text inside its figure and a screenshot that is not blank.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <iterator>
#include <sstream>

#include "analysis_test_util.h"
#include "chromium_util.h"
#include "xwires/dataset/query/query.h"
#include "xwires/api/attribute.h"
#include "xwires/api/kde.h"
#include "xwires/api/report.h"
#include "xwires/api/svg_plot.h"
#include "xwires/core/significance.h"
#include "xwires/dataset/store/degenerate.h"
#include "xwires/dataset/store/replicas.h"

namespace xw {
namespace {

using testing::Cli;

using testing::TempDir;

TEST(ReflectedKdeTest, KnownValueUnitMassAndFlatBoundary) {
  // Samples 0.1 and 0.2, h = 0.1, at x = 0: each sample and its mirror image
  // at -x_i contribute phi(x_i / h) twice (the mirror at 2 - x_i is 19+
  // bandwidths away): (2 e^-0.5 + 2 e^-2) / (2 h sqrt(2 pi)).
  const std::vector<double> s = {0.1, 0.2}, at0 = {0.0};
  const double want =
      (2 * std::exp(-0.5) + 2 * std::exp(-2.0)) / (2 * 0.1 * std::sqrt(2 * M_PI));
  EXPECT_NEAR(ReflectedKde(s, at0, 0.1, 0, 1)[0], want, 1e-12);
  // Accuracies crowding at 0 (models at chance on a 10-class task are near
  // 0.1; divergences of agreeing pairs near 0): the reflected estimate keeps
  // its whole mass in [0, 1], the plain one loses 6% of it below 0.
  std::vector<double> near0;
  for (int i = 0; i < 40; ++i) near0.push_back(0.002 * i);
  const double h = ScottBandwidth(near0);
  const std::vector<double> grid = Linspace(0, 1, 4001);
  auto mass = [&grid](const std::vector<double>& f) {
    double m = 0;
    for (size_t i = 1; i < grid.size(); ++i) m += 0.5 * (f[i] + f[i - 1]) * (grid[i] - grid[i - 1]);
    return m;
  };
  EXPECT_NEAR(mass(ReflectedKde(near0, grid, h, 0, 1)), 1.0, 1e-3);
  EXPECT_LT(mass(GaussianKde(near0, grid, h)), 0.95);
  // Zero slope at the bound: f(0) and f(h / 100) agree to second order.
  const std::vector<double> edge = {0.0, h / 100};
  const auto f = ReflectedKde(near0, edge, h, 0, 1);
  EXPECT_NEAR(f[0], f[1], 1e-3 * f[0]);
  EXPECT_EQ(ReflectedKde(near0, std::vector<double>{-0.01, 1.01}, h, 0, 1),
            (std::vector<double>{0, 0}));
}

TEST(ProfileColorTest, FixedPerProfileWhateverElseTheDatasetHolds) {
  EXPECT_EQ(ProfileColor("torch"), "#ee4c2c");
  EXPECT_EQ(ProfileColor("pytorch"), "#ee4c2c");
  EXPECT_EQ(ProfileColor("tf"), "#1f77b4");
  EXPECT_EQ(ProfileColor("tensorflow"), "#1f77b4");
  EXPECT_EQ(ProfileColor("reference"), "#2ca02c");
  EXPECT_EQ(ProfileColor("torch_keras"), ProfileColor("torch_keras"));
  EXPECT_NE(ProfileColor("torch_keras"), ProfileColor("torch"));
}

TEST(SvgLayoutTest, ChartsGrowToHoldLongLegendsTitlesAndLabels) {
  auto width = [](const std::string& svg) {
    std::smatch m;
    EXPECT_TRUE(std::regex_search(svg, m, std::regex("width=\"([0-9.]+)\"")));
    return std::stod(m[1]);
  };
  const std::string name(60, 'x');
  const std::string short_legend =
      LinePlotSvg("a", "t", {"x"}, {"y"}, {{"a", {0, 1}, {0, 1}, false, "", false}});
  const std::string long_legend =
      LinePlotSvg("b", "t", {"x"}, {"y"}, {{name, {0, 1}, {0, 1}, false, "", false}});
  // (Coordinates are written with one decimal.)
  EXPECT_GE(width(long_legend) - width(short_legend),
            TextWidth(name, 11) - TextWidth("a", 11) - 0.1);
  const std::string bars = BarPlotSvg("c", "t", {name}, {0.5}, {}, "v");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(bars, m, std::regex("<rect x=\"([0-9.]+)\" y=")));
  EXPECT_GE(std::stod(m[1]), TextWidth(name, 11));  // bars start right of the label
}

TEST(SvgLayoutTest, ErrorBarsAreDrawnAndInsideTheYRange) {
  // One point at y = 0.5 with err 0.3: the bar spans 0.2..0.8, and the axis
  // (fitted with 4% padding) reaches past both ends, so the tick labels
  // include 0.2 and 0.8.
  LineSeries s{"m", {1}, {0.5}, false, "#123456", true};
  s.err = {0.3};
  const std::string svg = LinePlotSvg("e", "t", {"x"}, {"y"}, {s});
  EXPECT_NE(svg.find("<path d=\"M"), std::string::npos);
  EXPECT_NE(svg.find(">0.2<"), std::string::npos);
  EXPECT_NE(svg.find(">0.8<"), std::string::npos);
  s.err = {NAN};
  EXPECT_EQ(LinePlotSvg("e", "t", {"x"}, {"y"}, {s}).find("<path d=\"M"), std::string::npos);
}

// The legend "tensorflow (n=400)" of the CrossedWires VGG16 file's accuracy
// density ran 5 px past its figure before charts sized themselves to their
// text.
TEST(ReportLayoutTest, CrossedWiresLegendsStayInsideTheirFigures) {
  TempDir dir;
  const std::string ds = dir.path() + "/cw", html = dir.path() + "/cw.html";
  const std::string csv = std::string(XWIRES_SOURCE_DIR) +
                          "/tests/fixtures/crossedwires/vgg16_cifar10_results.csv";
  std::string out;
  ASSERT_EQ(testing::Run(Cli() + " import-crossedwires " + ds + " " + csv + " --arch vgg16 2>&1",
                         &out),
            0)
      << out;
  ASSERT_EQ(testing::Run(Cli() + " report " + ds + " -o " + html + " --mi-repeats 2 2>&1", &out),
            0)
      << out;
  EXPECT_NE(testing::ReadFile(html).find("tensorflow (n=400)"), std::string::npos);
  int measured = 0;
  const auto clipped = testing::ClippedTexts(html, &measured);
  EXPECT_GT(measured, 100);
  EXPECT_TRUE(clipped.empty()) << clipped.size() << " clipped, first: " << clipped.front();
}

class SearchReportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ds_ = dir_.path() + "/ds";
    const std::string space = dir_.path() + "/space.json";
    std::ofstream(space) << R"({"dimensions": [
        {"name": "lr", "type": "real", "low": 1e-3, "high": 0.05, "log": true},
        {"name": "adam_eps", "type": "real", "low": 1e-8, "high": 1.0, "log": true}],
      "train": {"batch_size": 50, "epochs": 2}, "trials_per_subspace": 2,
      "budget": {"max_seconds": 0}})";
    std::string out;
    ASSERT_EQ(testing::Run(Cli() + " search --config " + space + " --dataset " + ds_ +
                      " --arch simple_cnn --width 0.25 --train-limit 200 --test-limit 100"
                      " --objective abs_acc_diff --jobs 2 --quiet 2>&1",
                  &out),
              0)
        << out;
    auto ds = Dataset::Open(ds_, OpenMode::kReadOnly);
    ASSERT_TRUE(ds.ok());
    TrialQuery q;
    q.where = "diff >= 0";
    q.order_by = {"-diff", "id"};
    auto rows = (*ds)->Query(q);
    ASSERT_TRUE(rows.ok() && rows->size() == 8u);
    trial_ = rows->front().id;
  }
  TempDir dir_;
  std::string ds_;
  int64_t trial_ = 0;
};

// The search's best pair leaves out degenerate trials on request: resuming
// the finished search (nothing left to train) with --exclude-degenerate
// prints the best non-degenerate trial and a final table without degenerate
// rows.
TEST_F(SearchReportTest, BestPairExcludesDegenerateTrialsOnRequest) {
  auto ds = Dataset::Open(ds_, OpenMode::kReadOnly).value();
  TrialQuery q;
  q.where = "search_id = 1 and diff >= 0";
  q.order_by = {"id"};
  int64_t best = 0, best_any = 0;
  double top = -1, top_any = -1;
  const std::vector<TrialRow> trials = ds->Query(q).value();
  ASSERT_EQ(trials.size(), 8u);
  for (const TrialRow& r : trials) {
    // The trainer recorded the facts the flags come from (degenerate.h).
    const auto extra = nlohmann::json::parse(r.extra_json);
    EXPECT_EQ(extra["test_set"], nlohmann::json({{"classes", 10}, {"examples", 100}}))
        << r.extra_json;
    EXPECT_TRUE(extra["loss_peak"].contains("torch") && extra["loss_peak"].contains("tf"))
        << r.extra_json;
    if (r.divergence > top_any) top_any = r.divergence, best_any = r.id;
    if (!IsDegenerate(DegenerateFlags(r)) && r.divergence > top) top = r.divergence, best = r.id;
  }
  ds.reset();
  std::string out;
  ASSERT_EQ(testing::Run(Cli() + " search --resume 1 --dataset " + ds_ + " --quiet 2>&1", &out),
            0)
      << out;
  EXPECT_NE(out.find("(trial " + std::to_string(best_any) + ")"), std::string::npos) << out;
  ASSERT_EQ(testing::Run(Cli() + " search --resume 1 --dataset " + ds_ +
                             " --exclude-degenerate --quiet 2>&1",
                         &out),
            0)
      << out;
  if (best > 0) {
    EXPECT_NE(out.find("(trial " + std::to_string(best) + ", degenerate trials excluded)"),
              std::string::npos)
        << out;
  } else {
    EXPECT_EQ(out.find("; best "), std::string::npos) << out;  // every trial degenerate
  }
  // The final table: no row flagged.
  const size_t table = out.find("most divergent pairs of search 1:");
  ASSERT_NE(table, std::string::npos) << out;
  std::istringstream lines(out.substr(table));
  std::string line;
  int rows = 0;
  std::getline(lines, line);  // title
  std::getline(lines, line);  // header
  EXPECT_NE(line.find("collapsed  at_chance"), std::string::npos) << line;
  std::getline(lines, line);  // rule
  while (std::getline(lines, line) && line.rfind("dataset:", 0) != 0) {
    ++rows;
    std::istringstream cells(line);
    std::vector<std::string> v{std::istream_iterator<std::string>(cells),
                               std::istream_iterator<std::string>()};
    ASSERT_GE(v.size(), 2u) << line;
    EXPECT_NE(v[v.size() - 2], "1") << line;  // collapsed
    EXPECT_NE(v.back(), "1") << line;         // at_chance
  }
  EXPECT_EQ(rows > 0, best > 0) << out;
}

TEST_F(SearchReportTest, DrawsWhatItClaimsAndRendersUnclippedInChromium) {
  const std::string id = std::to_string(trial_), html_path = dir_.path() + "/report.html";
  std::string out, attribute_cli;
  ASSERT_EQ(testing::Run(Cli() + " compare " + ds_ + " " + id + " --probe 4 --store 2>&1", &out), 0) << out;
  // Replicas of the most divergent pair (K = 4 a side: the trial and 3 seed
  // replicas of each profile), before attribute, which tests each knob's
  // effect against their noise sd.
  ASSERT_EQ(testing::Run(Cli() + " replicate " + ds_ + " " + id +
                             " --replicas 4 --jobs 2 --quiet 2>&1",
                         &out),
            0)
      << out;
  ASSERT_EQ(testing::Run(Cli() + " attribute " + ds_ + " " + id +
                    " --knob adam.variant --knob init --quiet 2>/dev/null",
                &attribute_cli),
            0)
      << attribute_cli;
  ASSERT_EQ(testing::Run(Cli() + " report " + ds_ + " -o " + html_path + " 2>&1", &out), 0) << out;
  const std::string html = testing::ReadFile(html_path);
  auto plot = [&html](const std::string& plot_id) {
    const size_t at = html.find("data-plot=\"" + plot_id + "\"");
    if (at == std::string::npos) return std::string();
    return html.substr(at, html.find("</svg>", at) - at);
  };
  // A best-so-far plot for the search: 8 trial dots and the running best.
  const std::string best = plot("best-search-1");
  ASSERT_FALSE(best.empty());
  EXPECT_NE(best.find("best so far"), std::string::npos);
  size_t dots = 0;
  for (size_t p = best.find("<circle"); p != std::string::npos; p = best.find("<circle", p + 1))
    ++dots;
  EXPECT_EQ(dots, 8u + 1u);  // + the legend's dot
  // Compare's modules are named on the axis (simple_cnn: conv1 ... fc2, and
  // the functional relu by its type).
  const std::string layers = plot("compare-1-layers");
  ASSERT_FALSE(layers.empty());
  for (const char* name : {">conv1<", ">bn1<", ">fc2<", ">ReLU (2)<"})
    EXPECT_NE(layers.find(name), std::string::npos) << name;
  // Attribute tested each knob against the replicas' noise floor.
  EXPECT_NE(attribute_cli.find("beyond the noise floor (single-run effects above"),
            std::string::npos)
      << attribute_cli;
  EXPECT_EQ(attribute_cli.find("no replicas of this pair"), std::string::npos);
  // Attribute's table has the CLI's columns, every one of them.
  Table cli_table = AttributionKnobTable(AttributionReport{});
  for (const std::string& col : cli_table.columns) {
    EXPECT_NE(attribute_cli.find(col), std::string::npos) << col;
    EXPECT_NE(html.find("<th>" + col + "</th>"), std::string::npos) << col;
  }
  // The replicated pair: 4 replica dots per profile, each profile's mean
  // with an error bar (a path of one vertical stroke and two caps), the
  // verdict in the title, the stored one in the table.
  auto ds = Dataset::Open(ds_, OpenMode::kReadOnly).value();
  const auto st = LoadReplicaStats(*ds, trial_).value();
  ASSERT_EQ(st.size(), 1u);
  const std::string reps = plot("replicas-" + id + "-torch-tf-seed");
  ASSERT_FALSE(reps.empty()) << "no replica plot";
  const std::string verdict = stats::VerdictName(st[0].stats.verdict);
  EXPECT_NE(reps.find("): " + verdict + ", p = "), std::string::npos) << verdict;
  size_t replica_dots = 0, bars = 0;
  for (size_t p = reps.find("<circle"); p != std::string::npos; p = reps.find("<circle", p + 1))
    ++replica_dots;
  for (size_t p = reps.find("<path d=\"M"); p != std::string::npos;
       p = reps.find("<path d=\"M", p + 1))
    ++bars;
  EXPECT_EQ(replica_dots, 2u * 4u + 2u + 4u);  // replicas, means, 4 legend dots
  EXPECT_EQ(bars, 2u);
  EXPECT_NE(html.find("data-table=\"replicas\""), std::string::npos);
  EXPECT_NE(html.find("<td>" + verdict + "</td>"), std::string::npos);
  // Degenerate-model counts above the statistics.
  EXPECT_NE(html.find("data-table=\"degenerate\""), std::string::npos);

  // Pairs have their own MI axis; bars carry the permutation null.
  EXPECT_FALSE(plot("mi-simple_cnn").empty());
  const std::string pairs = plot("mi-simple_cnn-pairs");
  ASSERT_FALSE(pairs.empty());
  EXPECT_NE(pairs.find("lr+adam_eps"), std::string::npos);
  EXPECT_EQ(plot("mi-simple_cnn").find("lr+adam_eps"), std::string::npos);
  EXPECT_NE(pairs.find("class=\"marker\""), std::string::npos);
  // Each profile in its own fixed colour.
  const std::string kde = plot("kde-acc-simple_cnn");
  EXPECT_NE(kde.find("stroke=\"" + ProfileColor("torch") + "\""), std::string::npos);
  EXPECT_NE(kde.find("stroke=\"" + ProfileColor("tf") + "\""), std::string::npos);

  // Rendered: no chart text leaves its figure, and the page is drawn.
  int measured = 0;
  const auto clipped = testing::ClippedTexts(html_path, &measured);
  EXPECT_GT(measured, 100);
  EXPECT_TRUE(clipped.empty()) << clipped.size() << " clipped, first: " << clipped.front();
  const testing::Pixels shot = testing::Screenshot(html_path, 1280, 3000);
  ASSERT_EQ(shot.width, 1280) << "no screenshot (chromium or libpng failed)";
  const double ink = static_cast<double>(shot.NonWhite()) / (1280.0 * 3000.0);
  EXPECT_GT(ink, 0.02) << "a blank page";
  EXPECT_GT(shot.Count(ProfileColor("torch"), 40), 50) << "no torch curve drawn";
  EXPECT_GT(shot.Count(ProfileColor("tf"), 40), 50) << "no tf curve drawn";
}

}  // namespace
}  // namespace xw
