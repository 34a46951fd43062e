// The HTML report of a dataset (`xwires report DATASET -o report.html`): one
// self-contained file -- inline CSS and SVG, no scripts, no network -- with
//   1. divergence statistics per architecture (the CrossedWires study's
//      Tables 2-3: min / max / median / mean divergence, share >= threshold,
//      accuracy ranges per profile) and the most divergent trials (Tables
//      4-6), with how many trials have a collapsed or at-chance model
//      (degenerate.h; left out of both tables on request);
//   2. distributions: a Gaussian KDE (kde.h) of each profile's test accuracy
//      per architecture, and of the divergence of every architecture, both
//      reflected at 0 and 1 (ReflectedKde); each profile has its fixed
//      colour (ProfileColor) in every report;
//   2b. searches: per search, each trial's objective in the order the trials
//      finished and the best so far (plot "best-search-<id>");
//   2c. replicas: per replicated profile pair (replicas.h), each replica's
//      test accuracy, each profile's mean with its 95% CI, and the verdict
//      (plot "replicas-<trial>-<a>-<b>-<family>"), with a table of all pairs;
//   3. hyperparameter space: scatter plots of each pair of varying
//      hyperparameters per architecture, coloured by divergence;
//   4. mutual information bars (mi_analysis.h) per architecture and overall,
//      single variables and pairs on separate axes, each bar with its
//      permutation null marked;
//   5. training curves (per-epoch training loss, and test accuracy when
//      recorded) of the top divergent pairs of each architecture;
//   6. stored compare and attribute results (analysis_store.h): compare's
//      activation differences per module, named on the axis; attribute's
//      table with the CLI's columns (AttributionKnobTable).
// Works on imported CrossedWires results (no weights, loss curves only) and
// on our own searches alike. Every plot is an <svg data-plot="<id>">; the
// ids are returned so callers (and tests) can check a rendered page.
//
// Read-only; thread-safety as Dataset.
#ifndef XWIRES_API_REPORT_H_
#define XWIRES_API_REPORT_H_

#include <string>
#include <vector>

#include "xwires/api/mutual_info.h"
#include "xwires/core/status.h"
#include "xwires/dataset/store/dataset.h"

namespace xw {

struct ReportOptions {
  std::string title = "xwires divergence report";
  std::vector<std::string> archs;  // only these ("" = all)
  std::string where;               // filter language of query.h
  int top_k = 3;  // curves of the k most divergent pairs per arch (>= 0)
  double threshold = 0.05;  // stats share column
  MiOptions mi;  // binned, 20 repeats, jitter 0.01, 200 shuffles by default
  int kde_points = 160;     // grid points per density curve (>= 2)
  // Statistics and most divergent trials leave out trials with a collapsed
  // or at-chance model (degenerate.h); the counts are shown either way.
  bool exclude_degenerate = false;
};

struct Report {
  std::string html;
  std::vector<std::string> plot_ids;  // every data-plot id, in page order
};

// InvalidArgument for bad options or filter; NotFound if no trial matches.
Result<Report> BuildReport(const Dataset& ds, const ReportOptions& opt);

}  // namespace xw

#endif  // XWIRES_API_REPORT_H_
