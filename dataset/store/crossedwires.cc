#include "xwires/dataset/store/crossedwires.h"

// The CSV reader is libfccp (Debian's fast-cpp-csv-parser), without its
// read-ahead thread.
#define CSV_IO_NO_THREAD
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-truncation"
#include <libfccp/csv.h>
#pragma GCC diagnostic pop
#include <openssl/evp.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>

#include "dataset_impl.h"
#include "xwires/dataset/store/degenerate.h"
#include "sqlite_adapter.h"
#include "xwires/core/build_info.h"

namespace xw {

const std::vector<std::string> kCrossedWiresRequiredColumns = {
    "Name",
    "accuracy_diff",
    "pt_test_acc",
    "tf_test_acc",
    "State",
    "adam_epsilon",
    "batch_size",
    "epochs",
    "learning_rate",
    "pt_average_training_loss",
    "pt_latest_training_loss",
    "tf_training_loss"};

namespace {

constexpr int kColumns = 15;
using Reader = io::CSVReader<kColumns, io::trim_chars<' ', '\t'>,
                             io::double_quote_escape<',', '"'>,
                             io::throw_on_overflow, io::no_comment>;

struct Where {
  const std::string& path;
  unsigned line;
  std::string At(const std::string& column) const {
    return path + ":" + std::to_string(line) + ": column '" + column + "'";
  }
};

// A number, or NaN for an empty cell / nan / null when `allow_missing`.
Result<double> Number(const char* text, const std::string& column,
                      const Where& w, bool allow_missing) {
  std::string s = text ? text : "";
  std::string lower;
  for (char c : s)
    lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (s.empty() || lower == "nan" || lower == "null" || lower == "none") {
    if (allow_missing) return std::nan("");
    return Status::InvalidArgument(w.At(column) + ": missing value");
  }
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || *end != '\0') {
    return Status::InvalidArgument(w.At(column) + ": '" + s +
                                   "' is not a number");
  }
  return v;
}

Result<int64_t> Integer(const char* text, const std::string& column,
                        const Where& w) {
  XW_ASSIGN_OR_RETURN(double v, Number(text, column, w, false));
  // 2^63: the first double past int64_t's range.
  if (!std::isfinite(v) || v != std::floor(v) || v < 1 || v >= 9223372036854775808.0) {
    return Status::InvalidArgument(w.At(column) + ": '" + std::string(text) +
                                   "' is not a positive integer that fits 64 bits");
  }
  return static_cast<int64_t>(v);
}

// A finite number > 0 (learning rate, Adam epsilon).
Result<double> Positive(const char* text, const std::string& column, const Where& w) {
  XW_ASSIGN_OR_RETURN(double v, Number(text, column, w, false));
  if (!std::isfinite(v) || v <= 0) {
    return Status::InvalidArgument(w.At(column) + ": '" + std::string(text) +
                                   "' is not a finite number > 0");
  }
  return v;
}

// An accuracy in [0, 1]. The CrossedWires format always has one (every
// published row does), so a missing value is an error too.
Result<double> Accuracy(const char* text, const std::string& column, const Where& w) {
  XW_ASSIGN_OR_RETURN(double v, Number(text, column, w, false));
  if (!(v >= 0 && v <= 1)) {
    return Status::InvalidArgument(w.At(column) + ": '" + std::string(text) +
                                   "' is not an accuracy in [0, 1]");
  }
  return v;
}

// "[1.5,2,NaN,58540646686793925000]" -> values; "" -> empty.
Result<std::vector<double>> LossList(const char* text,
                                     const std::string& column,
                                     const Where& w) {
  std::string s = text ? text : "";
  std::vector<double> out;
  if (s.empty()) return out;
  if (s.front() != '[' || s.back() != ']') {
    return Status::InvalidArgument(w.At(column) +
                                   ": loss list must look like [x, y, ...]");
  }
  std::string body = s.substr(1, s.size() - 2);
  if (body.find_first_not_of(" \t") == std::string::npos) return out;
  size_t start = 0;
  while (start <= body.size()) {
    size_t comma = body.find(',', start);
    if (comma == std::string::npos) comma = body.size();
    std::string item = body.substr(start, comma - start);
    size_t a = item.find_first_not_of(" \t"), b = item.find_last_not_of(" \t");
    item = a == std::string::npos ? "" : item.substr(a, b - a + 1);
    Result<double> v = Number(item.c_str(), column, w, true);
    if (!v.ok() || item.empty()) {
      return Status::InvalidArgument(
          w.At(column) + ": item " + std::to_string(out.size() + 1) + " '" +
          item + "' of the loss list is not a number");
    }
    out.push_back(*v);
    start = comma + 1;
  }
  return out;
}

std::string StatusOfState(const std::string& state) {
  if (state == "finished") return "ok";
  if (state == "crashed" || state == "failed" || state == "killed")
    return "failed";
  return "incomplete";
}

std::string FileSha256(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(),
                                                              EVP_MD_CTX_free);
  EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr);
  char buf[65536];
  while (in.read(buf, sizeof buf) || in.gcount() > 0)
    EVP_DigestUpdate(ctx.get(), buf, in.gcount());
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned len = 0;
  EVP_DigestFinal_ex(ctx.get(), md, &len);
  std::string hex;
  char h[3];
  for (unsigned i = 0; i < len; ++i) {
    std::snprintf(h, sizeof h, "%02x", md[i]);
    hex += h;
  }
  return hex;
}

