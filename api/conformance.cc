// RunConformance: one reference run per framework and architecture, then
// xwires' training on each SIMD target, compared tensor by tensor per step.
#include "xwires/api/conformance.h"

#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "conformance_exchange.h"
#include "conformance_internal.h"
#include "xwires/core/build_info.h"
#include "xwires/core/simd_target.h"
#include "xwires/trainers/architectures.h"
#include "xwires/trainers/trainer.h"

namespace xw {

namespace fs = std::filesystem;
using namespace conformance;  // NOLINT: this file is its implementation

namespace {

constexpr int64_t kBatch = 50;
constexpr double kLr = 1e-3, kBeta1 = 0.9, kBeta2 = 0.999, kEps = 1e-2;
constexpr double kUnit = 1.0 / (1 << 23);  // 2^-23, one ulp of 1.0f

// Weight layers on the longest path from the input to the logits.
int LogitLayers(const std::string& arch) {
  if (arch == "mlp") return 3;
  if (arch == "simple_cnn") return 4;
  if (arch == "vgg11") return 11;
  return 20;  // resnet20: 19 convolutions and fc
}

// Removes a scratch directory it created, when it goes out of scope.
struct ScratchDir {
  std::string path;
  bool owned = false;
  ~ScratchDir() {
    std::error_code ec;
    if (owned) fs::remove_all(path, ec);
  }
};

// Restores the SIMD target dispatched when it was made.
struct TargetGuard {
  std::string saved = KernelTarget();
  ~TargetGuard() { (void)SetKernelTarget(saved); }
};

ImageDataset Prefix(const ImageDataset& d, int64_t n) {
  n = std::min(n, d.size());
  ImageDataset out;
  Shape shape = d.images.shape();
  shape[0] = n;
  out.images = Tensor(shape);
  std::memcpy(out.images.data(), d.images.data(), sizeof(float) * out.images.size());
  out.labels.assign(d.labels.begin(), d.labels.begin() + n);
  out.num_classes = d.num_classes;
  return out;
}

Tensor Labels(const ImageDataset& d) {
  Tensor t({d.size()});
  for (int64_t i = 0; i < d.size(); ++i) t[i] = static_cast<float>(d.labels[i]);
  return t;
}

// "<step>/<name>" tensors of a runner's steps.xwt, by step.
std::map<int64_t, NamedTensors> SplitSteps(NamedTensors all) {
  std::map<int64_t, NamedTensors> out;
  for (NamedTensor& t : all) {
    const size_t slash = t.name.find('/');
    if (slash == std::string::npos) continue;
    const int64_t step = std::strtoll(t.name.c_str(), nullptr, 10);
    out[step].push_back({t.name.substr(slash + 1), std::move(t.value), t.is_int64});
  }
  return out;
}

// The worst tensor of `ours` against `ref` (StateError); every tensor of
// `ref` must be in `ours` and vice versa, and an int64 buffer
// (num_batches_tracked) must match exactly. TF.js has no batch counter.
Status CompareState(const NamedTensors& ours, const NamedTensors& ref, ConformanceRow* row) {
  std::map<std::string, const NamedTensor*> by_name;
  for (const NamedTensor& t : ref) by_name[t.name] = &t;
  row->error = StateError(ours, ref, &row->worst);
  for (const NamedTensor& t : ours) {
    auto it = by_name.find(t.name);
    if (it == by_name.end()) {
      if (t.is_int64 && row->framework == "tfjs") continue;
      return Status::Corruption(row->framework + " runner wrote no tensor '" + t.name +
                                "' for step " + std::to_string(row->step));
    }
    if (t.is_int64 && !t.value.BitwiseEqual(it->second->value)) {
      row->error = INFINITY;
      row->worst = t.name;
    }
    by_name.erase(it);
  }
  if (!by_name.empty()) {
    return Status::Corruption(row->framework + " runner wrote a tensor xwires does not have: '" +
                              by_name.begin()->first + "'");
  }
  return Status::OK();
}

struct ArchCase {
  std::string framework, arch;
  const Profile* profile = nullptr;
  ArchOptions arch_options;
  DataSplits data;  // the steps' training images, the test images
  NamedTensors init;
  std::map<int64_t, NamedTensors> ref_steps;
  NamedTensors ref_logits;  // "init", "final" (pytorch)
  std::string out_dir;      // the runner's output; xwires' steps go there too
  std::vector<double> reference_error;  // per step (pytorch: float32 vs float64)
  std::map<int64_t, SplitState> exact_steps;  // pytorch: the float64 run, by step
  std::vector<double> ulp_growth;       // per step, measured on the first target
  ReluCalls relu;  // the framework's ReLU inputs per step (relu.xwt)
};

ConformanceRow MakeRow(const ArchCase& c, const std::string& kind, int64_t step) {
  ConformanceRow row;
  row.framework = c.framework;
  row.arch = c.arch;
  row.target = KernelTargetVariant();
  row.kind = kind;
  row.step = step;
  return row;
}

Status WriteRunnerInputs(const ArchCase& c, const ConformanceOptions& o, const std::string& dir) {
  fs::create_directories(dir);
  const Shape& s = c.data.train.images.shape();
  nlohmann::json config = {
      {"arch", c.arch},   {"width", c.arch_options.width}, {"in_shape", {s[1], s[2], s[3]}},
      {"num_classes", 10}, {"steps", o.steps},               {"batch", kBatch},
      {"lr", kLr},         {"beta1", kBeta1},                {"beta2", kBeta2},
      {"eps", kEps}};
  std::ofstream(dir + "/config.json") << config.dump(2) << "\n";
  XW_RETURN_IF_ERROR(WriteExchange(dir + "/init.xwt", c.init));
  return WriteExchange(dir + "/data.xwt", {{"x_train", c.data.train.images, false},
                                           {"y_train", Labels(c.data.train), true},
                                           {"x_test", c.data.test.images, false}});
}

Status RunReference(ArchCase* c, const ConformanceOptions& o, const std::string& work) {
  const std::string in = work + "/" + c->framework + "-" + c->arch + "/in";
  const std::string out = work + "/" + c->framework + "-" + c->arch + "/out";
  c->out_dir = out;
  XW_RETURN_IF_ERROR(WriteRunnerInputs(*c, o, in));
  fs::create_directories(out);
  const std::string log = out + "/runner.log";
  const auto argv = RunnerCommand(c->framework, o, in, out);
  XW_ASSIGN_OR_RETURN(int rc, RunProcess(argv, log));
  if (rc != 0) {
    return Status::Internal(c->framework + " runner " + argv[1] + " failed on " + c->arch +
                            " (exit " + std::to_string(rc) + "): " + LogTail(log));
  }
  XW_ASSIGN_OR_RETURN(NamedTensors steps, ReadExchange(out + "/steps.xwt"));
  c->ref_steps = SplitSteps(std::move(steps));
  for (int64_t k = 1; k <= o.steps; ++k) {
    if (!c->ref_steps.count(k)) {
      return Status::Corruption(out + "/steps.xwt: no tensors for step " + std::to_string(k));
    }
  }
  XW_ASSIGN_OR_RETURN(c->relu, ReadReluCalls(out + "/relu.xwt", o.steps));
  if (c->framework == "pytorch") {
    XW_ASSIGN_OR_RETURN(NamedTensors exact, ReadExchange(out + "/float64.xwt"));
    for (auto& [step, tensors] : SplitSteps(std::move(exact))) {
      SplitState& s = c->exact_steps[step];
      for (NamedTensor& t : tensors) {
        const bool lo = t.name.size() > 3 && t.name.compare(t.name.size() - 3, 3, "@lo") == 0;
        if (lo) t.name.resize(t.name.size() - 3);
        (lo ? s.lo : s.hi).push_back(std::move(t));
      }
    }
    XW_ASSIGN_OR_RETURN(c->ref_logits, ReadExchange(out + "/logits.xwt"));
    for (const NamedTensor& t : c->ref_logits) {
      if (t.name != "reference_error") continue;
      for (int64_t i = 0; i < t.value.size(); ++i) c->reference_error.push_back(t.value[i]);
    }
    if (static_cast<int64_t>(c->reference_error.size()) != o.steps) {
      return Status::Corruption(out + "/logits.xwt: 'reference_error' must hold one value "
                                "per step");
    }
  }
  return Status::OK();
}

// xwires' steps on the current target, one row per step. The first target
// also measures the one-ulp growth (c->ulp_growth): it describes the
// problem's conditioning, and the profiles the harness checks give the same
// bits on every target.
Status TrainAndCompare(ArchCase* c, const ConformanceOptions& o,
                       std::vector<ConformanceRow>* rows) {
  TrainOptions t;
  t.arch = c->arch;
  t.arch_options = c->arch_options;
  t.epochs = 1;
  t.batch_size = kBatch;
  t.adam.lr = kLr;
  t.adam.beta1 = kBeta1;
  t.adam.beta2 = kBeta2;
  t.adam.eps = kEps;
  t.threads = o.threads;
  t.init_weights = &c->init;
  t.init_weights_source = "conformance initial weights";
  std::vector<NamedTensors> states;  // after each step
  // The framework's ReLU decisions within rounding of zero (conformance.h).
  ReluShadow shadow(&c->relu);
  t.relu_shadow = shadow.Hook();
  t.on_step = [&](int64_t step, const Model& model) -> Status {
    XW_RETURN_IF_ERROR(shadow.EndStep(step));
    states.push_back(model.ExportState());
    return Status::OK();
  };
  XW_RETURN_IF_ERROR(TrainProfile(*c->profile, c->data, t).status());
  if (c->ulp_growth.empty()) {
    XW_ASSIGN_OR_RETURN(c->ulp_growth,
                        UlpPerturbationGrowth(*c->profile, t, c->data, states,
                                              kConformancePerturbedRuns, c->relu));
  }
  NamedTensors mine;  // every step's state, kept next to the runner's output
  for (size_t i = 0; i < states.size(); ++i) {
    const int64_t step = static_cast<int64_t>(i) + 1;
    ConformanceRow row = MakeRow(*c, "weights", step);
    row.reference_error = c->reference_error.empty() ? 0 : c->reference_error[i];
    row.ulp_growth = c->ulp_growth[i];
    const ShadowCount shadowed = shadow.count(step);
    row.shadowed = shadowed.shadowed;
    row.unaligned = shadowed.unaligned;
    row.shadow_max_rel = shadowed.max_rel;
    row.bound = ConformanceWeightBound(step) + 2 * std::max(row.reference_error, row.ulp_growth);
    XW_RETURN_IF_ERROR(CompareState(states[i], c->ref_steps.at(step), &row));
    if (auto it = c->exact_steps.find(step); it != c->exact_steps.end()) {
      std::string unused;
      row.exact_error = StateErrorF64(states[i], it->second, &unused);
    }
    rows->push_back(row);
    for (NamedTensor& s : states[i]) {
      mine.push_back({std::to_string(step) + "/" + s.name, std::move(s.value), s.is_int64});
    }
  }
  return WriteExchange(c->out_dir + "/xwires-" + KernelTarget() + ".xwt", mine);
}

// Logits of the model loaded from the initial weights and from the
// framework's final weights, against the framework's own (pytorch).
Status CompareLogits(const ArchCase& c, const ConformanceOptions& o,
                     std::vector<ConformanceRow>* rows) {
  const Shape& s = c.data.test.images.shape();
  XW_ASSIGN_OR_RETURN(auto model, BuildModel(c.arch, InputSpec{s[1], s[2], s[3], 10},
                                             c.arch_options));
  const NamedTensors* weights[] = {&c.init, &c.ref_steps.at(o.steps)};
  const char* names[] = {"init", "final"};
  for (int i = 0; i < 2; ++i) {
    XW_RETURN_IF_ERROR(model->LoadState(*weights[i], names[i]));
    XW_ASSIGN_OR_RETURN(Tensor logits, Predict(*model, *c.profile, c.data.test.images));
    const NamedTensor* ref = nullptr;
    for (const NamedTensor& t : c.ref_logits) ref = t.name == names[i] ? &t : ref;
    if (ref == nullptr) return Status::Corruption("pytorch runner wrote no logits '" +
                                                  std::string(names[i]) + "'");
    ConformanceRow row = MakeRow(c, "logits", i == 0 ? 0 : o.steps);
    row.bound = kConformanceLogitUlpsPerLayer * LogitLayers(c.arch) * kUnit;
    row.error = RelativeError(logits, ref->value);
    row.worst = std::string("logits/") + names[i];
    rows->push_back(row);
  }
  return Status::OK();
}

Result<std::vector<std::string>> ResolveTargets(const std::vector<std::string>& targets) {
  if (targets.empty()) return std::vector<std::string>{KernelTarget()};
  if (targets.size() == 1 && targets[0] == "all") return KernelTargets();
  for (const std::string& t : targets) {
    TargetGuard guard;
    XW_RETURN_IF_ERROR(SetKernelTarget(t));
  }
  return targets;
}

Status CheckOptions(ConformanceOptions* o) {
  if (o->steps < 1 || o->steps > 30) {
    return Status::InvalidArgument("steps must be in 1..30, got " + std::to_string(o->steps));
  }
  if (o->source_dir.empty()) o->source_dir = XWIRES_CONFORMANCE_SOURCE_DIR;
  if (!fs::is_directory(o->source_dir + "/tests/conformance")) {
    return Status::NotFound(o->source_dir + "/tests/conformance: not found (pass the xwires "
                            "source tree with --source-dir)");
  }
  if (o->frameworks.empty()) o->frameworks = {"tfjs", "pytorch"};
  for (const std::string& f : o->frameworks) {
    bool known = false;
    for (const Framework& fw : Frameworks()) known |= fw.name == f;
    if (!known) return Status::InvalidArgument("unknown framework '" + f +
                                               "' (expected tfjs or pytorch)");
  }
  for (const std::string& a : o->archs) {
    bool any = false;
    for (const Framework& fw : Frameworks()) {
      const bool wanted = std::count(o->frameworks.begin(), o->frameworks.end(), fw.name) > 0;
      any |= wanted && std::count(fw.archs.begin(), fw.archs.end(), a) > 0;
    }
    if (!any) return Status::InvalidArgument("architecture '" + a + "' is not checked against " +
                                             "the chosen frameworks (tfjs: simple_cnn, resnet20, "
                                             "vgg11; pytorch: mlp, simple_cnn, resnet20, vgg11)");
  }
  return Status::OK();
}

std::string CpuDescription() {
  const auto fp = nlohmann::json::parse(MachineFingerprintJson(0), nullptr, false);
  std::string cpu = fp.is_object() ? fp.value("cpu_model", "unknown CPU") : "unknown CPU";
  return cpu + ", build isa " + GetBuildInfo().isa + ", kernels hwy:" + KernelTargetVariant();
}

}  // namespace

double ConformanceWeightBound(int64_t step) { return kConformanceUlpsPerStep * step * kUnit; }

bool ConformanceReport::passed() const {
  return std::all_of(rows.begin(), rows.end(), [](const ConformanceRow& r) { return r.pass(); });
}

Result<Profile> TfjsProfile() {
  XW_ASSIGN_OR_RETURN(Profile p, LoadProfile("tf"));
  p.name = "tfjs";
  p.adam.variant = AdamVariant::kTorch;  // eps + sqrt(v_hat): tfjs-core adam_optimizer.js
  p.adam.bias_correction_double = false;  // accBeta1/accBeta2 are float32 tensors
  p.adam.fma = false;                     // one kernel per op, as TF
  p.bn.unbiased_running_var = false;      // tfjs-layers normalization.js: tf.moments
  p.json = ProfileToJson(p);
  return p;
}

Result<ConformanceReport> RunConformance(
    const ConformanceOptions& options, const std::function<void(const ConformanceRow&)>& on_row,
    const std::function<void(const ConformanceSkip&)>& on_skip) {
  ConformanceOptions o = options;
  XW_RETURN_IF_ERROR(CheckOptions(&o));
  XW_ASSIGN_OR_RETURN(const std::vector<std::string> targets, ResolveTargets(o.targets));
  ScratchDir work{o.work_dir};
  if (work.path.empty()) {
    std::string tmpl = (fs::temp_directory_path() / "xwires-conformance-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) return Status::IOError("cannot create " + tmpl);
    work = ScratchDir{tmpl, true};
  }
  fs::create_directories(work.path);
  TargetGuard guard;
  ConformanceReport report;
  report.cpu = CpuDescription();
  std::map<int, DataSplits> digits;  // by image size
  for (const Framework& fw : Frameworks()) {
    if (!std::count(o.frameworks.begin(), o.frameworks.end(), fw.name)) continue;
    const std::string missing = MissingFramework(fw.name, o, work.path);
    if (!missing.empty()) {
      report.skipped.push_back({fw.name, missing});
      if (on_skip) on_skip(report.skipped.back());
      continue;
    }
    XW_ASSIGN_OR_RETURN(const Profile profile,
                        fw.name == "tfjs" ? TfjsProfile() : LoadProfile("torch"));
    for (const std::string& arch : fw.archs) {
      if (!o.archs.empty() && !std::count(o.archs.begin(), o.archs.end(), arch)) continue;
      const int size = arch == "vgg11" ? 32 : 28;  // vgg's five pools need 32x32
      if (!digits.count(size)) {
        XW_ASSIGN_OR_RETURN(digits[size], DigitsData(o, work.path, size));
      }
      ArchCase c;
      c.framework = fw.name;
      c.arch = arch;
      c.profile = &profile;
      c.arch_options = ArchOptions{ArchWidth(arch), 0, 0.0};
      c.data.name = "digits";
      c.data.train = Prefix(digits[size].train, o.steps * kBatch);
      c.data.test = digits[size].test;
      const Shape& s = c.data.train.images.shape();
      XW_ASSIGN_OR_RETURN(auto model,
                          BuildModel(arch, InputSpec{s[1], s[2], s[3], 10}, c.arch_options));
      XW_RETURN_IF_ERROR(model->Initialize(profile, 0));
      c.init = model->ExportState();
      XW_RETURN_IF_ERROR(RunReference(&c, o, work.path));
      for (const std::string& target : targets) {
        XW_RETURN_IF_ERROR(SetKernelTarget(target));
        std::vector<ConformanceRow> rows;
        XW_RETURN_IF_ERROR(TrainAndCompare(&c, o, &rows));
        if (fw.name == "pytorch") XW_RETURN_IF_ERROR(CompareLogits(c, o, &rows));
        for (const ConformanceRow& r : rows) {
          report.rows.push_back(r);
          if (on_row) on_row(r);
        }
      }
    }
  }
  return report;
}

std::string ConformanceTableHeader() {
  char buf[256];
  std::snprintf(buf, sizeof(buf),
                "%-9s %-11s %-11s %-8s %5s %11s %11s %11s %11s %11s %8s %9s %9s  %-6s %s",
                "framework", "arch", "target", "check", "step", "worst_rel", "ref_f64",
                "xw_f64", "ulp_growth", "bound", "shadowed", "shadow_z", "unaligned",
                "result", "worst tensor");
  return buf;
}

std::string FormatConformanceRow(const ConformanceRow& r) {
  char buf[352];
  char ref[16] = "-", exact[16] = "-", growth[16] = "-";
  char shadowed[24] = "-", shadow_z[16] = "-", unaligned[24] = "-";
  if (r.framework == "pytorch" && r.kind == "weights") {
    std::snprintf(ref, sizeof(ref), "%.3e", r.reference_error);
  }
  if (r.exact_error >= 0) std::snprintf(exact, sizeof(exact), "%.3e", r.exact_error);
  if (r.kind == "weights") {
    std::snprintf(growth, sizeof(growth), "%.3e", r.ulp_growth);
    std::snprintf(shadowed, sizeof(shadowed), "%lld", static_cast<long long>(r.shadowed));
    std::snprintf(shadow_z, sizeof(shadow_z), "%.2e", r.shadow_max_rel);
    std::snprintf(unaligned, sizeof(unaligned), "%lld", static_cast<long long>(r.unaligned));
  }
  std::snprintf(buf, sizeof(buf),
                "%-9s %-11s %-11s %-8s %5lld %11.3e %11s %11s %11s %11.3e %8s %9s %9s  %-6s %s",
                r.framework.c_str(), r.arch.c_str(), r.target.c_str(), r.kind.c_str(),
                static_cast<long long>(r.step), r.error, ref, exact, growth, r.bound, shadowed,
                shadow_z, unaligned, r.pass() ? "pass" : "FAIL", r.worst.c_str());
  return buf;
}

}  // namespace xw
