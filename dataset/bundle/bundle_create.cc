// CreateBundle: selected trials of a dataset -> a .tar.zst bundle.
#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "archive_io.h"
#include "bundle_analyses.h"
#include "bundle_manifest.h"
#include "bundle_replicas.h"
#include "bundle_store.h"
#include "bundle_trials.h"
#include "dataset/store/dataset_internal.h"
#include "dataset/store/model_file.h"
#include "dataset/store/sha256.h"
#include "xwires/core/build_info.h"
#include "xwires/core/clock.h"
#include "xwires/dataset/bundle/bundle.h"
#include "xwires/dataset/query/query.h"
#include "xwires/dataset/store/analysis.h"
#include "xwires/dataset/store/tensor_file.h"

namespace xw {
namespace {

namespace fs = std::filesystem;

Result<std::vector<TrialRow>> SelectRows(const Dataset& ds,
                                         std::optional<int64_t> search_id,
                                         const std::vector<int64_t>& trial_ids,
                                         std::optional<SearchRecord>* search) {
  if (search_id.has_value() == !trial_ids.empty()) {
    return Status::InvalidArgument(
        "select the trials with a search id or a list of trial ids "
        "(exactly one of the two)");
  }
  std::vector<TrialRow> rows;
  if (search_id) {
    XW_ASSIGN_OR_RETURN(std::vector<SearchRow> searches, ds.Searches());
    for (const SearchRow& s : searches) {
      if (s.id == *search_id) *search = s.record;
    }
    if (!*search) {
      return Status::NotFound(ds.dir() + ": no search with id " +
                              std::to_string(*search_id));
    }
    TrialQuery q;
    q.where = "search_id = " + std::to_string(*search_id);
    XW_ASSIGN_OR_RETURN(rows, ds.Query(q));
    if (rows.empty()) {
      return Status::InvalidArgument("search " + std::to_string(*search_id) +
                                     " has no trials");
    }
    return rows;
  }
  std::set<int64_t> seen;
  for (int64_t id : trial_ids) {
    if (!seen.insert(id).second) {
      return Status::InvalidArgument("trial " + std::to_string(id) +
                                     " is listed twice");
    }
    XW_ASSIGN_OR_RETURN(TrialRow row, ds.GetTrial(id));
    rows.push_back(std::move(row));
  }
  return rows;
}

Status CheckContributor(const std::string& c) {
  if (c.size() > 256)
    return Status::InvalidArgument("contributor is longer than 256 bytes");
  for (unsigned char ch : c) {
    if (ch < 0x20 || ch == 0x7f) {
      return Status::InvalidArgument(
          "contributor contains a control character");
    }
  }
  return Status::OK();
}

// Adds a file of the staging directory to the manifest's list.
Status ListFile(const fs::path& staging, const std::string& name,
                BundleManifest* m) {
  const fs::path p = staging / name;
  std::error_code ec;
  const uint64_t bytes = fs::file_size(p, ec);
  if (ec)
    return Status::IOError("cannot stat '" + p.string() + "': " + ec.message());
  XW_ASSIGN_OR_RETURN(std::string sha, Sha256File(p));
  m->files.push_back({name, bytes, sha});
  return Status::OK();
}

// The stored analyses all of whose trials are among `rows`, with the trials
// as indices into `rows`. A stored result that breaks the store's rules (a
// dataset written by hand) fails the bundle rather than travelling.
Result<std::vector<bundle::BundleAnalysis>> SelectAnalyses(
    const Dataset& ds, const std::vector<TrialRow>& rows) {
  std::map<int64_t, size_t> index;
  for (size_t k = 0; k < rows.size(); ++k) index[rows[k].id] = k;
  XW_ASSIGN_OR_RETURN(std::vector<AnalysisRecord> stored, LoadAnalyses(ds));
  std::vector<bundle::BundleAnalysis> out;
  for (AnalysisRecord& a : stored) {
    bundle::BundleAnalysis b;
    for (int64_t id : a.trial_ids) {
      auto it = index.find(id);
      if (it == index.end()) break;
      b.trials.push_back(it->second);
    }
    if (b.trials.size() != a.trial_ids.size()) continue;
    XW_RETURN_IF_ERROR(CheckAnalysis(
        a, ds.dir() + ": stored analysis " + std::to_string(a.id)));
    b.record = std::move(a);
    out.push_back(std::move(b));
  }
  return out;
}

// The replicas and statistics of `rows` (trial k = rows[k]), each replica
// written to its own file in `staging`. Statistics that their replicas do not
// give (a dataset edited by hand) fail the bundle rather than travelling.
Result<bundle::BundleReplicas> SelectReplicas(const Dataset& ds,
                                              const std::vector<TrialRow>& rows,
                                              const fs::path& staging,
                                              std::vector<std::string>* names) {
  bundle::BundleReplicas out;
  for (size_t k = 0; k < rows.size(); ++k) {
    XW_ASSIGN_OR_RETURN(std::vector<ReplicaRecord> reps,
                        LoadReplicas(ds, rows[k].id, "", /*with_data=*/true));
    XW_ASSIGN_OR_RETURN(std::vector<ReplicaStatsRecord> stats, LoadReplicaStats(ds, rows[k].id));
    for (const ReplicaStatsRecord& s : stats) {
      XW_RETURN_IF_ERROR(
          CheckReplicaStats(s, reps, ds.dir() + ": trial " + std::to_string(rows[k].id)));
      out.stats.push_back({k, s});
    }
    for (size_t i = 0; i < reps.size(); ++i) {
      bundle::BundleReplica b{k, std::move(reps[i]), bundle::ReplicaEntryName(k, i)};
      NamedTensors weights;
      if (b.record.has_weights) {
        XW_ASSIGN_OR_RETURN(weights, LoadReplicaWeights(ds, b.record));
      }
      BundleModel bm;
      bm.group = "replica";
      bm.weights = &weights;
      bm.curves = &b.record.curves;
      bm.predictions = &b.record.predictions;
      bm.attrs = {{"profile", b.record.profile},
                  {"family", b.record.family},
                  {"replica", std::to_string(b.record.replica)},
                  {"status", b.record.status}};
      std::error_code ec;
      fs::create_directories((staging / b.file).parent_path(), ec);
      XW_RETURN_IF_ERROR(WriteBundle((staging / b.file).string(), {bm}));
      names->push_back(b.file);
      out.replicas.push_back(std::move(b));
    }
  }
  return out;
}

}  // namespace

Result<BundleCreateResult> CreateBundle(const Dataset& ds,
                                        std::optional<int64_t> search_id,
                                        const std::vector<int64_t>& trial_ids,
                                        const std::string& out,
                                        const BundleCreateOptions& options) {
  XW_RETURN_IF_ERROR(CheckContributor(options.contributor));
  BundleManifest m;
  XW_ASSIGN_OR_RETURN(std::vector<TrialRow> rows,
                      SelectRows(ds, search_id, trial_ids, &m.search));
  XW_ASSIGN_OR_RETURN(auto profiles, internal::ModelProfileDefinitions(ds));
  XW_ASSIGN_OR_RETURN(bundle::TempDir staging,
                      bundle::TempDir::Create(fs::temp_directory_path(),
                                              "xwires-bundle-create-"));
  std::vector<bundle::BundleTrial> trials(rows.size());
  std::vector<std::string> weight_names;
  for (size_t k = 0; k < rows.size(); ++k) {
    bundle::BundleTrial& b = trials[k];
    XW_ASSIGN_OR_RETURN(
        b.record, internal::RecordFromRow(ds, rows[k], profiles, true, false));
    b.in_search = search_id.has_value();
    b.content_sha256 = TrialContentSha256(b.record);
    if (std::find(m.data_specs.begin(), m.data_specs.end(),
                  b.record.data_spec) == m.data_specs.end()) {
      m.data_specs.push_back(b.record.data_spec);
    }
    for (size_t j = 0; j < rows[k].models.size(); ++j) {
      const ModelRow& row = rows[k].models[j];
      const ModelRecord& rec = b.record.models[j];
      if (!rec.external && !rec.profile_json.empty()) {
        auto [it, inserted] = m.profiles.emplace(rec.profile, rec.profile_json);
        if (!inserted && it->second != rec.profile_json) {
          return Status::InvalidArgument(
              "profile '" + rec.profile +
              "' has two different definitions among the selected "
              "trials (e.g. trial " +
              std::to_string(rows[k].id) + "); bundle them separately");
        }
      }
      b.weights_files.emplace_back();
      if (!row.has_weights) continue;
      const std::string name =
          "weights/" + std::to_string(k) + "/" + std::to_string(j) + ".h5";
      XW_ASSIGN_OR_RETURN(NamedTensors w, ds.LoadWeights(row.id));
      std::error_code ec;
      fs::create_directories((staging.path() / name).parent_path(), ec);
      XW_RETURN_IF_ERROR(WriteTensorFile((staging.path() / name).string(), w));
      b.weights_files.back() = name;
      weight_names.push_back(name);
    }
  }
  XW_ASSIGN_OR_RETURN(std::string trials_json, bundle::TrialsToJson(trials));
  XW_RETURN_IF_ERROR(
      bundle::WriteFileBytes(staging.path() / kBundleTrialsName, trials_json));
  XW_ASSIGN_OR_RETURN(std::vector<bundle::BundleAnalysis> analyses,
                      SelectAnalyses(ds, rows));
  XW_RETURN_IF_ERROR(bundle::WriteFileBytes(
      staging.path() / kBundleAnalysesName, bundle::AnalysesToJson(analyses)));
  std::vector<std::string> replica_names;
  XW_ASSIGN_OR_RETURN(bundle::BundleReplicas replicas,
                      SelectReplicas(ds, rows, staging.path(), &replica_names));
  XW_RETURN_IF_ERROR(bundle::WriteFileBytes(staging.path() / kBundleReplicasName,
                                            bundle::ReplicasToJson(replicas)));
  m.toolkit_version = GetBuildInfo().toolkit_version;
  m.created = UtcNow();
  m.contributor = options.contributor;
  m.machine_json = MachineFingerprintJson(options.threads);
  m.trial_count = trials.size();
  XW_RETURN_IF_ERROR(ListFile(staging.path(), kBundleTrialsName, &m));
  XW_RETURN_IF_ERROR(ListFile(staging.path(), kBundleAnalysesName, &m));
  for (const std::string& name : weight_names) {
    XW_RETURN_IF_ERROR(ListFile(staging.path(), name, &m));
  }
  // Format 3's files after those of format 2, so that a bundle reads in the
  // same order as before.
  XW_RETURN_IF_ERROR(ListFile(staging.path(), kBundleReplicasName, &m));
  for (const std::string& name : replica_names) {
    XW_RETURN_IF_ERROR(ListFile(staging.path(), name, &m));
  }
  XW_ASSIGN_OR_RETURN(std::string manifest_json, bundle::ManifestToJson(m));
  XW_ASSIGN_OR_RETURN(auto writer, bundle::ArchiveWriter::Create(out));
  XW_RETURN_IF_ERROR(writer->AddBytes(kBundleManifestName, manifest_json));
  for (const BundleFile& f : m.files) {
    XW_RETURN_IF_ERROR(writer->AddFile(f.path, staging.path() / f.path));
  }
  XW_RETURN_IF_ERROR(writer->Finish());
  BundleCreateResult r;
  r.trials = static_cast<int64_t>(trials.size());
  std::error_code ec;
  r.bytes = fs::file_size(out, ec);
  XW_ASSIGN_OR_RETURN(r.sha256, Sha256File(out));
  return r;
}

}  // namespace xw
