#include "xwires/api/attribute.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "attribute_internal.h"
#include "xwires/api/trial_setup.h"
#include "xwires/core/parallel.h"
#include "xwires/core/significance.h"
#include "xwires/dataset/store/replicas.h"
#include "xwires/trainers/trainer.h"

namespace xw {
namespace {

using OJson = nlohmann::ordered_json;

void Flatten(const OJson& j, const std::string& prefix,
             std::vector<std::pair<std::string, OJson>>* out) {
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string path =
        prefix.empty() ? it.key() : prefix + "." + it.key();
    if (it->is_object()) {
      Flatten(*it, path, out);
    } else {
      out->emplace_back(path, *it);
    }
  }
}

std::string Pointer(const std::string& path) {
  std::string p = "/" + path;
  std::replace(p.begin(), p.end(), '.', '/');
  return p;
}

}  // namespace

std::vector<Knob> DifferingKnobs(const Profile& a, const Profile& b) {
  std::vector<std::pair<std::string, OJson>> la, lb;
  Flatten(OJson::parse(ProfileToJsonWithAccelerator(a)), "", &la);
  Flatten(OJson::parse(ProfileToJsonWithAccelerator(b)), "", &lb);
  std::vector<Knob> out;
  for (const auto& [path, va] : la) {
    if (path == "name") continue;
    for (const auto& [pb, vb] : lb) {
      if (pb == path && va != vb) out.push_back({path, va.dump(), vb.dump()});
    }
  }
  return out;
}

Result<Profile> SwitchKnob(const Profile& base, const std::string& path,
                           const std::string& value_json) {
  OJson j = OJson::parse(ProfileToJsonWithAccelerator(base));
  const OJson::json_pointer ptr(Pointer(path));
  if (path == "name" || !j.contains(ptr) || j.at(ptr).is_object()) {
    return Status::InvalidArgument("profile knob '" + path +
                                   "' does not exist");
  }
  OJson value = OJson::parse(value_json, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) {
    return Status::InvalidArgument("knob '" + path +
                                   "': value is not JSON: " + value_json);
  }
  j[ptr] = value;
  j["name"] = base.name + "+" + path;
  auto p = ParseProfileJson(j.dump());
  if (!p.ok()) return p.status().WithContext("switching knob '" + path + "'");
  return p;
}

namespace {

struct Job {
  AttributionRun run;
  Profile profile;
  std::vector<int> predictions;
  Status status;
};

// Trains one job and predicts the test split (the worker's ThreadScope
// applies to the prediction; TrainProfile sets its own).
void RunJob(const TrialSetup& s, int threads, Job* job) {
  const auto start = std::chrono::steady_clock::now();
  TrainOptions o = s.options;
  o.threads = threads;
  o.on_progress = nullptr;
  if (!s.init_weights.empty()) o.init_weights = &s.init_weights;
  auto r = TrainProfile(job->profile, s.data, o);
  if (!r.ok()) {
    job->status =
        r.status().WithContext("training '" + job->profile.name + "'");
    return;
  }
  const ModelRecord& m = r->record;
  job->run.profile = job->profile.name;
  job->run.status = m.status;
  job->run.test_acc = m.test_acc;
  job->run.test_loss = m.test_loss;
  job->run.weights_sha256 = m.weights_sha256;
  auto model = BuildWithWeights(s, m.weights, job->profile.name);
  if (!model.ok()) {
    job->status = model.status();
    return;
  }
  auto logits =
      Predict(**model, job->profile, s.data.test.images, o.eval_batch_size);
  if (!logits.ok()) {
    job->status = logits.status();
    return;
  }
  const int k = s.data.test.num_classes;
  job->predictions.resize(s.data.test.size());
  for (int64_t i = 0; i < s.data.test.size(); ++i) {
    job->predictions[i] = ArgMax(logits->data() + i * k, k);
  }
  job->run.wall_time_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
}

// Runs every job on `jobs` worker threads; progress is reported on the
// calling thread.
Status RunAll(const TrialSetup& s, std::vector<Job>& all,
              const AttributeOptions& opt) {
  const int n = static_cast<int>(all.size());
  const int hw = HardwareThreads();
  const int jobs = std::clamp(opt.jobs > 0 ? opt.jobs : std::min(n, hw), 1, n);
  const int threads = opt.threads > 0 ? opt.threads : std::max(1, hw / jobs);
  std::atomic<int> next{0};
  std::mutex mu;
  std::condition_variable cv;
  std::deque<int> finished;
  std::vector<std::thread> workers;
  for (int w = 0; w < jobs; ++w) {
    workers.emplace_back([&] {
      const ThreadScope scope(threads);
      for (int i = next++; i < n; i = next++) {
        RunJob(s, threads, &all[i]);
        std::lock_guard<std::mutex> lock(mu);
        finished.push_back(i);
        cv.notify_one();
      }
    });
  }
  for (int done = 0; done < n;) {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return !finished.empty(); });
    const int i = finished.front();
    finished.pop_front();
    lock.unlock();
    ++done;
    if (opt.on_run)
      opt.on_run(done, n,
                 all[i].run.profile.empty() ? all[i].profile.name
                                            : all[i].run.profile);
  }
  for (auto& t : workers) t.join();
  for (const Job& j : all) XW_RETURN_IF_ERROR(j.status);
  return Status::OK();
}

