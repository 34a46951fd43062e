// ParseTrialsJson: trials.json of an untrusted bundle -> BundleTrial.
#include <algorithm>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "archive_io.h"
#include "bundle_json.h"
#include "bundle_trials.h"
#include "dataset/store/sha256.h"

namespace xw::bundle {
namespace {

using json = nlohmann::json;

constexpr char kFile[] = "trials.json";
constexpr size_t kMaxModels = 64;
constexpr size_t kMaxEpochs = 100000;

bool ValidProfileName(const std::string& p) {
  if (p.empty() || p.size() > 64) return false;
  for (char c : p) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                    (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
    if (!ok) return false;
  }
  return true;
}

// What one trial may refer to, and what the trials used so far.
struct Context {
  const BundleManifest& manifest;
  std::set<std::string> listed_files;  // manifest files except trials.json
  std::set<std::string> used_files, used_profiles, used_specs;
};

Result<std::vector<EpochMetrics>> ParseCurves(const json& j,
                                              const std::string& where) {
  if (!j.is_array())
    return Status::InvalidArgument(std::string(kFile) + ": field '" + where +
                                   "' must be an array");
  if (j.size() > kMaxEpochs) {
    return Status::InvalidArgument(std::string(kFile) + ": field '" + where +
                                   "' has more than " +
                                   std::to_string(kMaxEpochs) + " epochs");
  }
  std::vector<EpochMetrics> out;
  for (size_t e = 0; e < j.size(); ++e) {
    const std::string w = where + "[" + std::to_string(e) + "]";
    if (!j[e].is_object())
      return Status::InvalidArgument(std::string(kFile) + ": field '" + w +
                                     "' must be an object");
    JsonFields f(j[e], kFile, w);
    EpochMetrics m;
    XW_ASSIGN_OR_RETURN(int64_t epoch, f.Integer("epoch"));
    if (epoch < 0 || epoch > std::numeric_limits<int>::max())
      return f.Bad("field '" + w + ".epoch' out of range");
    m.epoch = static_cast<int>(epoch);
    XW_ASSIGN_OR_RETURN(m.train_loss_mean, f.Real("train_loss_mean"));
    XW_ASSIGN_OR_RETURN(m.train_loss_last, f.Real("train_loss_last"));
    XW_ASSIGN_OR_RETURN(m.train_acc, f.Real("train_acc"));
    XW_ASSIGN_OR_RETURN(m.test_loss, f.Real("test_loss"));
    XW_ASSIGN_OR_RETURN(m.test_acc, f.Real("test_acc"));
    XW_RETURN_IF_ERROR(f.Finish());
    out.push_back(m);
  }
  return out;
}

Status ParseModel(const json& j, const std::string& where, Context& ctx,
                  ModelRecord* m, std::string* weights_file) {
  if (!j.is_object())
    return Status::InvalidArgument(std::string(kFile) + ": field '" + where +
                                   "' must be an object");
  JsonFields f(j, kFile, where);
  XW_ASSIGN_OR_RETURN(m->profile, f.String("profile", 64));
  if (!ValidProfileName(m->profile)) {
    return f.Bad("field '" + where +
                 ".profile' must be 1-64 of [A-Za-z0-9_.-]");
  }
  XW_ASSIGN_OR_RETURN(m->external, f.Bool("external"));
  auto def = ctx.manifest.profiles.find(m->profile);
  if (m->external && def != ctx.manifest.profiles.end()) {
    return f.Bad("field '" + where + "': external profile '" + m->profile +
                 "' must not have a definition in manifest.json");
  }
  if (!m->external && def != ctx.manifest.profiles.end()) {
    m->profile_json = def->second;
    ctx.used_profiles.insert(m->profile);
  }
  XW_ASSIGN_OR_RETURN(m->status, f.String("status", 32));
  static const std::set<std::string> kStatuses = {"ok", "diverged", "failed",
                                                  "incomplete"};
  if (!kStatuses.count(m->status)) {
    return f.Bad("field '" + where +
                 ".status' must be ok, diverged, failed or incomplete");
  }
  XW_ASSIGN_OR_RETURN(m->train_acc, f.Real("train_acc"));
  XW_ASSIGN_OR_RETURN(m->test_acc, f.Real("test_acc"));
  XW_ASSIGN_OR_RETURN(m->train_loss, f.Real("train_loss"));
  XW_ASSIGN_OR_RETURN(m->test_loss, f.Real("test_loss"));
  XW_ASSIGN_OR_RETURN(m->wall_time_s, f.Real("wall_time_s"));
  XW_ASSIGN_OR_RETURN(m->param_count, f.Integer("param_count"));
  XW_ASSIGN_OR_RETURN(int64_t threads, f.Integer("threads"));
  if (m->param_count < 0 || threads < 0 || threads > 1 << 20) {
    return f.Bad(
        "field '" + where +
        "': param_count and threads must be small non-negative integers");
  }
  m->threads = static_cast<int>(threads);
  XW_ASSIGN_OR_RETURN(const json* fp,
                      f.Get("fingerprint", json::value_t::object, "an object"));
  m->fingerprint_json = fp->dump();
  XW_ASSIGN_OR_RETURN(m->weights_sha256, f.String("weights_sha256", 64));
  if (!m->weights_sha256.empty() && !IsSha256Hex(m->weights_sha256)) {
    return f.Bad("field '" + where +
                 ".weights_sha256' must be empty or 64 lowercase hex digits");
  }
  XW_ASSIGN_OR_RETURN(const json* wf, f.Any("weights_file"));
  if (!wf->is_null()) {
    if (!wf->is_string())
      return f.Bad("field '" + where +
                   ".weights_file' must be a string or null");
    *weights_file = wf->get<std::string>();
    if (!ctx.listed_files.count(*weights_file)) {
      return f.Bad("field '" + where + ".weights_file' names '" +
                   PrintableName(*weights_file) +
                   "', which manifest.json does not list");
    }
    if (!ctx.used_files.insert(*weights_file).second) {
      return f.Bad("weights file '" + *weights_file +
                   "' is used by two models");
    }
  }
  if (weights_file->empty() != m->weights_sha256.empty()) {
    return f.Bad(
        "field '" + where +
        "': weights_file and weights_sha256 must both be set or both empty");
  }
  XW_ASSIGN_OR_RETURN(const json* curves, f.Any("curves"));
  XW_ASSIGN_OR_RETURN(m->curves, ParseCurves(*curves, where + ".curves"));
  return f.Finish();
}

Status ParseTrial(const json& j, size_t k, Context& ctx, BundleTrial* b) {
  const std::string where = "[" + std::to_string(k) + "]";
  if (!j.is_object())
    return Status::InvalidArgument(std::string(kFile) + ": trial " + where +
                                   " must be an object");
  JsonFields f(j, kFile, where);
  TrialRecord& t = b->record;
  XW_ASSIGN_OR_RETURN(b->content_sha256, f.String("content_sha256", 64));
  if (!IsSha256Hex(b->content_sha256))
    return f.Bad("field '" + where +
                 ".content_sha256' must be 64 lowercase hex digits");
  XW_ASSIGN_OR_RETURN(t.provenance, f.String("provenance", 4096));
  XW_ASSIGN_OR_RETURN(b->in_search, f.Bool("in_search"));
  if (b->in_search && !ctx.manifest.search) {
    return f.Bad("field '" + where +
                 ".in_search' is true but manifest.json has no search");
  }
  XW_ASSIGN_OR_RETURN(t.arch, f.String("arch", 256));
  if (t.arch.empty()) return f.Bad("field '" + where + ".arch' is empty");
  XW_ASSIGN_OR_RETURN(t.data_spec, f.String("data_spec", 4096));
  const auto& specs = ctx.manifest.data_specs;
  if (std::find(specs.begin(), specs.end(), t.data_spec) == specs.end()) {
    return f.Bad("field '" + where + ".data_spec' ('" + t.data_spec +
                 "') is not listed in manifest.json data_specs");
  }
  ctx.used_specs.insert(t.data_spec);
  XW_ASSIGN_OR_RETURN(const json* hp,
                      f.Get("hparams", json::value_t::object, "an object"));
  t.hparams_json = hp->dump();
  XW_ASSIGN_OR_RETURN(const json* extra,
                      f.Get("extra", json::value_t::object, "an object"));
  t.extra_json = extra->dump();
  XW_ASSIGN_OR_RETURN(t.lr, f.Real("lr"));
  XW_ASSIGN_OR_RETURN(t.adam_eps, f.Real("adam_eps"));
  XW_ASSIGN_OR_RETURN(t.beta1, f.Real("beta1"));
  XW_ASSIGN_OR_RETURN(t.beta2, f.Real("beta2"));
  XW_ASSIGN_OR_RETURN(t.weight_decay, f.Real("weight_decay"));
  XW_ASSIGN_OR_RETURN(t.divergence, f.Real("divergence"));
  XW_ASSIGN_OR_RETURN(auto batch_size, f.IntegerOrNull("batch_size"));
  XW_ASSIGN_OR_RETURN(auto epochs, f.IntegerOrNull("epochs"));
  if ((batch_size && *batch_size <= 0) || (epochs && *epochs <= 0)) {
    return f.Bad("field '" + where +
                 "': batch_size and epochs must be positive or null");
  }
  t.batch_size = batch_size.value_or(0);
  t.epochs = epochs.value_or(0);
  XW_ASSIGN_OR_RETURN(t.seed, f.IntegerOrNull("seed"));
  XW_ASSIGN_OR_RETURN(t.external_id, f.String("external_id", 1024));
  XW_ASSIGN_OR_RETURN(const json* models,
                      f.Get("models", json::value_t::array, "an array"));
  if (models->empty() || models->size() > kMaxModels) {
    return f.Bad("field '" + where + ".models' must hold 1 to " +
                 std::to_string(kMaxModels) + " models");
  }
  std::set<std::string> profiles;
  for (size_t i = 0; i < models->size(); ++i) {
    ModelRecord m;
    std::string file;
    XW_RETURN_IF_ERROR(ParseModel((*models)[i],
                                  where + ".models[" + std::to_string(i) + "]",
                                  ctx, &m, &file));
    if (!profiles.insert(m.profile).second)
      return f.Bad("trial " + where + ": profile '" + m.profile +
                   "' appears twice");
    t.models.push_back(std::move(m));
    b->weights_files.push_back(std::move(file));
  }
  XW_RETURN_IF_ERROR(f.Finish());
  if (TrialContentSha256(t) != b->content_sha256) {
    return Status::Corruption(
        std::string(kFile) + ": trial " + where +
        ": content_sha256 does not match the trial's content");
  }
  return Status::OK();
}

}  // namespace

Result<std::vector<BundleTrial>> ParseTrialsJson(
    std::string_view text, const BundleManifest& manifest) {
  JsonLimits limits;
  limits.max_bytes = size_t{256} << 20;
  limits.max_depth = 8;
  XW_ASSIGN_OR_RETURN(json j, ParseStrictJson(text, limits, kFile));
  if (!j.is_array())
    return Status::InvalidArgument(std::string(kFile) +
                                   ": the top level must be an array");
  if (j.size() != manifest.trial_count) {
    return Status::InvalidArgument(
        std::string(kFile) + ": holds " + std::to_string(j.size()) +
        " trials but manifest.json says trial_count " +
        std::to_string(manifest.trial_count));
  }
  Context ctx{manifest, {}, {}, {}, {}};
  for (const BundleFile& f : manifest.files) {
    const bool analyses =
        manifest.format_version >= 2 && f.path == kBundleAnalysesName;
    // Format 3: replicas.json and the replicas' files (bundle_replicas.h).
    const bool replicas =
        manifest.format_version >= 3 &&
        (f.path == kBundleReplicasName || f.path.rfind("replicas/", 0) == 0);
    if (f.path != kBundleTrialsName && !analyses && !replicas)
      ctx.listed_files.insert(f.path);
  }
  std::vector<BundleTrial> out(j.size());
  for (size_t k = 0; k < j.size(); ++k)
    XW_RETURN_IF_ERROR(ParseTrial(j[k], k, ctx, &out[k]));
  for (const std::string& f : ctx.listed_files) {
    if (!ctx.used_files.count(f)) {
      return Status::InvalidArgument("manifest.json lists '" + f +
                                     "', which no model of trials.json uses");
    }
  }
  for (const auto& [name, def] : manifest.profiles) {
    if (!ctx.used_profiles.count(name)) {
      return Status::InvalidArgument("manifest.json defines profile '" + name +
                                     "', which no model uses");
    }
  }
  for (const std::string& s : manifest.data_specs) {
    if (!ctx.used_specs.count(s)) {
      return Status::InvalidArgument("manifest.json lists data spec '" + s +
                                     "', which no trial uses");
    }
  }
  return out;
}

}  // namespace xw::bundle
