#include "xwires/dataset/query/export.h"

#include <cmath>
#include <nlohmann/json.hpp>
#include <set>

#include "filter_parser.h"
#include "xwires/dataset/query/query.h"
#include "xwires/dataset/store/degenerate.h"

namespace xw {

namespace {

using Json = nlohmann::ordered_json;

Json Num(double v) { return std::isnan(v) ? Json(nullptr) : Json(v); }
Json Opt(const std::optional<int64_t>& v) {
  return v ? Json(*v) : Json(nullptr);
}
Json Parsed(const std::string& text) {
  if (text.empty()) return Json::object();
  Json j = Json::parse(text, nullptr, false);
  return j.is_discarded() ? Json(text) : j;
}

Json ModelJson(const ModelRow& m) {
  return Json{
      {"id", m.id},
      {"profile", m.profile},
      {"external", m.external},
      {"status", m.status},
      {"train_acc", Num(m.train_acc)},
      {"test_acc", Num(m.test_acc)},
      {"train_loss", Num(m.train_loss)},
      {"test_loss", Num(m.test_loss)},
      {"epochs_recorded", m.n_epochs},
      {"has_weights", m.has_weights},
      {"weights_sha256", m.weights_sha256},
      // 0 means not recorded (imported results): no real model has none.
      {"param_count", m.param_count > 0 ? Json(m.param_count) : Json(nullptr)},
      {"wall_time_s", Num(m.wall_time_s)},
      {"threads", m.threads},
      {"fingerprint", Parsed(m.fingerprint_json)},
      {"h5_file", m.h5_file.empty() ? Json(nullptr) : Json(m.h5_file)},
      {"h5_group", m.h5_group.empty() ? Json(nullptr) : Json(m.h5_group)}};
}

Json FlagJson(int v) { return v < 0 ? Json(nullptr) : Json(v); }

Json TrialObject(const TrialRow& t) {
  // Degenerate-model flags (degenerate.h), per model and for the trial.
  const std::vector<ModelFlags> flags = DegenerateFlags(t);
  const ModelFlags trial_flags = TrialFlags(flags);
  Json models = Json::array();
  for (size_t i = 0; i < t.models.size(); ++i) {
    Json m = ModelJson(t.models[i]);
    m["collapsed"] = FlagJson(flags[i].collapsed);
    m["at_chance"] = FlagJson(flags[i].at_chance);
    models.push_back(std::move(m));
  }
  return Json{{"id", t.id},
              {"created_at", t.created_at},
              {"arch", t.arch},
              {"data", t.data_spec},
              {"status", t.status},
              {"name", t.external_id},
              {"lr", Num(t.lr)},
              {"adam_eps", Num(t.adam_eps)},
              {"beta1", Num(t.beta1)},
              {"beta2", Num(t.beta2)},
              {"weight_decay", Num(t.weight_decay)},
              {"batch_size", Opt(t.batch_size)},
              {"epochs", Opt(t.epochs)},
              {"seed", Opt(t.seed)},
              {"diff", Num(t.divergence)},
              {"collapsed", FlagJson(trial_flags.collapsed)},
              {"at_chance", FlagJson(trial_flags.at_chance)},
              {"search_id", Opt(t.search_id)},
              {"provenance", t.provenance},
              {"hparams", Parsed(t.hparams_json)},
              {"extra", Parsed(t.extra_json)},
              {"models", models}};
}

Cell OptCell(const std::optional<int64_t>& v) { return v ? Cell{*v} : Cell{}; }

}  // namespace

Table ExportTable(const std::vector<TrialRow>& rows) {
  std::set<std::string> profiles;
  for (const auto& r : rows) {
    for (const auto& m : r.models) profiles.insert(m.profile);
  }
  return ExportTable(rows, {profiles.begin(), profiles.end()});
}

Table ExportTable(const std::vector<TrialRow>& rows,
                  const std::vector<std::string>& profiles) {
  Table t;
  t.columns = {"id",           "created_at", "arch",     "data",  "name",
               "status",       "lr",         "adam_eps", "beta1", "beta2",
               "weight_decay", "batch_size", "epochs",   "seed",  "diff",
               "search_id",    "provenance"};
  for (const auto& p : profiles) {
    for (const char* k :
         {"status_", "train_acc_", "acc_", "train_loss_", "loss_", "sha256_"}) {
      t.columns.push_back(k + p);
    }
  }
  for (const auto& r : rows) {
    std::vector<Cell> row = {r.id,
                             r.created_at,
                             r.arch,
                             r.data_spec,
                             r.external_id,
                             r.status,
                             r.lr,
                             r.adam_eps,
                             r.beta1,
                             r.beta2,
                             r.weight_decay,
                             OptCell(r.batch_size),
                             OptCell(r.epochs),
                             OptCell(r.seed),
                             r.divergence,
                             OptCell(r.search_id),
                             r.provenance};
    for (const auto& p : profiles) {
      const ModelRow* m = r.Model(p);
      if (!m) {
        row.insert(row.end(), 6, Cell{});
        continue;
      }
      row.insert(
          row.end(),
          {m->status, m->train_acc, m->test_acc, m->train_loss, m->test_loss,
           m->weights_sha256.empty() ? Cell{} : Cell{m->weights_sha256}});
    }
    t.rows.push_back(std::move(row));
  }
  return t;
}

std::string ExportJson(const std::vector<TrialRow>& rows) {
  Json arr = Json::array();
  for (const auto& r : rows) arr.push_back(TrialObject(r));
  return arr.dump(2) + "\n";
}

Status ExportTrials(const Dataset& ds, const std::string& where,
                    TableFormat format, std::ostream& out, int64_t page) {
  if (format == TableFormat::kTable) {
    return Status::InvalidArgument("export: format must be csv or json");
  }
  // Parse the user's filter alone first: error positions then refer to it.
  XW_RETURN_IF_ERROR(filter::Parse(where).status());
  XW_ASSIGN_OR_RETURN(std::vector<std::string> profiles, ds.ProfileNames());
  if (format == TableFormat::kCsv)
    out << FormatTable(ExportTable({}, profiles), format);
  if (format == TableFormat::kJson) out << "[";
  int64_t last = 0;
  bool first = true;
  while (true) {
    TrialQuery q = QueryBuilder()
                       .Where(where.empty() ? "id > 0" : where)
                       .Where("id > " + std::to_string(last))
                       .OrderBy("id")
                       .Limit(page)
                       .Build();
    XW_ASSIGN_OR_RETURN(std::vector<TrialRow> rows, ds.Query(q));
    if (rows.empty()) break;
    last = rows.back().id;
    if (format == TableFormat::kCsv) {
      std::string text = FormatTable(ExportTable(rows, profiles), format);
      out << text.substr(text.find('\n') + 1);  // without the header line
    } else {
      for (const auto& r : rows) {
        out << (first ? "\n" : ",\n") << TrialObject(r).dump(2);
        first = false;
      }
    }
    if (!out) return Status::IOError("export: write failed");
  }
  if (format == TableFormat::kJson) out << (first ? "]\n" : "\n]\n");
  return out ? Status::OK() : Status::IOError("export: write failed");
}

std::string TrialJson(const TrialRow& trial,
                      const std::vector<std::vector<EpochMetrics>>* curves) {
  Json o = TrialObject(trial);
  if (curves) {
    for (size_t i = 0; i < trial.models.size() && i < curves->size(); ++i) {
      Json c = Json::array();
      for (const EpochMetrics& e : (*curves)[i]) {
        c.push_back(Json{{"epoch", e.epoch},
                         {"train_loss_mean", Num(e.train_loss_mean)},
                         {"train_loss_last", Num(e.train_loss_last)},
                         {"train_acc", Num(e.train_acc)},
                         {"test_loss", Num(e.test_loss)},
                         {"test_acc", Num(e.test_acc)}});
      }
      o["models"][i]["curves"] = c;
    }
  }
  return o.dump(2) + "\n";
}

}  // namespace xw
