#include "bundle_analyses.h"

#include <nlohmann/json.hpp>

#include "bundle_json.h"

namespace xw::bundle {
namespace {

using json = nlohmann::json;

constexpr char kFile[] = "analyses.json";
constexpr size_t kMaxText = size_t{1} << 16;

// Free text (a summary, a JSON value as text): any characters, bounded.
Result<std::string> Text(JsonFields& f, const std::string& key) {
  XW_ASSIGN_OR_RETURN(const json* v,
                      f.Get(key, json::value_t::string, "a string"));
  const std::string& s = v->get_ref<const std::string&>();
  if (s.size() > kMaxText) {
    return f.Bad("field '" + f.Name(key) + "' is longer than " +
                 std::to_string(kMaxText) + " bytes");
  }
  return s;
}

Result<AnalysisRun> ParseRun(const json& j, const std::string& where) {
  if (!j.is_object()) {
    return Status::InvalidArgument(std::string(kFile) + ": field '" + where +
                                   "' must be an object");
  }
  JsonFields f(j, kFile, where);
  AnalysisRun r;
  XW_ASSIGN_OR_RETURN(r.knob, f.String("knob", 256));
  XW_ASSIGN_OR_RETURN(r.direction, f.String("direction", 16));
  XW_ASSIGN_OR_RETURN(r.profile, f.String("profile", 256));
  XW_ASSIGN_OR_RETURN(r.value_json, Text(f, "value_json"));
  XW_ASSIGN_OR_RETURN(r.status, f.String("status", 32));
  XW_ASSIGN_OR_RETURN(r.test_acc, f.Real("test_acc"));
  XW_ASSIGN_OR_RETURN(r.test_loss, f.Real("test_loss"));
  XW_ASSIGN_OR_RETURN(r.weights_sha256, f.String("weights_sha256", 64));
  XW_RETURN_IF_ERROR(f.Finish());
  return r;
}

Result<BundleAnalysis> ParseAnalysis(const json& j, size_t k,
                                     size_t trial_count) {
  const std::string where = "[" + std::to_string(k) + "]";
  if (!j.is_object()) {
    return Status::InvalidArgument(std::string(kFile) + ": analysis " + where +
                                   " must be an object");
  }
  JsonFields f(j, kFile, where);
  BundleAnalysis b;
  AnalysisRecord& a = b.record;
  XW_ASSIGN_OR_RETURN(a.kind, f.String("kind", 16));
  XW_ASSIGN_OR_RETURN(const json* trials,
                      f.Get("trials", json::value_t::array, "an array"));
  for (size_t i = 0; i < trials->size(); ++i) {
    const json& t = (*trials)[i];
    if (!t.is_number_unsigned() || t.get<uint64_t>() >= trial_count) {
      return f.Bad("field '" + where + ".trials[" + std::to_string(i) +
                   "]' must be the index of one of the " +
                   std::to_string(trial_count) + " trials of trials.json");
    }
    b.trials.push_back(t.get<size_t>());
    // Stand-ins for the rules' count and distinctness checks below.
    a.trial_ids.push_back(static_cast<int64_t>(b.trials.back()));
  }
  XW_ASSIGN_OR_RETURN(a.created_at, f.String("created_at", 32));
  if (a.created_at.empty())
    return f.Bad("field '" + where + ".created_at' is empty");
  XW_ASSIGN_OR_RETURN(a.toolkit, f.String("toolkit", 64));
  if (a.toolkit.empty())
    return f.Bad("field '" + where + ".toolkit' is empty");
  XW_ASSIGN_OR_RETURN(a.summary, Text(f, "summary"));
  XW_ASSIGN_OR_RETURN(const json* result,
                      f.Get("result", json::value_t::object, "an object"));
  a.result_json = result->dump();
  XW_ASSIGN_OR_RETURN(const json* runs,
                      f.Get("runs", json::value_t::array, "an array"));
  for (size_t i = 0; i < runs->size(); ++i) {
    XW_ASSIGN_OR_RETURN(
        a.runs.emplace_back(),
        ParseRun((*runs)[i], where + ".runs[" + std::to_string(i) + "]"));
  }
  XW_RETURN_IF_ERROR(f.Finish());
  XW_RETURN_IF_ERROR(CheckAnalysis(a, std::string(kFile) + ": analysis " +
                                          where + " (" + a.kind + ")"));
  a.trial_ids.clear();
  return b;
}

}  // namespace

std::string AnalysesToJson(const std::vector<BundleAnalysis>& analyses) {
  std::string out = "[";
  for (size_t k = 0; k < analyses.size(); ++k) {
    const AnalysisRecord& a = analyses[k].record;
    json runs = json::array();
    for (const AnalysisRun& r : a.runs) {
      runs.push_back({{"knob", r.knob},
                      {"direction", r.direction},
                      {"profile", r.profile},
                      {"value_json", r.value_json},
                      {"status", r.status},
                      {"test_acc", RealJson(r.test_acc)},
                      {"test_loss", RealJson(r.test_loss)},
                      {"weights_sha256", r.weights_sha256}});
    }
    const json j = {{"kind", a.kind},
                    {"trials", analyses[k].trials},
                    {"created_at", a.created_at},
                    {"toolkit", a.toolkit},
                    {"summary", a.summary},
                    {"result", json::parse(a.result_json)},
                    {"runs", std::move(runs)}};
    out += (k == 0 ? "\n" : ",\n") + DumpLenient(j);
  }
  return out + "\n]\n";
}

Result<std::vector<BundleAnalysis>> ParseAnalysesJson(std::string_view text,
                                                      size_t trial_count) {
  JsonLimits limits;
  limits.max_bytes = size_t{256} << 20;
  limits.max_depth = 32;
  XW_ASSIGN_OR_RETURN(json j, ParseStrictJson(text, limits, kFile));
  if (!j.is_array()) {
    return Status::InvalidArgument(std::string(kFile) +
                                   ": the top level must be an array");
  }
  std::vector<BundleAnalysis> out;
  for (size_t k = 0; k < j.size(); ++k) {
    XW_ASSIGN_OR_RETURN(out.emplace_back(), ParseAnalysis(j[k], k, trial_count));
  }
  return out;
}

}  // namespace xw::bundle
