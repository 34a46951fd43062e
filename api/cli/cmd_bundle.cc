// `xwires bundle create|verify|import`: contribution bundles
// (docs/contributing.md). Bundles are untrusted: verify and import check
// everything before a dataset is opened or created, so a bad bundle changes
// nothing on disk.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "bundle_checkers.h"
#include "command.h"
#include "train_common.h"
#include "xwires/dataset/bundle/bundle.h"
#include "xwires/dataset/query/isa_pooling.h"
#include "xwires/dataset/store/dataset.h"

namespace xw::cli {
namespace {

struct CreateArgs {
  std::string dataset, trials, out, contributor;
  int64_t search = -1;
};

void RunCreate(const CreateArgs& a) {
  std::vector<int64_t> ids;
  for (const std::string& item : SplitList(a.trials)) {
    size_t used = 0;
    long long id = 0;
    try {
      id = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size() || id <= 0) {
      Check(Status::InvalidArgument("--trials: '" + item +
                                    "' is not a trial id"));
    }
    ids.push_back(id);
  }
  if ((a.search >= 0) == !ids.empty()) {
    Check(Status::InvalidArgument(
        "give exactly one of --search ID and --trials LIST"));
  }
  auto ds = Unwrap(Dataset::Open(a.dataset, OpenMode::kReadOnly));
  BundleCreateOptions o;
  o.contributor = a.contributor;
  auto search = a.search >= 0 ? std::optional<int64_t>(a.search) : std::nullopt;
  BundleCreateResult r = Unwrap(CreateBundle(*ds, search, ids, a.out, o));
  std::printf("wrote %s: %lld trials, %llu bytes, sha256 %s\n", a.out.c_str(),
              static_cast<long long>(r.trials),
              static_cast<unsigned long long>(r.bytes), r.sha256.c_str());
}

struct VerifyArgs {
  std::string bundle, data;
  int replay = 0;
  int replay_replicas = 1;
  uint64_t seed = 0;
  double tolerance = 0.02;
  int threads = 0;
};

void RunVerify(const VerifyArgs& a) {
  if (a.replay < 0) Check(Status::InvalidArgument("--replay must be >= 0"));
  if (a.replay_replicas < -1) {
    Check(Status::InvalidArgument("--replay-replicas must be >= -1 (-1: all)"));
  }
  if (!(a.tolerance >= 0 && a.tolerance <= 1)) {
    Check(Status::InvalidArgument("--tolerance must be in [0, 1]"));
  }
  BundleVerifyOptions o;
  o.replay = a.replay;
  o.replay_seed = a.seed;
  o.replica_replays = a.replay_replicas;
  o.accuracy_tolerance = a.tolerance;
  o.log = [](const std::string& line) {
    std::printf("  %s %s\n", line.rfind("replay:", 0) == 0 ? "--" : "ok",
                line.c_str());
    std::fflush(stdout);
  };
  ReplaySettings rs{a.threads, a.data};
  BundleReport r = Unwrap(VerifyBundle(a.bundle, MakeBundleCheckers(rs), o));
  const int failed = static_cast<int>(
      std::count_if(r.replays.begin(), r.replays.end(),
                    [](const ReplayOutcome& x) { return !x.passed; }));
  std::printf("%s: %lld trials, %lld weights files, %lld replicas, %lld replica statistics, "
              "sha256 %s\n",
              a.bundle.c_str(), static_cast<long long>(r.trials),
              static_cast<long long>(r.models_with_weights),
              static_cast<long long>(r.replicas), static_cast<long long>(r.replica_stats),
              r.bundle_sha256.c_str());
  if (a.replay > 0) {
    const auto replicas = std::count_if(r.replays.begin(), r.replays.end(),
                                        [](const ReplayOutcome& x) { return !x.replica.empty(); });
    std::printf("replay: %zu models re-trained, %d failed", r.replays.size(), failed);
    if (replicas > 0) std::printf(" (%lld of them replicas)", static_cast<long long>(replicas));
    std::printf("\n");
  }
  if (failed > 0) {
    Check(Status::Corruption(
        "replay failed: " + std::to_string(failed) +
        " model(s) do not reproduce; the bundle is not accepted"));
  }
  std::printf("bundle OK\n");
}

struct ImportArgs {
  std::string dataset, bundle;
};

void RunImport(const ImportArgs& a) {
  const BundleCheckers checkers = MakeBundleCheckers({});
  // Check the whole bundle before the dataset is opened: a new dataset
  // directory is created only for a bundle that will import.
  Unwrap(VerifyBundle(a.bundle, checkers, {}));
  auto ds = Unwrap(Dataset::Open(a.dataset, OpenMode::kCreate));
  BundleImportReport r = Unwrap(ImportBundle(*ds, a.bundle, checkers, {}));
  std::printf(
      "%s: added %lld trials, skipped %lld already present\n"
      "analyses: added %lld, skipped %lld already present\n"
      "replicas: added %lld, skipped %lld already present; statistics: added %lld, "
      "skipped %lld\nprovenance: %s\n",
      a.bundle.c_str(), static_cast<long long>(r.added),
      static_cast<long long>(r.skipped),
      static_cast<long long>(r.analyses_added),
      static_cast<long long>(r.analyses_skipped), static_cast<long long>(r.replicas_added),
      static_cast<long long>(r.replicas_skipped), static_cast<long long>(r.replica_stats_added),
      static_cast<long long>(r.replica_stats_skipped), r.provenance.c_str());
  // The import pools the bundle's models with the dataset's (isa_pooling.h).
  for (const IsaMixedProfile& p : Unwrap(FindIsaMixedProfiles(*ds))) {
    std::fprintf(stderr, "%s\n", IsaMixedWarning(p).c_str());
  }
}

void RegisterBundle(CLI::App& app) {
  auto* bundle = app.add_subcommand(
      "bundle", "Create, verify and import contribution bundles");
  bundle->require_subcommand(1);

  auto c = std::make_shared<CreateArgs>();
  auto* create = bundle->add_subcommand(
      "create", "Write trials with weights to a .tar.zst bundle");
  create->add_option("dataset", c->dataset, "Dataset directory")->required();
  create->add_option("--search", c->search,
                     "Bundle every trial of this search id");
  create->add_option("--trials", c->trials,
                     "Bundle these trial ids, e.g. 3,7,12");
  create->add_option("-o,--out", c->out, "Output bundle, e.g. contrib.tar.zst")
      ->required();
  create->add_option("--contributor", c->contributor,
                     "Who made the trials, recorded as provenance (e.g. \"Jane "
                     "<jane@x.org>\")");
  create->callback([c] { RunCreate(*c); });

  auto v = std::make_shared<VerifyArgs>();
  auto* verify = bundle->add_subcommand(
      "verify", "Check a bundle; --replay K re-trains K trials");
  verify->add_option("bundle", v->bundle, "Bundle file (.tar.zst or .tar.gz)")
      ->required();
  verify
      ->add_option("--replay", v->replay,
                   "Re-train this many trials, drawn with --seed")
      ->capture_default_str();
  verify
      ->add_option("--replay-replicas", v->replay_replicas,
                   "Replicas re-trained per replayed trial that has them (-1: all)")
      ->capture_default_str();
  verify->add_option("--seed", v->seed, "Seed of the draw of replayed trials")
      ->capture_default_str();
  verify
      ->add_option(
          "--tolerance", v->tolerance,
          "Allowed |test accuracy difference| when bits cannot be compared")
      ->capture_default_str();
  verify->add_option("--threads", v->threads,
                     "Threads per replayed training (0: all cores)");
  verify->add_option("--data", v->data,
                     "Data spec to replay with instead of the recorded one");
  verify->callback([v] { RunVerify(*v); });

  auto i = std::make_shared<ImportArgs>();
  auto* import = bundle->add_subcommand(
      "import", "Add a bundle's new trials to a dataset");
  import
      ->add_option("dataset", i->dataset,
                   "Dataset directory (created if missing)")
      ->required();
  import->add_option("bundle", i->bundle, "Bundle file")->required();
  import->callback([i] { RunImport(*i); });
}
XW_CLI_COMMAND(300, RegisterBundle);

}  // namespace
}  // namespace xw::cli
