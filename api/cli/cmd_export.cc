// `xwires export DATASET --format csv|json`: every trial (or those matching
// --where) with all its columns and per-profile results, streamed in pages.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>

#include "command.h"
#include "xwires/dataset/query/export.h"

namespace xw::cli {
namespace {

struct ExportArgs {
  std::string dataset, where, format = "csv", output;
};

void RunExport(const ExportArgs& a) {
  TableFormat format = Unwrap(ParseTableFormat(a.format));
  if (format == TableFormat::kTable) {
    Check(Status::InvalidArgument("export: unknown format '" + a.format +
                                  "' (csv, json)"));
  }
  auto ds = Unwrap(Dataset::Open(a.dataset, OpenMode::kReadOnly));
  if (a.output.empty() || a.output == "-") {
    Check(ExportTrials(*ds, a.where, format, std::cout));
    std::cout.flush();
    return;
  }
  // Through a temp file + rename, so a failed export never leaves half a file.
  const std::string tmp = a.output + ".tmp-" + std::to_string(::getpid());
  std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
  if (!out) Check(Status::IOError(a.output + ": cannot write"));
  Status s = ExportTrials(*ds, a.where, format, out);
  out.close();
  if (s.ok() && !out) s = Status::IOError(a.output + ": write failed");
  if (s.ok() && std::rename(tmp.c_str(), a.output.c_str()) != 0) {
    s = Status::IOError(a.output + ": rename failed");
  }
  if (!s.ok()) std::remove(tmp.c_str());
  Check(s);
}

void RegisterExport(CLI::App& app) {
  auto a = std::make_shared<ExportArgs>();
  auto* cmd = app.add_subcommand("export", "Export trials as CSV or JSON");
  cmd->add_option("dataset", a->dataset, "Dataset directory")->required();
  cmd->add_option("--format", a->format, "csv or json");
  cmd->add_option("--where", a->where, "Filter (see `xwires query --help`)");
  cmd->add_option("--output,-o", a->output, "Output file (default stdout)");
  cmd->callback([a] { RunExport(*a); });
}
XW_CLI_COMMAND(240, RegisterExport);

}  // namespace
}  // namespace xw::cli
