// `xwires export DATASET --format csv|json`: every trial (or those matching
// --where) with all its columns and per-profile results.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "command.h"
#include "xwires/dataset/export.h"

namespace xw::cli {
namespace {

struct ExportArgs {
  std::string dataset, where, format = "csv", output;
};

// Writes via a temp file + rename so a failed export never leaves half a file.
Status WriteFile(const std::string& path, const std::string& text) {
  std::string tmp = path + ".tmp-" + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return Status::IOError(path + ": cannot write");
    out << text;
    if (!out.flush()) {
      std::remove(tmp.c_str());
      return Status::IOError(path + ": write failed");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return Status::IOError(path + ": rename failed");
  }
  return Status::OK();
}

void RunExport(const ExportArgs& a) {
  if (a.format != "csv" && a.format != "json") {
    Check(Status::InvalidArgument("export: unknown format '" + a.format + "' (csv, json)"));
  }
  TrialQuery q;
  q.where = a.where;
  auto ds = Unwrap(Dataset::Open(a.dataset, OpenMode::kReadOnly));
  auto rows = Unwrap(ds->Query(q));
  std::string text = a.format == "json" ? ExportJson(rows)
                                         : FormatTable(ExportTable(rows), TableFormat::kCsv);
  if (a.output.empty() || a.output == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
  } else {
    Check(WriteFile(a.output, text));
  }
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
