// The HTML report of a dataset (`xwires report DATASET -o report.html`): one
// self-contained file -- inline CSS and SVG, no scripts, no network -- with
//   1. divergence statistics per architecture (the CrossedWires study's
//      Tables 2-3: min / max / median / mean divergence, share >= threshold,
//      accuracy ranges per profile) and the most divergent trials (Tables
//      4-6);
//   2. distributions: a Gaussian KDE (kde.h) of each profile's test accuracy
//      per architecture, and of the divergence of every architecture;
//   3. hyperparameter space: scatter plots of each pair of varying
//      hyperparameters per architecture, coloured by divergence;
//   4. mutual information bars (mi_analysis.h) per architecture and overall;
//   5. training curves (per-epoch training loss, and test accuracy when
//      recorded) of the top divergent pairs of each architecture;
//   6. stored compare and attribute results (analysis_store.h).
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
  MiOptions mi;             // binned, 20 repeats, jitter 0.01 by default
  int kde_points = 160;     // grid points per density curve (>= 2)
};

struct Report {
  std::string html;
  std::vector<std::string> plot_ids;  // every data-plot id, in page order
};

// InvalidArgument for bad options or filter; NotFound if no trial matches.
Result<Report> BuildReport(const Dataset& ds, const ReportOptions& opt);

}  // namespace xw

#endif  // XWIRES_API_REPORT_H_
