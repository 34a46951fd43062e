// `xwires merge DATASET OTHER_DATASET`: adds OTHER's trials that DATASET does
// not already hold (same content hash), with weights, curves, searches,
// analyses, replicas and their statistics, in one all-or-nothing step.
#include <cstdio>
#include <string>

#include "command.h"
#include "xwires/dataset/bundle/bundle.h"
#include "xwires/dataset/query/isa_pooling.h"
#include "xwires/dataset/store/dataset.h"

namespace xw::cli {
namespace {

struct MergeArgs {
  std::string dataset, other;
};

void RunMerge(const MergeArgs& a) {
  auto other = Unwrap(Dataset::Open(a.other, OpenMode::kReadOnly));
  auto ds = Unwrap(Dataset::Open(a.dataset, OpenMode::kCreate));
  BundleImportReport r = Unwrap(MergeDatasets(*ds, *other));
  std::printf(
      "%s: added %lld trials, skipped %lld already present\n"
      "analyses: added %lld, skipped %lld already present\n"
      "replicas: added %lld, skipped %lld already present; statistics: added %lld, "
      "skipped %lld\nprovenance: %s\n",
      a.other.c_str(), static_cast<long long>(r.added),
      static_cast<long long>(r.skipped),
      static_cast<long long>(r.analyses_added),
      static_cast<long long>(r.analyses_skipped), static_cast<long long>(r.replicas_added),
      static_cast<long long>(r.replicas_skipped), static_cast<long long>(r.replica_stats_added),
      static_cast<long long>(r.replica_stats_skipped), r.provenance.c_str());
  for (const IsaMixedProfile& p : Unwrap(FindIsaMixedProfiles(*ds))) {
    std::fprintf(stderr, "%s\n", IsaMixedWarning(p).c_str());
  }
}

void RegisterMerge(CLI::App& app) {
  auto a = std::make_shared<MergeArgs>();
  auto* cmd = app.add_subcommand(
      "merge", "Add another dataset's new trials to a dataset");
  cmd->add_option("dataset", a->dataset,
                  "Dataset directory (created if missing)")
      ->required();
  cmd->add_option("other", a->other, "Dataset to merge from (read only)")
      ->required();
  cmd->callback([a] { RunMerge(*a); });
}
XW_CLI_COMMAND(310, RegisterMerge);

}  // namespace
}  // namespace xw::cli
