// `xwires attribute DATASET TRIAL`: retrains the pair with one numerics knob
// switched at a time (A towards B and B towards A) and reports how much of
// the divergence each knob accounts for (api/attribute.h). The result is
// stored in the dataset unless --no-store.
#include <cstdio>
#include <string>
#include <vector>

#include "command.h"
#include "xwires/api/attribute.h"
#include "xwires/dataset/store/analysis.h"

namespace xw::cli {
namespace {

struct AttributeArgs {
  std::string dataset, format = "table";
  int64_t trial = 0;
  AttributeOptions opt;
  bool no_store = false, quiet = false;
};

void RunAttribute(AttributeArgs& a) {
  if (a.format != "table" && a.format != "json") {
    Check(Status::InvalidArgument("--format: '" + a.format +
                                  "' (expected table or json)"));
  }
  auto ds = Unwrap(Dataset::Open(
      a.dataset, a.no_store ? OpenMode::kReadOnly : OpenMode::kReadWrite));
  if (!a.quiet) {
    a.opt.on_run = [](int done, int total, const std::string& label) {
      std::fprintf(stderr, "attribute: run %d/%d done (%s)\n", done, total,
                   label.c_str());
    };
  }
  AttributionReport r = Unwrap(AttributeDivergence(*ds, a.trial, a.opt));
  const std::string json = AttributionJson(r);
  const std::string out = a.format == "json" ? json + "\n" : AttributionText(r);
  std::fwrite(out.data(), 1, out.size(), stdout);
  if (a.no_store) return;
  const AnalysisRecord row = AttributionAnalysisRecord(r);
  const int64_t id = Unwrap(StoreAnalysis(*ds, row));
  if (!a.quiet)
    std::fprintf(stderr, "stored attribution result %lld\n",
                 static_cast<long long>(id));
}

void RegisterAttribute(CLI::App& app) {
  auto a = std::make_shared<AttributeArgs>();
  auto* cmd = app.add_subcommand(
      "attribute",
      "Attribute a pair's divergence to numerics knobs by one-knob ablations");
  AddPairOptions(cmd, &a->dataset, &a->trial, &a->opt.profile_a, &a->opt.profile_b);
  cmd->add_option("--knob", a->opt.knobs,
                  "Only this knob, e.g. adam.variant (repeatable)");
  cmd->add_option("--jobs", a->opt.jobs,
                  "Parallel trainings (0: min(runs, cores))")
      ->capture_default_str();
  cmd->add_option("--threads", a->opt.threads,
                  "Threads per training (0: cores / jobs)")
      ->capture_default_str();
  cmd->add_option("--format", a->format, "table or json")
      ->capture_default_str();
  cmd->add_flag("--no-store", a->no_store,
                "Do not store the result in the dataset");
  cmd->add_flag("--quiet", a->quiet, "No progress output");
  cmd->callback([a] { RunAttribute(*a); });
}
XW_CLI_COMMAND(405, RegisterAttribute);

}  // namespace
}  // namespace xw::cli
