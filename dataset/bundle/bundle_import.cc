// ImportBundle and MergeDatasets: add the trials not already present, the
// searches they belong to and the analyses that describe them, all in one
// transaction (internal::AddBatch), with provenance.
#include <filesystem>
#include <map>
#include <set>

#include "bundle_open.h"
#include "bundle_store.h"
#include "dataset/store/dataset_internal.h"
#include "xwires/core/clock.h"
#include "xwires/dataset/bundle/bundle.h"
#include "xwires/dataset/store/analysis.h"

namespace xw {
namespace {

std::string WithOrigin(const std::string& base, const std::string& origin) {
  return origin.empty() ? base : base + "; origin: " + origin;
}

// Where an incoming trial ends up: a trial already stored (its id) or one
// of the batch (its index there).
struct Placed {
  bool stored = false;
  int64_t value = 0;
};

// Decides, for incoming `records` with content `hashes`, which are new: they
// are moved to `batch` (first copy of each content only); the others refer
// to the stored trial of the same content.
Result<std::vector<Placed>> Place(const Dataset& ds,
                                  std::vector<TrialRecord>& records,
                                  const std::vector<std::string>& hashes,
                                  std::vector<TrialRecord>* batch,
                                  std::vector<size_t>* batch_source) {
  XW_ASSIGN_OR_RETURN(auto stored, bundle::StoredContentHashes(ds, records));
  std::map<std::string, size_t> in_batch;
  std::vector<Placed> out(records.size());
  for (size_t i = 0; i < records.size(); ++i) {
    if (auto it = stored.find(hashes[i]); it != stored.end()) {
      out[i] = {true, it->second};
    } else if (auto b = in_batch.find(hashes[i]); b != in_batch.end()) {
      out[i] = {false, static_cast<int64_t>(b->second)};
    } else {
      in_batch[hashes[i]] = batch->size();
      out[i] = {false, static_cast<int64_t>(batch->size())};
      batch_source->push_back(i);
      batch->push_back(std::move(records[i]));
    }
  }
  return out;
}

// An incoming analysis of incoming trials `trials`, pointed at where those
// trials end up.
internal::BatchAnalysis ToBatch(AnalysisRecord record,
                                const std::vector<size_t>& trials,
                                const std::vector<Placed>& placed) {
  internal::BatchAnalysis b;
  std::set<int64_t> stored;
  std::set<size_t> batch;
  for (size_t i : trials) {
    const Placed& p = placed[i];
    if (p.stored) {
      stored.insert(p.value);
    } else {
      batch.insert(static_cast<size_t>(p.value));
    }
  }
  b.record = std::move(record);
  b.stored_trials.assign(stored.begin(), stored.end());
  b.batch_trials.assign(batch.begin(), batch.end());
  return b;
}

internal::BatchTrialRef Ref(const Placed& p) { return {p.stored, p.value}; }

// Adds `batch` and `extras` (unless there is nothing new) and completes
// `report` for `incoming` trials.
Result<BundleImportReport> Add(Dataset& ds, BundleImportReport report,
                               const std::vector<TrialRecord>& batch,
                               const internal::BatchExtras& extras,
                               size_t incoming) {
  report.skipped = static_cast<int64_t>(incoming);
  if (batch.empty() && extras.analyses.empty() && extras.replicas.empty() &&
      extras.replica_stats.empty()) {
    return report;
  }
  XW_ASSIGN_OR_RETURN(internal::BatchResult r,
                      internal::AddBatch(ds, batch, extras));
  report.trial_ids = r.trial_ids;
  report.added = static_cast<int64_t>(r.trial_ids.size());
  report.skipped = static_cast<int64_t>(incoming) - report.added;
  report.analyses_added = r.analyses_added;
  report.analyses_skipped = r.analyses_skipped;
  report.searches_added = r.searches_added;
  report.replicas_added = r.replicas_added;
  report.replicas_skipped = r.replicas_skipped;
  report.replica_stats_added = r.replica_stats_added;
  report.replica_stats_skipped = r.replica_stats_skipped;
  return report;
}

// The replicas and statistics of `other`'s trials `rows` (placed as
// `placed`), weights included; statistics are checked against their
// replicas first, so that a wrong stored verdict does not spread.
Status AddReplicas(const Dataset& other, const std::vector<TrialRow>& rows,
                   const std::vector<Placed>& placed, internal::BatchExtras* extras) {
  for (size_t k = 0; k < rows.size(); ++k) {
    XW_ASSIGN_OR_RETURN(std::vector<ReplicaRecord> reps,
                        LoadReplicas(other, rows[k].id, "", /*with_data=*/true));
    XW_ASSIGN_OR_RETURN(std::vector<ReplicaStatsRecord> stats,
                        LoadReplicaStats(other, rows[k].id));
    for (ReplicaStatsRecord& s : stats) {
      XW_RETURN_IF_ERROR(CheckReplicaStats(
          s, reps, other.dir() + ": trial " + std::to_string(rows[k].id) +
                       " (run `xwires fsck --repair` there to recompute it)"));
      extras->replica_stats.push_back({Ref(placed[k]), std::move(s)});
    }
    for (ReplicaRecord& r : reps) {
      if (r.has_weights) {
        XW_ASSIGN_OR_RETURN(r.weights, LoadReplicaWeights(other, r));
      }
      extras->replicas.push_back({Ref(placed[k]), std::move(r)});
    }
  }
  return Status::OK();
}

}  // namespace

Result<BundleImportReport> ImportBundle(Dataset& ds, const std::string& bundle,
                                        const BundleCheckers& checkers,
                                        const BundleImportOptions& options) {
  if (ds.read_only())
    return Status::FailedPrecondition(ds.dir() + ": opened read-only");
  bundle::OpenOptions open;
  open.temp_dir = options.temp_dir;
  open.limits = options.limits;
  open.log = options.log;
  open.keep_weights = true;
  XW_ASSIGN_OR_RETURN(bundle::OpenedBundle b,
                      bundle::OpenBundle(bundle, checkers, open));
  BundleImportReport report;
  report.provenance = "bundle sha256:" + b.sha256 + " imported " + UtcNow() +
                      " contributor '" + b.manifest.contributor + "'";
  std::vector<TrialRecord> records;
  std::vector<std::string> hashes;
  for (bundle::BundleTrial& t : b.trials) {
    t.record.provenance = WithOrigin(report.provenance, t.record.provenance);
    t.record.search_id.reset();
    records.push_back(std::move(t.record));
    hashes.push_back(t.content_sha256);
  }
  std::vector<TrialRecord> batch;
  std::vector<size_t> source;
  XW_ASSIGN_OR_RETURN(std::vector<Placed> placed,
                      Place(ds, records, hashes, &batch, &source));
  internal::BatchExtras extras;
  for (size_t i = 0; i < batch.size(); ++i) {
    const bool in_search = b.trials[source[i]].in_search;
    if (in_search && extras.searches.empty())
      extras.searches.push_back(*b.manifest.search);
    extras.trial_search.push_back(in_search ? std::optional<size_t>(0)
                                            : std::nullopt);
  }
  for (bundle::BundleAnalysis& a : b.analyses) {
    extras.analyses.push_back(ToBatch(std::move(a.record), a.trials, placed));
  }
  for (bundle::BundleReplica& r : b.replicas.replicas) {
    extras.replicas.push_back({Ref(placed[r.trial]), std::move(r.record)});
  }
  for (bundle::BundleReplicaStats& s : b.replicas.stats) {
    extras.replica_stats.push_back({Ref(placed[s.trial]), std::move(s.record)});
  }
  return Add(ds, std::move(report), batch, extras, records.size());
}

Result<BundleImportReport> MergeDatasets(Dataset& ds, const Dataset& other) {
  if (ds.read_only())
    return Status::FailedPrecondition(ds.dir() + ": opened read-only");
  std::error_code ec1, ec2;
  if (std::filesystem::equivalent(ds.dir(), other.dir(), ec1)) {
    return Status::InvalidArgument("cannot merge " + ds.dir() + " into itself");
  }
  BundleImportReport report;
  report.provenance = "merged from " +
                      std::filesystem::absolute(other.dir(), ec2).string() +
                      " " + UtcNow();
  XW_ASSIGN_OR_RETURN(auto profiles, internal::ModelProfileDefinitions(other));
  XW_ASSIGN_OR_RETURN(std::vector<TrialRow> rows, internal::AllTrials(other));
  std::vector<TrialRecord> records;
  std::vector<std::string> hashes;
  std::map<int64_t, size_t> index;  // source trial id -> position in rows
  for (const TrialRow& row : rows) {
    XW_ASSIGN_OR_RETURN(TrialRecord t, internal::RecordFromRow(
                                           other, row, profiles, true, false));
    hashes.push_back(TrialContentSha256(t));
    index[row.id] = records.size();
    records.push_back(std::move(t));
  }
  std::vector<TrialRecord> batch;
  std::vector<size_t> source;
  XW_ASSIGN_OR_RETURN(std::vector<Placed> placed,
                      Place(ds, records, hashes, &batch, &source));
  XW_ASSIGN_OR_RETURN(std::vector<SearchRow> other_searches, other.Searches());
  std::map<int64_t, size_t> search_index;  // source search id -> extras
  internal::BatchExtras extras;
  for (size_t i = 0; i < batch.size(); ++i) {
    TrialRecord& t = batch[i];
    // Weights only for the trials actually added.
    const TrialRow& row = rows[source[i]];
    for (size_t j = 0; j < row.models.size(); ++j) {
      if (!row.models[j].has_weights) continue;
      XW_ASSIGN_OR_RETURN(t.models[j].weights,
                          other.LoadWeights(row.models[j].id));
    }
    t.provenance = WithOrigin(report.provenance, t.provenance);
    std::optional<size_t> search;
    for (const SearchRow& s : other_searches) {
      if (!t.search_id || s.id != *t.search_id) continue;
      auto [it, added] = search_index.emplace(s.id, extras.searches.size());
      if (added) extras.searches.push_back(s.record);
      search = it->second;
    }
    t.search_id.reset();
    extras.trial_search.push_back(search);
  }
  XW_ASSIGN_OR_RETURN(std::vector<AnalysisRecord> analyses,
                      LoadAnalyses(other));
  for (AnalysisRecord& a : analyses) {
    std::vector<size_t> trials;
    for (int64_t id : a.trial_ids) trials.push_back(index.at(id));
    extras.analyses.push_back(ToBatch(std::move(a), trials, placed));
  }
  XW_RETURN_IF_ERROR(AddReplicas(other, rows, placed, &extras));
  return Add(ds, std::move(report), batch, extras, records.size());
}

}  // namespace xw
