// The HTML report: density and plotting helpers against known values, the
// report of imported CrossedWires rows (their statistics appear verbatim),
// a report with stored compare/attribute results, rendering in headless
// Chromium with every plot present, and the CLI leaving an existing report
// untouched on bad input.
#include "xwires/api/report.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>

#include "analysis_test_util.h"
#include "xwires/api/kde.h"
#include "xwires/api/svg_plot.h"
#include "xwires/dataset/query/stats.h"
#include "xwires/dataset/store/crossedwires.h"

namespace xw {
namespace {

using testing::TempDir;

TEST(KdeTest, MatchesScipyGaussianKde) {
  // scipy.stats.gaussian_kde([0.1, 0.2, 0.25, 0.7, 0.9]) (scipy 1.10):
  // factor * std(ddof=1) = 0.2531546531815126; density at 0, 0.3, 0.8.
  const std::vector<double> s = {0.1, 0.2, 0.25, 0.7, 0.9};
  const double h = ScottBandwidth(s);
  EXPECT_NEAR(h, 0.2531546531815126, 1e-15);
  const std::vector<double> grid = {0.0, 0.3, 0.8};
  const auto f = GaussianKde(s, grid, h);
  EXPECT_NEAR(f[0], 0.7232132346314968, 1e-14);
  EXPECT_NEAR(f[1], 0.9407510694794673, 1e-14);
  EXPECT_NEAR(f[2], 0.6386923819264324, 1e-14);
  EXPECT_EQ(ScottBandwidth(std::vector<double>{1.0}), 0.0);
  EXPECT_EQ(Linspace(0, 1, 3), (std::vector<double>{0, 0.5, 1}));
}

TEST(SvgTest, HelpersProduceTaggedEscapedCharts) {
  EXPECT_EQ(XmlEscape("a<b & \"c\""), "a&lt;b &amp; &quot;c&quot;");
  EXPECT_EQ(ViridisColor(0), "#440154");
  EXPECT_EQ(ViridisColor(1), "#fde725");
  EXPECT_EQ(NiceTicks(0, 1, 5),
            (std::vector<double>{0, 0.2, 0.4, 0.6000000000000001, 0.8, 1}));
  const std::string svg =
      LinePlotSvg("p-1", "t<1>", {"x"}, {"y"},
                  {{"s&1", {1, 2, NAN, 4}, {1, 2, 3, 4}, false, ""}});
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("data-plot=\"p-1\""), std::string::npos);
  EXPECT_NE(svg.find("t&lt;1&gt;"), std::string::npos);
  EXPECT_NE(svg.find("s&amp;1"), std::string::npos);
  // The NaN breaks the line into two polylines.
  EXPECT_EQ(std::count(svg.begin(), svg.end(), '\n'), 0);
  size_t polylines = 0;
  for (size_t p = svg.find("<polyline"); p != std::string::npos;
       p = svg.find("<polyline", p + 1))
    ++polylines;
  EXPECT_EQ(polylines, 2u);
  const std::string bars =
      BarPlotSvg("b", "bars", {"lr", "lr+eps"}, {0.1, 0.3}, {0.01, 0.02}, "MI");
  size_t rects = 0;
  for (size_t p = bars.find("<rect x="); p != std::string::npos;
       p = bars.find("<rect x=", p + 1))
    ++rects;
  EXPECT_EQ(rects, 2u);
}

std::set<std::string> DomPlotIds(const std::string& html_path,
                                 std::string* dom) {
  const std::string profile = html_path + ".chromium";
  const std::string cmd =
      "chromium --headless --no-sandbox --disable-gpu --disable-quic "
      "--no-first-run "
      "--disable-background-networking --disable-component-update "
      "--disable-sync "
      "--user-data-dir=" +
      profile + " --dump-dom file://" + html_path + " 2>/dev/null";
  const int rc = testing::Run(cmd, dom);
  EXPECT_EQ(rc, 0) << "headless chromium failed (scripts/setup.sh installs "
                      "Debian's chromium)";
  std::set<std::string> ids;
  const std::regex svg_re("<svg[^>]*data-plot=\"([^\"]+)\"");
  for (std::sregex_iterator it(dom->begin(), dom->end(), svg_re), end;
       it != end; ++it) {
    ids.insert((*it)[1]);
  }
  return ids;
}

class HtmlReportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto ds = Dataset::Open(dir_.path() + "/ds", OpenMode::kCreate);
    ASSERT_TRUE(ds.ok());
    ds_ = std::move(ds).value();
  }
  void Import(const std::string& arch) {
    const std::string f = std::string(XWIRES_SOURCE_DIR) +
                          "/tests/api/fixtures/crossedwires_" + arch +
                          "_head40.csv";
    auto r = ImportCrossedWires(*ds_, f, arch);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }
  TempDir dir_;
  std::unique_ptr<Dataset> ds_;
};

