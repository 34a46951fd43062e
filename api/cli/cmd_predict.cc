// `xwires predict`: logits of a trained model for a batch of images.
//   in : X.h5 with dataset "x", float [N, C, H, W]
//   out: Y.h5 with dataset "logits", float32 [N, classes] (written atomically)
// The weights file's attributes (written by `xwires train`) supply width,
// depth and class count unless given on the command line; weights without
// them (e.g. exported from torch with h5py) need --width/--depth when not 1/0,
// and the class count is read from the classifier's weight.
#include <cstdio>
#include <map>
#include <memory>
#include <string>

#include "command.h"
#include "xwires/core/parallel.h"
#include "xwires/dataset/store/tensor_file.h"
#include "xwires/trainers/architectures.h"
#include "xwires/trainers/profile.h"
#include "xwires/trainers/trainer.h"

namespace xw::cli {
namespace {

struct PredictArgs {
  std::string arch, weights, profile = "torch", input, output;
  double width = 0;  // 0: from the weights file, else 1
  int depth = -1;    // -1: from the weights file, else 0
  int64_t batch_size = 256;
  int threads = 0;
};

double AttrDouble(const std::map<std::string, std::string>& attrs, const std::string& key,
                  double fallback) {
  auto it = attrs.find(key);
  return it == attrs.end() ? fallback : std::strtod(it->second.c_str(), nullptr);
}

// The number of classes the weights were trained for: the first dimension of
// the classifier head's weight (found by building the architecture once).
int64_t ClassCount(const std::string& arch, const InputSpec& in, const ArchOptions& o,
                   const NamedTensors& weights) {
  InputSpec probe = in;
  probe.num_classes = 1;
  auto model = Unwrap(BuildModel(arch, probe, o));
  for (const auto& e : model->state()) {
    if (!e.info.is_classifier_head || e.info.kind != ParamKind::kLinearWeight) continue;
    for (const auto& t : weights) {
      if (t.name == e.info.name && t.value.rank() == 2) return t.value.dim(0);
    }
    Check(Status::InvalidArgument("weights have no 2-D tensor '" + e.info.name + "' (the " +
                                  arch + " classifier)"));
  }
  return 0;
}

void RunPredict(const PredictArgs& a) {
  // Inputs first; nothing is written unless all of them are valid.
  const Profile profile = Unwrap(LoadProfile(a.profile));
  const NamedTensors weights = Unwrap(ReadTensorFile(a.weights));
  const auto attrs = Unwrap(ReadTensorFileAttrs(a.weights));
  auto it = attrs.find("arch");
  if (it != attrs.end() && it->second != a.arch) {
    Check(Status::InvalidArgument(a.weights + ": weights are for " + it->second +
                                  ", not --arch " + a.arch));
  }
  const NamedTensors input = Unwrap(ReadTensorFile(a.input));
  const Tensor* x = nullptr;
  for (const auto& t : input) {
    if (t.name == "x") x = &t.value;
  }
  if (x == nullptr) Check(Status::InvalidArgument(a.input + ": no dataset 'x'"));
  if (x->rank() != 4 || x->dim(0) < 1) {
    Check(Status::InvalidArgument(a.input + ": 'x' must be [N, C, H, W] with N >= 1, got " +
                                  ShapeToString(x->shape())));
  }
  if (a.batch_size < 1) Check(Status::InvalidArgument("--batch-size must be >= 1"));

  ArchOptions o;
  o.width = a.width > 0 ? a.width : AttrDouble(attrs, "width", 1.0);
  o.depth = a.depth >= 0 ? a.depth : static_cast<int>(AttrDouble(attrs, "depth", 0));
  o.dropout = AttrDouble(attrs, "dropout", 0.5);
  InputSpec in{x->dim(1), x->dim(2), x->dim(3), 1};
  in.num_classes = static_cast<int>(ClassCount(a.arch, in, o, weights));
  auto model = Unwrap(BuildModel(a.arch, in, o));
  Check(model->LoadState(weights, a.weights));

  ThreadScope threads(a.threads);
  Tensor logits = Unwrap(Predict(*model, profile, *x, a.batch_size));
  Check(WriteTensorFile(a.output, {{"logits", std::move(logits), false}},
                        {{"arch", a.arch}, {"profile", profile.name}, {"weights", a.weights}}));
  std::printf("wrote logits [%lld, %d] to %s\n", static_cast<long long>(x->dim(0)),
              in.num_classes, a.output.c_str());
}

void RegisterPredict(CLI::App& app) {
  auto args = std::make_shared<PredictArgs>();
  auto* cmd = app.add_subcommand("predict", "Logits of trained weights for images in an HDF5 file");
  // A repeated option takes its last value (so scripts can override).
  cmd->option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  cmd->add_option("--arch", args->arch, "Architecture of the weights")->required();
  cmd->add_option("--weights", args->weights, "Weights file (HDF5, state_dict names)")->required();
  cmd->add_option("--profile", args->profile, "Numerics profile to run under")
      ->capture_default_str();
  cmd->add_option("--input", args->input, "HDF5 file with dataset 'x' [N, C, H, W]")->required();
  cmd->add_option("--output", args->output, "HDF5 file to write dataset 'logits' to")->required();
  cmd->add_option("--width", args->width, "Width multiplier (default: from the weights file, 1)");
  cmd->add_option("--depth", args->depth, "Depth option (default: from the weights file, 0)");
  cmd->add_option("--batch-size", args->batch_size, "Images per forward pass")
      ->capture_default_str();
  cmd->add_option("--threads", args->threads, "Threads (0: all cores)")->capture_default_str();
  cmd->callback([args] { RunPredict(*args); });
}
XW_CLI_COMMAND(11, RegisterPredict);

}  // namespace
}  // namespace xw::cli
