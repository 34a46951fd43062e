// OpenBundle: the static checks of an untrusted bundle, in order.
#include "bundle_open.h"

#include <filesystem>
#include <map>
#include <set>

#include "bundle_manifest.h"
#include "dataset/store/model_file.h"
#include "dataset/store/sha256.h"
#include "xwires/core/file_util.h"
#include "xwires/dataset/store/tensor_file.h"

namespace xw::bundle {
namespace {

// Reads an extracted file no larger than `max_bytes` (checked before reading).
Result<std::string> ReadSmallFile(const ExtractedFile& f, uint64_t max_bytes) {
  if (f.bytes > max_bytes) {
    return Status::InvalidArgument(f.name + ": larger than the limit of " +
                                   std::to_string(max_bytes) + " bytes");
  }
  auto text = ReadWholeFile(f.path, "extracted " + f.name);
  if (!text.ok()) return Status::IOError("cannot read extracted " + f.name);
  return text;
}

class Opener {
 public:
  Opener(const BundleCheckers& checkers, const OpenOptions& options,
         OpenedBundle* out)
      : checkers_(checkers), options_(options), out_(out) {}

  // True when the error came from the archive reader, whose messages
  // already name the archive.
  bool named() const { return named_; }

  Status Run(const std::string& path) {
    XW_ASSIGN_OR_RETURN(out_->sha256, Sha256File(path));
    std::filesystem::path parent =
        options_.temp_dir.empty() ? std::filesystem::temp_directory_path()
                                  : std::filesystem::path(options_.temp_dir);
    ArchiveLimits limits;
    limits.max_entry_bytes = options_.limits.max_file_bytes;
    limits.max_total_bytes = options_.limits.max_total_bytes;
    limits.max_entries = options_.limits.max_entries;
    auto archive = ExtractArchive(path, parent, limits);
    if (!archive.ok()) {
      named_ = true;  // the reader's messages already name the archive
      return archive.status();
    }
    out_->archive = std::move(archive).value();
    Done("archive: " + std::to_string(out_->archive.files.size()) +
         " regular files, " + out_->archive.compression +
         ", no links, devices, escaping paths or duplicates");
    const ExtractedFile* mf = out_->archive.Find(kBundleManifestName);
    if (mf == nullptr)
      return Status::InvalidArgument("the archive has no manifest.json");
    XW_ASSIGN_OR_RETURN(std::string text,
                        ReadSmallFile(*mf, ManifestLimits{}.max_bytes));
    XW_ASSIGN_OR_RETURN(out_->manifest, ParseManifest(text));
    const BundleManifest& m = out_->manifest;
    Done("manifest: format " + std::to_string(m.format_version) +
         ", written by xwires " + m.toolkit_version + " on " + m.created +
         ", contributor '" + m.contributor + "'");
    XW_RETURN_IF_ERROR(CheckFilesAgainstManifest(m, out_->archive));
    Done("files: exactly the " + std::to_string(m.files.size()) +
         " listed in the manifest, sizes and sha256 match");
    const ExtractedFile* tf = out_->archive.Find(kBundleTrialsName);
    if (tf == nullptr)
      return Status::InvalidArgument("the bundle has no trials.json");
    XW_ASSIGN_OR_RETURN(text, ReadSmallFile(*tf, uint64_t{256} << 20));
    XW_ASSIGN_OR_RETURN(out_->trials, ParseTrialsJson(text, m));
    Done("trials: " + std::to_string(out_->trials.size()) +
         " trials match their schema and content_sha256; profiles and data "
         "specs match the "
         "manifest");
    XW_RETURN_IF_ERROR(ReadAnalyses());
    XW_RETURN_IF_ERROR(CheckWeights());
    XW_RETURN_IF_ERROR(ReadReplicas());
    XW_RETURN_IF_ERROR(CheckProfiles());
    return CheckSearch();
  }

 private:
  void Done(const std::string& line) {
    out_->checks.push_back(line);
    if (options_.log) options_.log(line);
  }

