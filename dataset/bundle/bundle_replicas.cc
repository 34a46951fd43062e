#include "bundle_replicas.h"

#include <map>
#include <nlohmann/json.hpp>

#include "bundle_json.h"
#include "dataset/store/sha256.h"

namespace xw::bundle {
namespace {

using json = nlohmann::json;

constexpr char kFile[] = "replicas.json";
constexpr int64_t kMaxReplica = 1 << 20;
constexpr int64_t kMaxExamples = int64_t{1} << 24;
constexpr char kPrefix[] = "replicas/";

// What every entry of replicas.json starts with: an object whose "trial" is
// the index of one of the `trial_count` trials of trials.json. `f` reads `j`.
Result<size_t> EntryTrial(const json& j, JsonFields& f, const std::string& where,
                          size_t trial_count) {
  if (!j.is_object()) {
    return Status::InvalidArgument(std::string(kFile) + ": field '" + where +
                                   "' must be an object");
  }
  XW_ASSIGN_OR_RETURN(uint64_t k, f.Unsigned("trial"));
  if (k >= trial_count) {
    return f.Bad("field '" + where + ".trial' must be the index of one of the " +
                 std::to_string(trial_count) + " trials of trials.json");
  }
  return static_cast<size_t>(k);
}

// The profile named by field `key`, under which trial `t` must have a model.
Result<std::string> ProfileField(JsonFields& f, const BundleTrial& t, const std::string& key,
                                 const std::string& where) {
  XW_ASSIGN_OR_RETURN(std::string profile, f.String(key, 64));
  for (const ModelRecord& m : t.record.models) {
    if (m.profile == profile) return profile;
  }
  return f.Bad("field '" + where + "." + key + "': the trial has no model under profile '" +
               profile + "'");
}

Result<BundleReplica> ParseReplica(const json& j, const std::string& where,
                                   const std::vector<BundleTrial>& trials) {
  JsonFields f(j, kFile, where);
  BundleReplica b;
  ReplicaRecord& r = b.record;
  XW_ASSIGN_OR_RETURN(b.trial, EntryTrial(j, f, where, trials.size()));
  XW_ASSIGN_OR_RETURN(r.profile, ProfileField(f, trials[b.trial], "profile", where));
  XW_ASSIGN_OR_RETURN(r.family, f.String("family", 16));
  XW_ASSIGN_OR_RETURN(r.replica, f.Integer("replica"));
  if (r.replica < 0 || r.replica > kMaxReplica) {
    return f.Bad("field '" + where + ".replica' must be in [0, " +
                 std::to_string(kMaxReplica) + "]");
  }
  XW_ASSIGN_OR_RETURN(const json* params, f.Get("params", json::value_t::object, "an object"));
  r.params_json = params->dump();
  XW_ASSIGN_OR_RETURN(r.status, f.String("status", 16));
  XW_ASSIGN_OR_RETURN(r.test_acc, f.Real("test_acc"));
  XW_ASSIGN_OR_RETURN(r.test_loss, f.Real("test_loss"));
  XW_ASSIGN_OR_RETURN(auto step, f.IntegerOrNull("first_nonfinite_step"));
  r.first_nonfinite_step = step.value_or(-1);
  XW_ASSIGN_OR_RETURN(int64_t epochs, f.Integer("n_epochs"));
  XW_ASSIGN_OR_RETURN(r.n_examples, f.Integer("n_examples"));
  if (epochs < 0 || epochs > 100000 || r.n_examples < 1 || r.n_examples > kMaxExamples) {
    return f.Bad("field '" + where + "': n_epochs must be in [0, 100000] and n_examples in [1, " +
                 std::to_string(kMaxExamples) + "]");
  }
  r.curves.resize(static_cast<size_t>(epochs));  // read from the file later
  XW_ASSIGN_OR_RETURN(r.has_weights, f.Bool("has_weights"));
  XW_ASSIGN_OR_RETURN(r.weights_sha256, f.String("weights_sha256", 64));
  if (!r.weights_sha256.empty() && !IsSha256Hex(r.weights_sha256)) {
    return f.Bad("field '" + where + ".weights_sha256' must be empty or 64 lowercase hex digits");
  }
  if (r.has_weights && r.weights_sha256.empty()) {
    return f.Bad("field '" + where + "': a replica with weights needs its weights_sha256");
  }
  XW_ASSIGN_OR_RETURN(r.wall_time_s, f.Real("wall_time_s"));
  XW_ASSIGN_OR_RETURN(const json* fp, f.Get("fingerprint", json::value_t::object, "an object"));
  r.fingerprint_json = fp->dump();
  XW_ASSIGN_OR_RETURN(b.file, f.String("file", 256));
  XW_RETURN_IF_ERROR(f.Finish());
  return b;
}

Result<BundleReplicaStats> ParseStats(const json& j, const std::string& where,
                                      const std::vector<BundleTrial>& trials) {
  JsonFields f(j, kFile, where);
  BundleReplicaStats b;
  ReplicaStatsRecord& s = b.record;
  XW_ASSIGN_OR_RETURN(b.trial, EntryTrial(j, f, where, trials.size()));
  XW_ASSIGN_OR_RETURN(s.profile_a, ProfileField(f, trials[b.trial], "profile_a", where));
  XW_ASSIGN_OR_RETURN(s.profile_b, ProfileField(f, trials[b.trial], "profile_b", where));
  if (s.profile_a == s.profile_b) {
    return f.Bad("field '" + where + "': profile_a and profile_b must differ");
  }
  XW_ASSIGN_OR_RETURN(s.family, f.String("family", 16));
  XW_ASSIGN_OR_RETURN(s.k_a, f.Integer("k_a"));
  XW_ASSIGN_OR_RETURN(s.k_b, f.Integer("k_b"));
  if (s.k_a < 1 || s.k_a > 32 || s.k_b < 1 || s.k_b > 32) {
    return f.Bad("field '" + where + "': k_a and k_b must be in [1, 32]");
  }
  XW_ASSIGN_OR_RETURN(int64_t classes, f.Integer("num_classes"));
  if (classes < 2 || classes > 256) {
    return f.Bad("field '" + where + ".num_classes' must be in [2, 256]");
  }
  s.num_classes = static_cast<int>(classes);
  XW_ASSIGN_OR_RETURN(const json* labels, f.Get("test_labels", json::value_t::array, "an array"));
  if (labels->size() > static_cast<size_t>(kMaxExamples)) {
    return f.Bad("field '" + where + ".test_labels' is too long");
  }
  for (size_t i = 0; i < labels->size(); ++i) {
    const json& l = (*labels)[i];
    if (!l.is_number_unsigned() || l.get<uint64_t>() >= static_cast<uint64_t>(classes)) {
      return f.Bad("field '" + where + ".test_labels[" + std::to_string(i) +
                   "]' must be a class in [0, num_classes)");
    }
    s.test_labels.push_back(static_cast<uint8_t>(l.get<uint64_t>()));
  }
  XW_ASSIGN_OR_RETURN(const json* result, f.Get("result", json::value_t::object, "an object"));
  auto parsed = ParsePairStatisticsJson(result->dump());
  if (!parsed.ok()) return f.Bad("field '" + where + ".result': " + parsed.status().message());
  s.stats = *parsed;
  if (j.contains("first_replica")) {  // written only for a confirmation's fresh replicas
    XW_ASSIGN_OR_RETURN(s.first_replica, f.Integer("first_replica"));
    if (s.first_replica < 0 || s.first_replica > kMaxReplica) {
      return f.Bad("field '" + where + ".first_replica' must be in [0, " +
                   std::to_string(kMaxReplica) + "]");
    }
  }
  XW_RETURN_IF_ERROR(f.Finish());
  return b;
}

}  // namespace

std::string ReplicaEntryName(size_t k, size_t i) {
  return std::string(kPrefix) + std::to_string(k) + "/" + std::to_string(i) + ".h5";
}

std::string ReplicasToJson(const BundleReplicas& in) {
  json reps = json::array(), stats = json::array();
  for (const BundleReplica& b : in.replicas) {
    const ReplicaRecord& r = b.record;
    reps.push_back({{"trial", b.trial},
                    {"profile", r.profile},
                    {"family", r.family},
                    {"replica", r.replica},
                    {"params", json::parse(r.params_json)},
                    {"status", r.status},
                    {"test_acc", RealJson(r.test_acc)},
                    {"test_loss", RealJson(r.test_loss)},
                    {"first_nonfinite_step", r.first_nonfinite_step > 0
                                                 ? json(r.first_nonfinite_step)
                                                 : json(nullptr)},
                    {"n_epochs", r.curves.size()},
                    {"n_examples", r.predictions.size()},
                    {"has_weights", r.has_weights},
                    {"weights_sha256", r.weights_sha256},
                    {"wall_time_s", RealJson(r.wall_time_s)},
                    {"fingerprint", json::parse(r.fingerprint_json.empty() ? "{}"
                                                                           : r.fingerprint_json)},
                    {"file", b.file}});
  }
  for (const BundleReplicaStats& b : in.stats) {
    const ReplicaStatsRecord& s = b.record;
    stats.push_back({{"trial", b.trial},
                     {"profile_a", s.profile_a},
                     {"profile_b", s.profile_b},
                     {"family", s.family},
                     {"k_a", s.k_a},
                     {"k_b", s.k_b},
                     {"num_classes", s.num_classes},
                     {"test_labels", s.test_labels},
                     {"result", json::parse(PairStatisticsJson(s.stats))}});
    if (s.first_replica != 0) stats.back()["first_replica"] = s.first_replica;
  }
  return DumpLenient(json{{"replicas", std::move(reps)}, {"statistics", std::move(stats)}}) +
         "\n";
}

Result<BundleReplicas> ParseReplicasJson(std::string_view text,
                                         const std::vector<BundleTrial>& trials,
                                         const std::set<std::string>& listed_files) {
  JsonLimits limits;
  limits.max_bytes = size_t{256} << 20;
  limits.max_depth = 8;
  XW_ASSIGN_OR_RETURN(json j, ParseStrictJson(text, limits, kFile));
  if (!j.is_object()) {
    return Status::InvalidArgument(std::string(kFile) + ": the top level must be an object");
  }
  JsonFields top(j, kFile, "");
  XW_ASSIGN_OR_RETURN(const json* reps, top.Get("replicas", json::value_t::array, "an array"));
  XW_ASSIGN_OR_RETURN(const json* stats,
                      top.Get("statistics", json::value_t::array, "an array"));
  XW_RETURN_IF_ERROR(top.Finish());
  BundleReplicas out;
  std::set<std::string> used;
  for (size_t i = 0; i < reps->size(); ++i) {
    const std::string where = "replicas[" + std::to_string(i) + "]";
    XW_ASSIGN_OR_RETURN(BundleReplica b, ParseReplica((*reps)[i], where, trials));
    const std::string prefix = kPrefix + std::to_string(b.trial) + "/";
    if (b.file.rfind(prefix, 0) != 0 || b.file.size() < prefix.size() + 4 ||
        b.file.substr(b.file.size() - 3) != ".h5") {
      return Status::InvalidArgument(std::string(kFile) + ": field '" + where +
                                     ".file' must be " + prefix + "<n>.h5");
    }
    if (!listed_files.count(b.file)) {
      return Status::InvalidArgument(std::string(kFile) + ": field '" + where + ".file': '" +
                                     b.file + "' is not listed in manifest.json");
    }
    if (!used.insert(b.file).second) {
      return Status::InvalidArgument(std::string(kFile) + ": field '" + where + ".file': '" +
                                     b.file + "' is used twice");
    }
    out.replicas.push_back(std::move(b));
  }
  for (const std::string& f : listed_files) {
    if (f.rfind(kPrefix, 0) == 0 && !used.count(f)) {
      return Status::InvalidArgument("manifest.json lists '" + f +
                                     "', which no replica of replicas.json uses");
    }
  }
  for (size_t i = 0; i < stats->size(); ++i) {
    XW_ASSIGN_OR_RETURN(out.stats.emplace_back(),
                        ParseStats((*stats)[i], "statistics[" + std::to_string(i) + "]", trials));
  }
  return out;
}

}  // namespace xw::bundle
