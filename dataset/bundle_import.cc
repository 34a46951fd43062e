// ImportBundle and MergeDatasets: add trials not already present, all or
// nothing, with provenance.
#include <filesystem>
#include <map>
#include <set>

#include "bundle_open.h"
#include "bundle_store.h"
#include "xwires/core/clock.h"
#include "xwires/dataset/bundle.h"

namespace xw {
namespace {

std::string WithOrigin(const std::string& base, const std::string& origin) {
  return origin.empty() ? base : base + "; origin: " + origin;
}

// Searches to add or reuse for the incoming trials; undone if the trials
// cannot be added.
class SearchMapper {
 public:
  explicit SearchMapper(Dataset& ds) : ds_(ds) {}
  ~SearchMapper() {
    if (!committed_) {
      for (int64_t id : added_) bundle::RemoveUnusedSearch(ds_, id);
    }
  }
  // `key` identifies the search in the source (bundle: 0; dataset: its id).
  Result<int64_t> Map(int64_t key, const SearchRecord& search) {
    auto it = ids_.find(key);
    if (it != ids_.end()) return it->second;
    bool added = false;
    XW_ASSIGN_OR_RETURN(int64_t id,
                        bundle::FindOrAddSearch(ds_, search, &added));
    if (added) added_.push_back(id);
    return ids_[key] = id;
  }
  void Commit() { committed_ = true; }

 private:
  Dataset& ds_;
  std::map<int64_t, int64_t> ids_;
  std::vector<int64_t> added_;
  bool committed_ = false;
};

// Drops records already stored or repeated; returns how many were dropped.
Result<int64_t> DropPresent(const Dataset& ds,
                            std::vector<TrialRecord>* records,
                            std::vector<std::string>* hashes) {
  XW_ASSIGN_OR_RETURN(std::set<std::string> present,
                      bundle::StoredContentHashes(ds, *records));
  std::vector<TrialRecord> keep;
  std::vector<std::string> keep_hashes;
  for (size_t i = 0; i < records->size(); ++i) {
    if (!present.insert((*hashes)[i]).second) continue;
    keep.push_back(std::move((*records)[i]));
    keep_hashes.push_back((*hashes)[i]);
  }
  const int64_t dropped = static_cast<int64_t>(records->size() - keep.size());
  *records = std::move(keep);
  *hashes = std::move(keep_hashes);
  return dropped;
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
  report.provenance = "bundle sha256:" + b.sha256 + " imported " +
                      UtcNow() + " contributor '" +
                      b.manifest.contributor + "'";
  std::vector<TrialRecord> records;
  std::vector<std::string> hashes;
  std::vector<bool> in_search;
  for (bundle::BundleTrial& t : b.trials) {
    t.record.provenance = WithOrigin(report.provenance, t.record.provenance);
    t.record.search_id = t.in_search ? std::optional<int64_t>(0) : std::nullopt;
    records.push_back(std::move(t.record));
    hashes.push_back(t.content_sha256);
  }
  XW_ASSIGN_OR_RETURN(report.skipped, DropPresent(ds, &records, &hashes));
  if (records.empty()) return report;
  SearchMapper searches(ds);
  for (TrialRecord& t : records) {
    if (!t.search_id) continue;
    XW_ASSIGN_OR_RETURN(t.search_id, searches.Map(0, *b.manifest.search));
  }
  XW_ASSIGN_OR_RETURN(report.trial_ids, ds.AddTrials(records));
  searches.Commit();
  report.added = static_cast<int64_t>(report.trial_ids.size());
  return report;
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
  XW_ASSIGN_OR_RETURN(auto profiles, bundle::ModelProfiles(other));
  XW_ASSIGN_OR_RETURN(std::vector<TrialRow> rows, other.Query(TrialQuery{}));
  std::vector<TrialRecord> records;
  std::vector<std::string> hashes;
  std::map<std::string, int64_t> row_of;  // content hash -> source trial id
  for (const TrialRow& row : rows) {
    XW_ASSIGN_OR_RETURN(TrialRecord t, bundle::RecordFromRow(
                                           other, row, profiles, true, false));
    hashes.push_back(TrialContentSha256(t));
    row_of.emplace(hashes.back(), row.id);
    records.push_back(std::move(t));
  }
  XW_ASSIGN_OR_RETURN(report.skipped, DropPresent(ds, &records, &hashes));
  if (records.empty()) return report;
  XW_ASSIGN_OR_RETURN(std::vector<SearchRow> other_searches, other.Searches());
  std::map<int64_t, SearchRecord> search_of;
  for (const SearchRow& s : other_searches) search_of[s.id] = s.record;
  SearchMapper searches(ds);
  for (size_t i = 0; i < records.size(); ++i) {
    TrialRecord& t = records[i];
    // Weights only for the trials actually added.
    XW_ASSIGN_OR_RETURN(TrialRow row, other.GetTrial(row_of.at(hashes[i])));
    for (size_t j = 0; j < row.models.size(); ++j) {
      if (!row.models[j].has_weights) continue;
      XW_ASSIGN_OR_RETURN(t.models[j].weights,
                          other.LoadWeights(row.models[j].id));
    }
    t.provenance = WithOrigin(report.provenance, t.provenance);
    if (t.search_id) {
      auto it = search_of.find(*t.search_id);
      if (it == search_of.end()) {
        t.search_id.reset();
      } else {
        XW_ASSIGN_OR_RETURN(t.search_id, searches.Map(it->first, it->second));
      }
    }
  }
  XW_ASSIGN_OR_RETURN(report.trial_ids, ds.AddTrials(records));
  searches.Commit();
  report.added = static_cast<int64_t>(report.trial_ids.size());
  return report;
}

}  // namespace xw