  // Format 2 carries the analyses of its trials; format 1 has none.
  Status ReadAnalyses() {
    if (out_->manifest.format_version < 2) return Status::OK();
    const ExtractedFile* af = out_->archive.Find(kBundleAnalysesName);
    if (af == nullptr) {
      return Status::InvalidArgument(
          "the bundle (format " +
          std::to_string(out_->manifest.format_version) +
          ") has no analyses.json");
    }
    XW_ASSIGN_OR_RETURN(std::string text,
                        ReadSmallFile(*af, uint64_t{256} << 20));
    XW_ASSIGN_OR_RETURN(out_->analyses,
                        ParseAnalysesJson(text, out_->trials.size()));
    std::map<std::string, int> kinds;
    for (const BundleAnalysis& a : out_->analyses) ++kinds[a.record.kind];
    std::string list;
    for (const auto& [kind, n] : kinds)
      list += (list.empty() ? " (" : ", ") + std::to_string(n) + " " + kind;
    Done("analyses: " + std::to_string(out_->analyses.size()) + " results" +
         (list.empty() ? "" : list + ")") +
         " match their schema and the store's rules and describe trials of "
         "the bundle");
    return Status::OK();
  }

  // Format 3: replicas.json, every replica's file against its row and the
  // store's rules, and every statistics row against what its replicas give.
  Status ReadReplicas() {
    if (out_->manifest.format_version < 3) return Status::OK();
    const ExtractedFile* rf = out_->archive.Find(kBundleReplicasName);
    if (rf == nullptr) {
      return Status::InvalidArgument("the bundle (format " +
                                     std::to_string(out_->manifest.format_version) +
                                     ") has no replicas.json");
    }
    XW_ASSIGN_OR_RETURN(std::string text, ReadSmallFile(*rf, uint64_t{256} << 20));
    std::set<std::string> listed;
    for (const BundleFile& f : out_->manifest.files) listed.insert(f.path);
    XW_ASSIGN_OR_RETURN(out_->replicas, ParseReplicasJson(text, out_->trials, listed));
    std::map<size_t, std::vector<ReplicaRecord>> by_trial;
    for (BundleReplica& b : out_->replicas.replicas) {
      XW_RETURN_IF_ERROR(ReadReplicaFile(&b));
      by_trial[b.trial].push_back(b.record);
    }
    Done("replicas: " + std::to_string(out_->replicas.replicas.size()) +
         " replicas; each file matches its sha256, its row and the store's rules");
    for (size_t i = 0; i < out_->replicas.stats.size(); ++i) {
      const BundleReplicaStats& s = out_->replicas.stats[i];
      Status ok = CheckReplicaStats(s.record, by_trial[s.trial],
                                    "replicas.json: statistics[" + std::to_string(i) +
                                        "] (trial " + std::to_string(s.trial) + ")");
      if (!ok.ok()) return Status::Corruption(ok.message());
    }
    Done("replica statistics: " + std::to_string(out_->replicas.stats.size()) +
         " rows; each verdict and number is what its replicas give");
    return Status::OK();
  }

