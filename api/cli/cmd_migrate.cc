// `xwires migrate DATASET`: upgrades a dataset written by an older xwires to
// this build's schema in place, in one transaction (what any read-write open
// does; read-only commands refuse an older schema rather than change it).
#include <cstdio>
#include <string>

#include "command.h"
#include "xwires/dataset/store/dataset.h"

namespace xw::cli {
namespace {

void RunMigrate(const std::string& dir) {
  auto current = Dataset::Open(dir, OpenMode::kReadOnly);
  if (current.ok()) {
    std::printf("%s: schema version %d, current\n", dir.c_str(),
                (*current)->schema_version());
    return;
  }
  if (current.status().code() != Status::Code::kFailedPrecondition)
    Check(current.status());
  auto ds = Unwrap(Dataset::Open(dir, OpenMode::kReadWrite));
  std::printf("%s: migrated to schema version %d\n", dir.c_str(),
              ds->schema_version());
}

void RegisterMigrate(CLI::App& app) {
  auto dir = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand(
      "migrate", "Upgrade a dataset to this xwires' schema, in place");
  cmd->add_option("dataset", *dir, "Dataset directory")->required();
  cmd->callback([dir] { RunMigrate(*dir); });
}
XW_CLI_COMMAND(265, RegisterMigrate);

}  // namespace
}  // namespace xw::cli
