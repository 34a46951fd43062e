// `xwires fsck DATASET [--repair] [--verify]`: finds orphan HDF5 files, rows
// pointing at missing or damaged files, and SQLite inconsistencies; --repair
// fixes what can be fixed (see include/xwires/dataset/store/fsck.h). Exits 0
// when the dataset is (now) consistent, 2 when problems remain.
#include <cstdio>
#include <string>

#include "command.h"
#include "xwires/dataset/store/fsck.h"

namespace xw::cli {
namespace {

struct FsckArgs {
  std::string dataset;
  bool repair = false, verify = false, force = false;
};

void RunFsck(const FsckArgs& a) {
  if (a.force && !a.repair) Check(Status::InvalidArgument("--force needs --repair"));
  FsckReport r = Unwrap(Fsck(a.dataset, {a.repair, a.verify, a.force}));
  for (const FsckIssue& i : r.issues) {
    std::printf(
        "%s: %s%s%s%s%s\n", i.kind.c_str(), i.path.c_str(),
        i.trial_id ? (" trial " + std::to_string(i.trial_id)).c_str() : "",
        i.detail.empty() ? "" : ": ", i.detail.c_str(),
        i.repaired ? " [repaired]" : "");
  }
  int64_t open = 0;
  for (const FsckIssue& i : r.issues) open += !i.repaired;
  std::printf(
      "%s: %lld trials, %lld models, %lld files; %zu problem(s), %lld "
      "unrepaired\n",
      a.dataset.c_str(), static_cast<long long>(r.trials),
      static_cast<long long>(r.models), static_cast<long long>(r.files),
      r.issues.size(), static_cast<long long>(open));
  for (const FsckIssue& i : r.issues) {
    if (i.kind != "sqlite-integrity") continue;
    Check(Status::Corruption(a.dataset +
                             ": xwires.db fails SQLite's integrity_check; "
                             "restore it from a copy (--repair changes "
                             "nothing in a corrupt database)"));
  }
  if (open > 0) {
    Check(Status::Corruption(
        a.dataset + ": " + std::to_string(open) + " problem(s) found" +
        (a.repair ? " that cannot be repaired" : "; run with --repair")));
  }
}

void RegisterFsck(CLI::App& app) {
  auto a = std::make_shared<FsckArgs>();
  auto* cmd = app.add_subcommand(
      "fsck", "Check (and repair) a dataset's files and rows");
  cmd->add_option("dataset", a->dataset, "Dataset directory")->required();
  cmd->add_flag("--repair", a->repair,
                "Delete rows pointing at missing/damaged files, "
                "move orphan files to lost+found/");
  cmd->add_flag("--force", a->force,
                "With --repair: move orphan files to lost+found/ even when "
                "there are more than crashed writers leave (each is listed)");
  cmd->add_flag("--verify", a->verify,
                "Also read every stored weight set and check its sha256");
  cmd->callback([a] { RunFsck(*a); });
}
XW_CLI_COMMAND(260, RegisterFsck);

}  // namespace
}  // namespace xw::cli