double Disagreement(const std::vector<int>& a, const std::vector<int>& b) {
  if (a.empty()) return 0;
  int64_t d = 0;
  for (size_t i = 0; i < a.size(); ++i) d += a[i] != b[i];
  return static_cast<double>(d) / static_cast<double>(a.size());
}

Job MakeJob(Profile p, const std::string& knob, const std::string& direction,
            const std::string& value) {
  Job j;
  j.profile = std::move(p);
  j.run.knob = knob;
  j.run.direction = direction;
  j.run.value_json = value;
  return j;
}

// The noise floor of the pair from the trial's latest replica statistics
// of these two profiles (either order), if any.
Status AddNoiseFloor(const Dataset& ds, AttributionReport* r) {
  XW_ASSIGN_OR_RETURN(std::vector<ReplicaStatsRecord> st,
                      LoadReplicaStats(ds, r->trial_id));
  for (auto it = st.rbegin(); it != st.rend(); ++it) {
    const bool same = (it->profile_a == r->profile_a && it->profile_b == r->profile_b) ||
                      (it->profile_a == r->profile_b && it->profile_b == r->profile_a);
    if (!same) continue;
    r->noise_sd = it->NoiseSd();
    r->noise_df = it->k_a + it->k_b - 2;
    r->noise_family = it->family;
    r->noise_threshold = NoiseThreshold(r->noise_sd, r->noise_df);
    break;
  }
  return Status::OK();
}

}  // namespace

double NoiseThreshold(double noise_sd, int64_t df) {
  if (!(noise_sd >= 0) || df < 1) return NAN;
  return stats::StudentQuantile(static_cast<double>(df), 0.975) * std::sqrt(2.0) *
         noise_sd;
}

Result<AttributionReport> AttributeDivergence(const Dataset& ds,
                                              int64_t trial_id,
                                              const AttributeOptions& opt) {
  if (opt.jobs < 0 || opt.threads < 0) {
    return Status::InvalidArgument("--jobs and --threads must be >= 0");
  }
  XW_ASSIGN_OR_RETURN(TrialSetup s,
                      LoadTrialSetup(ds, trial_id, /*train_data=*/true));
  XW_ASSIGN_OR_RETURN(auto pair, PickPair(s.trial, opt.profile_a, opt.profile_b, "attribute"));
  const auto [ia, ib] = pair;
  const Profile& pa = s.profiles[ia];
  const Profile& pb = s.profiles[ib];
  std::vector<Knob> knobs = DifferingKnobs(pa, pb);
  if (knobs.empty()) {
    return Status::FailedPrecondition(
        "trial " + std::to_string(trial_id) + ": profiles '" + pa.name +
        "' and '" + pb.name + "' have the same knobs; nothing to attribute");
  }
  if (!opt.knobs.empty()) {
    std::vector<Knob> picked;
    for (const std::string& name : opt.knobs) {
      auto it = std::find_if(knobs.begin(), knobs.end(),
                             [&](const Knob& k) { return k.path == name; });
      if (it == knobs.end()) {
        std::string have;
        for (const Knob& k : knobs) have += (have.empty() ? "" : ", ") + k.path;
        return Status::InvalidArgument(
            "--knob '" + name + "' is not a knob on which '" + pa.name +
            "' and '" + pb.name + "' differ (they differ in: " + have + ")");
      }
      picked.push_back(*it);
    }
    knobs = picked;
  }
  std::vector<Job> all;
  all.push_back(MakeJob(pa, "", "baseline", ""));
  all.push_back(MakeJob(pb, "", "baseline", ""));
  for (const Knob& k : knobs) {
    XW_ASSIGN_OR_RETURN(Profile ak, SwitchKnob(pa, k.path, k.b_value));
    XW_ASSIGN_OR_RETURN(Profile bk, SwitchKnob(pb, k.path, k.a_value));
    all.push_back(MakeJob(std::move(ak), k.path, "a_to_b", k.b_value));
    all.push_back(MakeJob(std::move(bk), k.path, "b_to_a", k.a_value));
  }
  XW_RETURN_IF_ERROR(RunAll(s, all, opt));

  AttributionReport r;
  r.trial_id = trial_id;
  r.arch = s.trial.arch;
  r.profile_a = s.trial.models[ia].profile;
  r.profile_b = s.trial.models[ib].profile;
  r.stored_divergence =
      std::fabs(s.trial.models[ia].test_acc - s.trial.models[ib].test_acc);
  r.reproduced_a =
      all[0].run.weights_sha256 == s.trial.models[ia].weights_sha256;
  r.reproduced_b =
      all[1].run.weights_sha256 == s.trial.models[ib].weights_sha256;
  const std::vector<int>& pred_a = all[0].predictions;
  const std::vector<int>& pred_b = all[1].predictions;
  for (Job& j : all) {
    j.run.disagree_a = Disagreement(j.predictions, pred_a);
    j.run.disagree_b = Disagreement(j.predictions, pred_b);
    r.runs.push_back(j.run);
  }
  for (size_t i = 0; i < knobs.size(); ++i) {
    KnobEffect e;
    e.knob = knobs[i];
    e.acc_a_switched = all[2 + 2 * i].run.test_acc;
    e.acc_b_switched = all[3 + 2 * i].run.test_acc;
    e.disagree_alone_a = all[2 + 2 * i].run.disagree_a;
    e.disagree_remain_b = all[3 + 2 * i].run.disagree_b;
    r.knobs.push_back(e);
  }
  XW_RETURN_IF_ERROR(AddNoiseFloor(ds, &r));
  SummarizeAttribution(&r);
  return r;
}

}  // namespace xw
