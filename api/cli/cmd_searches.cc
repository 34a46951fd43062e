// `xwires searches DATASET`: the dataset's searches, one row each: what they
// train, their progress and their best pair (SearchesTable, search_run.h).
#include <cstdio>
#include <string>

#include "command.h"
#include "xwires/api/search_run.h"

namespace xw::cli {
namespace {

struct SearchesArgs {
  std::string dataset, format = "table";
  bool with_config = false;
};

void RunSearches(const SearchesArgs& a) {
  const TableFormat format = Unwrap(ParseTableFormat(a.format));
  auto ds = Unwrap(Dataset::Open(a.dataset, OpenMode::kReadOnly));
  const std::string out = FormatTable(Unwrap(SearchesTable(*ds, a.with_config)), format);
  std::fwrite(out.data(), 1, out.size(), stdout);
}

void RegisterSearches(CLI::App& app) {
  auto a = std::make_shared<SearchesArgs>();
  auto* cmd = app.add_subcommand(
      "searches", "The dataset's searches: config, progress (done/planned, status), best pair");
  cmd->add_option("dataset", a->dataset, "Dataset directory")->required();
  cmd->add_option("--format", a->format, "table, csv or json");
  cmd->add_flag("--with-config", a->with_config,
                "Add the stored config_json and space_json columns");
  cmd->callback([a] { RunSearches(*a); });
}
XW_CLI_COMMAND(25, RegisterSearches);

}  // namespace
}  // namespace xw::cli
