// `xwires import-crossedwires DATASET FILE.csv --arch vgg16`: imports the
// CrossedWires study's published per-trial results. The whole file is parsed
// and validated before the dataset is opened (or created), so a bad file
// changes nothing on disk.
#include <cstdio>
#include <string>

#include "command.h"
#include "xwires/dataset/store/crossedwires.h"

namespace xw::cli {
namespace {

struct ImportArgs {
  std::string dataset, file, arch;
};

void RunImport(const ImportArgs& a) {
  CrossedWiresFile parsed = Unwrap(ParseCrossedWiresCsv(a.file, a.arch));
  auto ds = Unwrap(Dataset::Open(a.dataset, OpenMode::kCreate));
  ImportReport r = Unwrap(ImportCrossedWires(*ds, std::move(parsed), a.arch));
  std::string states;
  for (const auto& [state, n] : r.by_state) {
    states += (states.empty() ? "" : ", ") + std::to_string(n) + " " + state;
  }
  std::printf(
      "%s: %lld rows (%s); imported %lld trials as arch %s, skipped %lld "
      "already stored; "
      "%lld rows without loss curves\n",
      a.file.c_str(), static_cast<long long>(r.rows), states.c_str(),
      static_cast<long long>(r.imported), a.arch.c_str(),
      static_cast<long long>(r.skipped_existing),
      static_cast<long long>(r.rows_without_curves));
}

void RegisterImport(CLI::App& app) {
  auto a = std::make_shared<ImportArgs>();
  auto* cmd = app.add_subcommand(
      "import-crossedwires",
      "Import a CrossedWires results CSV (profiles pytorch, tensorflow)");
  cmd->add_option("dataset", a->dataset,
                  "Dataset directory (created if missing)")
      ->required();
  cmd->add_option("file", a->file,
                  "CrossedWires CSV, e.g. vgg16_cifar10_results.csv")
      ->required();
  cmd->add_option("--arch", a->arch,
                  "Architecture of the file's trials, e.g. vgg16")
      ->required();
  cmd->callback([a] { RunImport(*a); });
}
XW_CLI_COMMAND(230, RegisterImport);

}  // namespace
}  // namespace xw::cli