  Status ReadReplicaFile(BundleReplica* b) {
    ReplicaRecord& r = b->record;
    const ExtractedFile* f = out_->archive.Find(b->file);
    if (f == nullptr) return Status::Internal("replica file vanished: " + b->file);
    const std::string what = b->file + " (trial " + std::to_string(b->trial) + ", profile '" +
                             r.profile + "', " + r.family + " replica " +
                             std::to_string(r.replica) + ")";
    const size_t epochs = r.curves.size();
    auto curves = ReadBundleCurves(f->path.string(), "replica");
    auto pred = ReadBundlePredictions(f->path.string(), "replica");
    if (!curves.ok() || !pred.ok()) {
      return Status::Corruption(what + ": not a readable replica file: " +
                                (curves.ok() ? pred.status() : curves.status()).message());
    }
    r.curves = std::move(*curves);
    r.predictions = std::move(*pred);
    if (r.curves.size() != epochs || static_cast<int64_t>(r.predictions.size()) != r.n_examples) {
      return Status::Corruption(what + ": holds " + std::to_string(r.curves.size()) +
                                " epochs and " + std::to_string(r.predictions.size()) +
                                " predictions; replicas.json says " + std::to_string(epochs) +
                                " and " + std::to_string(r.n_examples));
    }
    if (r.has_weights) {
      auto w = ReadBundleWeights(f->path.string(), "replica");
      if (!w.ok()) {
        return Status::Corruption(what + ": unreadable weights: " + w.status().message());
      }
      if (WeightsSha256(*w) != r.weights_sha256) {
        return Status::Corruption(what + ": the weights do not match weights_sha256");
      }
      if (options_.keep_weights) r.weights = std::move(*w);
    }
    Status ok = CheckReplica(r, "replicas.json: " + what);
    // The rules compare the weights with their hash only when present.
    return ok;
  }

  Status CheckWeights() {
    int64_t n = 0;
    for (size_t k = 0; k < out_->trials.size(); ++k) {
      BundleTrial& b = out_->trials[k];
      for (size_t j = 0; j < b.weights_files.size(); ++j) {
        if (b.weights_files[j].empty()) continue;
        ModelRecord& m = b.record.models[j];
        const ExtractedFile* f = out_->archive.Find(b.weights_files[j]);
        if (f == nullptr)
          return Status::Internal("weights file vanished: " +
                                  b.weights_files[j]);
        auto w = ReadTensorFile(f->path.string());
        if (!w.ok()) {
          return Status::Corruption(
              b.weights_files[j] +
              ": not a readable weights file: " + w.status().message());
        }
        if (WeightsSha256(*w) != m.weights_sha256) {
          return Status::Corruption(b.weights_files[j] +
                                    ": the weights do not match "
                                    "weights_sha256 of trial " +
                                    std::to_string(k) + " model '" + m.profile +
                                    "'");
        }
        if (options_.keep_weights) m.weights = std::move(*w);
        ++n;
      }
    }
    Done("weights: " + std::to_string(n) +
         " files read, each matches its weights_sha256");
    return Status::OK();
  }

  Status CheckProfiles() {
    if (!checkers_.profile) {
      Done("profiles: definitions not checked (no profile checker)");
      return Status::OK();
    }
    for (const auto& [name, def] : out_->manifest.profiles) {
      Status s = checkers_.profile(name, def);
      if (!s.ok())
        return s.WithContext("manifest.json: profile '" + name + "'");
    }
    Done("profiles: " + std::to_string(out_->manifest.profiles.size()) +
         " definitions load as profiles");
    return Status::OK();
  }

  Status CheckSearch() {
    if (!out_->manifest.search) return Status::OK();
    if (!checkers_.search_space) {
      Done(
          "search: hyperparameters not checked against the space (no checker)");
      return Status::OK();
    }
    int64_t n = 0;
    for (size_t k = 0; k < out_->trials.size(); ++k) {
      if (!out_->trials[k].in_search) continue;
      Status s = checkers_.search_space(*out_->manifest.search,
                                        out_->trials[k].record);
      if (!s.ok())
        return s.WithContext("trials.json: trial " + std::to_string(k));
      ++n;
    }
    Done("search: hyperparameters of " + std::to_string(n) +
         " trials lie in the search space");
    return Status::OK();
  }

  const BundleCheckers& checkers_;
  const OpenOptions& options_;
  bool named_ = false;
  OpenedBundle* out_;
};

}  // namespace

Result<OpenedBundle> OpenBundle(const std::string& path,
                                const BundleCheckers& checkers,
                                const OpenOptions& options) {
  OpenedBundle out;
  Opener opener(checkers, options, &out);
  Status s = opener.Run(path);
  if (!s.ok())
    return opener.named() ? s : s.WithContext("bundle '" + path + "'");
  return out;
}

}  // namespace xw::bundle
