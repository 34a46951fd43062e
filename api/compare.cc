#include "xwires/api/compare.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>

#include "xwires/api/trial_setup.h"
#include "xwires/core/parallel.h"
#include "xwires/trainers/capture.h"
#include "xwires/trainers/trainer.h"

namespace xw {

DiffStats Diff(const float* a, const float* b, int64_t n, double rtol,
               double atol) {
  DiffStats s;
  double aa = 0, bb = 0, ab = 0, dd = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double x = a[i], y = b[i];
    const bool same_bits = std::memcmp(a + i, b + i, sizeof(float)) == 0;
    if (!same_bits) s.identical = false;
    const bool equal =
        same_bits || x == y;  // also equal infinities and NaN bits
    const double d = equal ? 0.0 : std::fabs(x - y);
    const double diff = std::isnan(d) ? INFINITY : d;
    s.max_abs = std::max(s.max_abs, diff);
    const double scale = std::max(std::fabs(x), std::fabs(y));
    if (diff > 0)
      s.max_rel =
          std::max(s.max_rel, std::isfinite(scale) ? diff / scale : INFINITY);
    if (!equal && !(d <= atol + rtol * std::fabs(y))) ++s.not_close;
    aa += x * x;
    bb += y * y;
    ab += x * y;
    dd += diff * diff;
  }
  const double na = std::sqrt(aa), nb = std::sqrt(bb);
  const double norm = std::max(na, nb);
  s.rel_l2 = norm > 0 ? std::sqrt(dd) / norm : (dd > 0 ? INFINITY : 0.0);
  if (na == 0 && nb == 0) {
    s.cosine = 1;
  } else if (na == 0 || nb == 0) {
    s.cosine = 0;
  } else {
    s.cosine = ab / (na * nb);
  }
  if (!std::isfinite(s.cosine)) s.cosine = NAN;
  return s;
}