TEST_F(HtmlReportTest, ImportedCrossedWiresRowsRenderWithEveryPlotInChromium) {
  Import("vgg16");
  Import("resnet50");
  ReportOptions opt;
  opt.mi.repeats = 5;
  auto r = BuildReport(*ds_, opt);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const std::string& html = r->html;
  // The statistics table carries the store's numbers (Table 2 of the study
  // on the full files; here on 40 rows each).
  StatsOptions so;
  auto stats = ComputeStats(*ds_, so);
  ASSERT_TRUE(stats.ok());
  for (const GroupStats& g : *stats) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "<td class=\"num\">%.4g</td>", g.div_median);
    EXPECT_NE(html.find(buf), std::string::npos)
        << g.group << " median " << buf;
    std::snprintf(buf, sizeof buf, "<td class=\"num\">%.4g</td>",
                  g.share_at_least);
    EXPECT_NE(html.find(buf), std::string::npos) << g.group << " share " << buf;
  }
  // Every expected plot, each once.
  const std::set<std::string> ids(r->plot_ids.begin(), r->plot_ids.end());
  EXPECT_EQ(ids.size(), r->plot_ids.size());
  for (const char* id :
       {"kde-acc-vgg16", "kde-acc-resnet50", "kde-divergence",
        "scatter-vgg16-lr-adam_eps", "scatter-resnet50-batch_size-epochs",
        "mi-vgg16", "mi-resnet50", "mi-all"}) {
    EXPECT_TRUE(ids.count(id)) << id;
  }
  size_t curves = 0;
  for (const std::string& id : ids) curves += id.rfind("curves-", 0) == 0;
  EXPECT_EQ(curves, 6u);  // top 3 of 2 architectures, loss curves only
  // Self-contained: no scripts, no external resources.
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("src="), std::string::npos);
  EXPECT_EQ(html.find("href=\"http"), std::string::npos);

  const std::string path = dir_.path() + "/report.html";
  std::ofstream(path) << html;
  std::string dom;
  EXPECT_EQ(DomPlotIds(path, &dom), ids);
  EXPECT_NE(dom.find("Divergence statistics"), std::string::npos);
}

TEST_F(HtmlReportTest,
       OwnRunsWithStoredAnalysesAndCliKeepsOldReportOnBadInput) {
  testing::TinyRun run;
  run.arch = "mlp";
  run.train = 60;
  run.test = 30;
  run.epochs = 2;
  for (uint64_t seed : {0, 1, 2}) {
    run.seed = seed;
    run.lr = 1e-3 * (seed + 1);
    testing::TrainAndStore(
        *ds_, {testing::Shipped("torch"), testing::Shipped("tf")}, run);
  }
  ds_.reset();
  const std::string ds = dir_.path() + "/ds", out = dir_.path() + "/own.html";
  std::string text;
  ASSERT_EQ(testing::Run(
                testing::Cli() + " compare " + ds + " 1 --probe 4 --store 2>&1",
                &text),
            0)
      << text;
  ASSERT_EQ(testing::Run(testing::Cli() + " attribute " + ds +
                             " 2 --knob adam.variant --knob init --quiet 2>&1",
                         &text),
            0)
      << text;
  ASSERT_EQ(
      testing::Run(testing::Cli() + " report " + ds + " -o " + out + " 2>&1",
                   &text),
      0)
      << text;
  const std::string html = testing::ReadFile(out);
  for (const char* id :
       {"compare-1-layers", "attribute-2-shares", "curves-1-loss",
        "curves-1-acc", "kde-acc-mlp", "kde-divergence", "mi-mlp"}) {
    EXPECT_NE(html.find(std::string("data-plot=\"") + id + "\""),
              std::string::npos)
        << id;
  }
  std::string dom;
  const std::set<std::string> dom_ids = DomPlotIds(out, &dom);
  EXPECT_TRUE(dom_ids.count("compare-1-layers"));
  EXPECT_TRUE(dom_ids.count("attribute-2-shares"));

  // Bad input: a clear error, exit code 2, and the old report is untouched.
  EXPECT_EQ(testing::Run(testing::Cli() + " report " + ds + " -o " + out +
                             " --where 'nosuchfield > 1' 2>&1",
                         &text),
            2);
  EXPECT_NE(text.find("nosuchfield"), std::string::npos) << text;
  EXPECT_EQ(testing::Run(testing::Cli() + " report " + ds + " -o " + out +
                             " --top -1 2>&1",
                         &text),
            2);
  EXPECT_EQ(testing::ReadFile(out), html);
  EXPECT_EQ(
      testing::Run(testing::Cli() + " mi " + ds + " --format csv 2>&1", &text),
      0)
      << text;
  EXPECT_NE(text.find("group,variable,mi_mean,mi_std,n"), std::string::npos);
  EXPECT_NE(text.find("mlp,lr,"), std::string::npos);
}

}  // namespace
}  // namespace xw