struct Cells {
  char* c[kColumns] = {};
};

Result<TrialRecord> MakeTrial(const Cells& cells, const Where& w,
                              const std::string& arch,
                              const std::string& provenance,
                              CrossedWiresFile& file) {
  auto col = [&](int i) {
    return cells.c[i] ? cells.c[i] : const_cast<char*>("");
  };
  TrialRecord t;
  t.arch = arch;
  t.data_spec = "cifar10";
  t.provenance = provenance;
  t.external_id = col(0);
  if (t.external_id.empty())
    return Status::InvalidArgument(w.At("Name") + ": empty trial name");
  XW_ASSIGN_OR_RETURN(t.divergence, Number(col(1), "accuracy_diff", w, true));
  XW_ASSIGN_OR_RETURN(double pt_acc, Accuracy(col(2), "pt_test_acc", w));
  XW_ASSIGN_OR_RETURN(double tf_acc, Accuracy(col(3), "tf_test_acc", w));
  std::string state = col(4);
  XW_ASSIGN_OR_RETURN(t.adam_eps, Positive(col(5), "adam_epsilon", w));
  XW_ASSIGN_OR_RETURN(t.batch_size, Integer(col(6), "batch_size", w));
  XW_ASSIGN_OR_RETURN(t.epochs, Integer(col(7), "epochs", w));
  XW_ASSIGN_OR_RETURN(t.lr, Positive(col(8), "learning_rate", w));
  // The file's own difference column must be |pt - tf| (the published files
  // agree to 1e-9).
  const double diff = std::fabs(pt_acc - tf_acc);
  if (!std::isnan(t.divergence) && !(std::fabs(t.divergence - diff) <= 1e-6)) {
    return Status::InvalidArgument(
        w.At("accuracy_diff") + ": " + col(1) + " differs from |pt_test_acc - tf_test_acc| = |" +
        col(2) + " - " + col(3) + "| = " + std::to_string(diff));
  }
  XW_ASSIGN_OR_RETURN(auto pt_mean,
                      LossList(col(9), "pt_average_training_loss", w));
  XW_ASSIGN_OR_RETURN(auto pt_last,
                      LossList(col(10), "pt_latest_training_loss", w));
  XW_ASSIGN_OR_RETURN(auto tf_loss, LossList(col(11), "tf_training_loss", w));
  if (std::isnan(t.divergence)) t.divergence = diff;
  nlohmann::ordered_json hp = {{"learning_rate", t.lr},
                               {"adam_epsilon", t.adam_eps},
                               {"batch_size", t.batch_size},
                               {"epochs", t.epochs}};
  t.hparams_json = hp.dump();
  nlohmann::ordered_json extra = {
      {"source", "crossedwires"}, {"state", state}, {"source_line", w.line}};
  if (cells.c[12] && *cells.c[12]) extra["created"] = cells.c[12];
  if (cells.c[13] && *cells.c[13]) {
    Result<double> rt = Number(cells.c[13], "Runtime", w, true);
    if (!rt.ok()) return rt.status();
    extra["runtime_s"] = *rt;
  }
  if (cells.c[14] && *cells.c[14]) extra["wandb_project"] = cells.c[14];
  t.extra_json = extra.dump();
  ++file.by_state[state];
  if (pt_mean.empty() && pt_last.empty() && tf_loss.empty())
    ++file.rows_without_curves;

  auto model = [&](const char* profile, double acc) {
    ModelRecord m;
    m.profile = profile;
    m.external = true;
    m.status = StatusOfState(state);
    m.test_acc = acc;
    return m;
  };
  ModelRecord pt = model("pytorch", pt_acc), tf = model("tensorflow", tf_acc);
  for (size_t e = 0; e < std::max(pt_mean.size(), pt_last.size()); ++e) {
    EpochMetrics m;
    m.epoch = static_cast<int>(e + 1);
    if (e < pt_mean.size()) m.train_loss_mean = pt_mean[e];
    if (e < pt_last.size()) m.train_loss_last = pt_last[e];
    pt.curves.push_back(m);
  }
  // Keras reports the running mean of the epoch's batch losses.
  for (size_t e = 0; e < tf_loss.size(); ++e) {
    EpochMetrics m;
    m.epoch = static_cast<int>(e + 1);
    m.train_loss_mean = tf_loss[e];
    tf.curves.push_back(m);
  }
  if (!pt.curves.empty()) pt.train_loss = pt.curves.back().train_loss_mean;
  if (!tf.curves.empty()) tf.train_loss = tf.curves.back().train_loss_mean;
  t.models = {std::move(pt), std::move(tf)};
  // Degenerate-model facts: CIFAR-10's test set, and each model's largest
  // recorded loss (a NaN in a list is a recorded non-finite loss).
  std::vector<double> pt_losses = pt_mean;
  pt_losses.insert(pt_losses.end(), pt_last.begin(), pt_last.end());
  const std::vector<std::optional<double>> peaks = {
      LossPeak(pt_losses, /*nan_is_unknown=*/false),
      LossPeak(tf_loss, /*nan_is_unknown=*/false)};
  RecordDegeneracyFacts(&t, 10, 10000, &peaks);
  return t;
}

}  // namespace