namespace {

Status CheckOptions(const CompareOptions& o) {
  if (o.probe < 1) return Status::InvalidArgument("--probe must be >= 1");
  if (!(o.rtol >= 0) || !(o.atol >= 0)) {
    return Status::InvalidArgument("--rtol and --atol must be >= 0");
  }
  if (!(o.acc_tol >= 0))
    return Status::InvalidArgument("--acc-tol must be >= 0");
  if (o.threads < 0) return Status::InvalidArgument("--threads must be >= 0");
  if (o.eval_batch < 1)
    return Status::InvalidArgument("--eval-batch-size must be >= 1");
  return Status::OK();
}

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

// identical / close / differ over a list of statistics.
template <typename Item, typename Stats, typename Name>
TierVerdict Verdict(const std::vector<Item>& items, Stats stats, Name name,
                    const char* what) {
  int64_t identical = 0, close = 0;
  const Item* worst = nullptr;
  for (const Item& it : items) {
    const DiffStats& s = stats(it);
    identical += s.identical;
    close += s.close();
    if (!s.close() && (worst == nullptr || !(stats(*worst).rel_l2 >= s.rel_l2)))
      worst = &it;
  }
  const int64_t n = static_cast<int64_t>(items.size());
  TierVerdict v;
  if (identical == n) {
    v.verdict = "identical";
    v.detail = "all " + std::to_string(n) + " " + what + " bitwise identical";
  } else if (close == n) {
    v.verdict = "close";
    v.detail = std::to_string(n - identical) + " of " + std::to_string(n) +
               " " + what + " differ, all within tolerance";
  } else {
    v.verdict = "differ";
    v.detail = std::to_string(n - close) + " of " + std::to_string(n) + " " +
               what + " beyond tolerance; largest relative L2 difference " +
               Num(stats(*worst).rel_l2) + " in '" + name(*worst) + "'";
  }
  return v;
}

Status Tier1(const NamedTensors& wa, const NamedTensors& wb,
             const CompareOptions& o, CompareReport* r) {
  std::map<std::string, const NamedTensor*> by_name;
  for (const NamedTensor& t : wb) by_name[t.name] = &t;
  for (const NamedTensor& t : wa) {
    auto it = by_name.find(t.name);
    if (it == by_name.end() || !it->second->value.SameShape(t.value)) {
      return Status::Corruption("weights of '" + r->profile_a + "' and '" +
                                r->profile_b + "' do not match at tensor '" +
                                t.name + "'");
    }
    TensorDiff d;
    d.name = t.name;
    d.shape = t.value.shape();
    d.buffer = t.is_int64 || t.name.find("running_") != std::string::npos;
    d.stats = Diff(t.value.data(), it->second->value.data(), t.value.size(),
                   o.rtol, o.atol);
    r->tensors.push_back(std::move(d));
  }
  r->tier1 = Verdict(
      r->tensors,
      [](const TensorDiff& d) -> const DiffStats& { return d.stats; },
      [](const TensorDiff& d) { return d.name; }, "tensors");
  return Status::OK();
}

Status Tier2(Model& ma, Model& mb, const TrialSetup& s, size_t ia, size_t ib,
             const CompareOptions& o, CompareReport* r) {
  const ImageDataset& test = s.data.test;
  r->probe = std::min<int64_t>(o.probe, test.size());
  std::vector<int64_t> idx(r->probe);
  for (int64_t i = 0; i < r->probe; ++i) idx[i] = i;
  Tensor x;
  std::vector<int32_t> labels;
  GatherBatch(test, idx.data(), r->probe, &x, &labels);
  XW_ASSIGN_OR_RETURN(auto acts_a, ForwardCapture(ma, s.profiles[ia], x));
  XW_ASSIGN_OR_RETURN(auto acts_b, ForwardCapture(mb, s.profiles[ib], x));
  if (acts_a.size() != acts_b.size()) {
    return Status::Internal(
        "the two models captured a different number of modules");
  }
  for (size_t i = 0; i < acts_a.size(); ++i) {
    LayerDiff d;
    d.path = acts_a[i].path;
    d.type = acts_a[i].type;
    d.shape_a = acts_a[i].value.shape();
    d.shape_b = acts_b[i].value.shape();
    if (d.shape_a == d.shape_b) {
      d.stats = Diff(acts_a[i].value.data(), acts_b[i].value.data(),
                     acts_a[i].value.size(), o.rtol, o.atol);
    } else {
      d.stats.identical = false;
      d.stats.not_close = std::max<int64_t>(1, acts_a[i].value.size());
      d.stats.max_abs = d.stats.max_rel = d.stats.rel_l2 = INFINITY;
      d.stats.cosine = NAN;
    }
    if (r->first_differing.empty() && !d.stats.identical)
      r->first_differing = d.path;
    if (r->parted_at.empty() && !d.stats.close()) r->parted_at = d.path;
    r->layers.push_back(std::move(d));
  }
  r->tier2 = Verdict(
      r->layers, [](const LayerDiff& d) -> const DiffStats& { return d.stats; },
      [](const LayerDiff& d) { return d.path; }, "module outputs");
  if (!r->parted_at.empty())
    r->tier2.detail += "; first beyond tolerance: '" + r->parted_at + "'";
  return Status::OK();
}

Status Tier3(Model& ma, Model& mb, const TrialSetup& s, size_t ia, size_t ib,
             const CompareOptions& o, CompareReport* r) {
  const ImageDataset& test = s.data.test;
  XW_ASSIGN_OR_RETURN(Tensor la,
                      Predict(ma, s.profiles[ia], test.images, o.eval_batch));
  XW_ASSIGN_OR_RETURN(Tensor lb,
                      Predict(mb, s.profiles[ib], test.images, o.eval_batch));
  TaskDiff& t = r->task;
  const int k = test.num_classes;
  t.classes = k;
  t.n = test.size();
  t.confusion_a.assign(static_cast<size_t>(k) * k, 0);
  t.confusion_b.assign(static_cast<size_t>(k) * k, 0);
  std::vector<int64_t> per_class(k, 0);
  int64_t correct_a = 0, correct_b = 0, agree = 0;
  for (int64_t i = 0; i < t.n; ++i) {
    const int pa = ArgMax(la.data() + i * k, k),
              pb = ArgMax(lb.data() + i * k, k);
    const int y = test.labels[i];
    ++per_class[y];
    ++t.confusion_a[static_cast<size_t>(y) * k + pa];
    ++t.confusion_b[static_cast<size_t>(y) * k + pb];
    correct_a += pa == y;
    correct_b += pb == y;
    agree += pa == pb;
  }
  const double n = static_cast<double>(std::max<int64_t>(t.n, 1));
  t.acc_a = correct_a / n;
  t.acc_b = correct_b / n;
  t.agreement = agree / n;
  t.stored_acc_a = s.trial.models[ia].test_acc;
  t.stored_acc_b = s.trial.models[ib].test_acc;
  for (int c = 0; c < k; ++c) {
    const double m = static_cast<double>(per_class[c]);
    const size_t d = static_cast<size_t>(c) * k + c;
    t.class_acc_a.push_back(m > 0 ? t.confusion_a[d] / m : NAN);
    t.class_acc_b.push_back(m > 0 ? t.confusion_b[d] / m : NAN);
  }
  const double gap = std::fabs(t.acc_a - t.acc_b);
  TierVerdict& v = r->tier3;
  v.detail = "accuracy " + Num(t.acc_a) + " vs " + Num(t.acc_b) +
             " (|difference| " + Num(gap) + "), predictions agree on " +
             Num(100 * t.agreement) + "% of " + std::to_string(t.n) +
             " test images";
  if (agree == t.n) {
    v.verdict = "identical";
  } else {
    v.verdict = gap <= o.acc_tol ? "close" : "differ";
  }
  if (t.acc_a != t.stored_acc_a || t.acc_b != t.stored_acc_b) {
    v.detail += "; recomputed accuracies differ from the stored " +
                Num(t.stored_acc_a) + " / " + Num(t.stored_acc_b) +
                " (different build or data?)";
  }
  return Status::OK();
}

}  // namespace

Result<CompareReport> ComparePair(const Dataset& ds, int64_t trial_id,
                                  const CompareOptions& o) {
  XW_RETURN_IF_ERROR(CheckOptions(o));
  XW_ASSIGN_OR_RETURN(TrialSetup s,
                      LoadTrialSetup(ds, trial_id, /*train_data=*/false));
  XW_ASSIGN_OR_RETURN(auto pair, PickPair(s.trial, o.profile_a, o.profile_b, "compare"));
  const auto [ia, ib] = pair;
  const ThreadScope threads(o.threads > 0 ? o.threads : HardwareThreads());
  CompareReport r;
  r.trial_id = trial_id;
  r.arch = s.trial.arch;
  r.profile_a = s.trial.models[ia].profile;
  r.profile_b = s.trial.models[ib].profile;
  r.options = o;
  NamedTensors wa, wb;
  XW_ASSIGN_OR_RETURN(auto ma, LoadStoredModel(ds, s, ia, &wa));
  XW_ASSIGN_OR_RETURN(auto mb, LoadStoredModel(ds, s, ib, &wb));
  XW_RETURN_IF_ERROR(Tier1(wa, wb, o, &r));
  XW_RETURN_IF_ERROR(Tier2(*ma, *mb, s, ia, ib, o, &r));
  XW_RETURN_IF_ERROR(Tier3(*ma, *mb, s, ia, ib, o, &r));
  return r;
}

}  // namespace xw