Result<CrossedWiresFile> ParseCrossedWiresCsv(const std::string& path,
                                              const std::string& arch) {
  if (arch.empty())
    return Status::InvalidArgument("crossedwires import: --arch is required");
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    return Status::NotFound(path + ": no such file");
  const std::string provenance =
      "crossedwires import of " +
      std::filesystem::path(path).filename().string() + " (sha256 " +
      FileSha256(path) + ") by xwires " + GetBuildInfo().toolkit_version;
  CrossedWiresFile file;
  try {
    Reader in(path);
    in.read_header(io::ignore_extra_column | io::ignore_missing_column, "Name",
                   "accuracy_diff", "pt_test_acc", "tf_test_acc", "State",
                   "adam_epsilon", "batch_size", "epochs", "learning_rate",
                   "pt_average_training_loss", "pt_latest_training_loss",
                   "tf_training_loss", "Created", "Runtime", "wandb.project");
    std::string missing;
    for (const auto& c : kCrossedWiresRequiredColumns) {
      if (!in.has_column(c)) missing += (missing.empty() ? "" : ", ") + c;
    }
    if (!missing.empty()) {
      return Status::InvalidArgument(
          path + ": missing required column(s): " + missing);
    }
    std::set<std::string> names;
    Cells cells;
    while (true) {
      for (auto& c : cells.c) c = nullptr;
      if (!in.read_row(cells.c[0], cells.c[1], cells.c[2], cells.c[3],
                       cells.c[4], cells.c[5], cells.c[6], cells.c[7],
                       cells.c[8], cells.c[9], cells.c[10], cells.c[11],
                       cells.c[12], cells.c[13], cells.c[14])) {
        break;
      }
      Where w{path, in.get_file_line()};
      XW_ASSIGN_OR_RETURN(TrialRecord t,
                          MakeTrial(cells, w, arch, provenance, file));
      if (!names.insert(t.external_id).second) {
        return Status::InvalidArgument(
            w.At("Name") + ": duplicate trial name '" + t.external_id + "'");
      }
      file.trials.push_back(std::move(t));
    }
  } catch (const io::error::base& e) {
    return Status::InvalidArgument(std::string("crossedwires import: ") +
                                   e.what());
  } catch (const std::exception& e) {
    return Status::InvalidArgument(path + ": " + e.what());
  }
  if (file.trials.empty())
    return Status::InvalidArgument(path + ": no data rows");
  return file;
}

Result<ImportReport> ImportCrossedWires(Dataset& ds, const std::string& path,
                                        const std::string& arch) {
  XW_ASSIGN_OR_RETURN(CrossedWiresFile file, ParseCrossedWiresCsv(path, arch));
  return ImportCrossedWires(ds, std::move(file), arch);
}

Result<ImportReport> ImportCrossedWires(Dataset& ds, CrossedWiresFile file,
                                        const std::string& arch) {
  ImportReport report;
  report.rows = static_cast<int64_t>(file.trials.size());
  report.by_state = file.by_state;
  report.rows_without_curves = file.rows_without_curves;
  std::set<std::string> existing;
  auto& impl = ds.impl();
  XW_RETURN_IF_ERROR(sql::Guarded(impl.DbPath(), [&]() -> Status {
    SQLite::Statement st(
        *impl.db,
        "SELECT external_id FROM trials WHERE arch = ? AND external_id != ''");
    st.bind(1, arch);
    while (st.executeStep()) existing.insert(st.getColumn(0).getString());
    return Status::OK();
  }));
  std::vector<TrialRecord> fresh;
  for (auto& t : file.trials) {
    if (existing.count(t.external_id)) {
      ++report.skipped_existing;
    } else {
      fresh.push_back(std::move(t));
    }
  }
  if (!fresh.empty()) XW_RETURN_IF_ERROR(ds.AddTrials(fresh).status());
  report.imported = static_cast<int64_t>(fresh.size());
  return report;
}

}  // namespace xw
