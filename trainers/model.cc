#include "xwires/trainers/model.h"

#include <algorithm>
#include <map>
#include <utility>

namespace xw {

Model::Model(std::string arch, ArchFamily family, Shape input_shape, int num_classes,
             ModulePtr root)
    : arch_(std::move(arch)), family_(family), input_shape_(std::move(input_shape)),
      num_classes_(num_classes), root_(std::move(root)) {
  root_->Register("", &state_);
  int last_linear = -1;
  for (size_t i = 0; i < state_.size(); ++i) {
    StateEntry& e = state_[i];
    e.info.family = family_;
    if (e.info.kind == ParamKind::kLinearWeight) last_linear = static_cast<int>(i);
    if (e.grad != nullptr) {
      params_.push_back(e.value);
      grads_.push_back(e.grad);
    }
  }
  // The head is the last Linear: its weight and (when present) bias.
  if (last_linear >= 0) {
    state_[last_linear].info.is_classifier_head = true;
    if (last_linear + 1 < static_cast<int>(state_.size()) &&
        state_[last_linear + 1].info.kind == ParamKind::kLinearBias) {
      state_[last_linear + 1].info.is_classifier_head = true;
    }
  }
}

int64_t Model::ParameterCount() const {
  int64_t n = 0;
  for (const Tensor* p : params_) n += p->size();
  return n;
}

Status Model::Initialize(const Profile& profile, uint64_t seed) {
  for (StateEntry& e : state_) XW_RETURN_IF_ERROR(InitParameter(e.info, profile, seed, e.value));
  return Status::OK();
}

NamedTensors Model::ExportState() const {
  NamedTensors out;
  out.reserve(state_.size());
  for (const StateEntry& e : state_) out.push_back({e.info.name, *e.value, e.is_int64});
  return out;
}

Status Model::LoadState(const NamedTensors& tensors, const std::string& source) {
  std::map<std::string, const NamedTensor*> by_name;
  for (const NamedTensor& t : tensors) by_name[t.name] = &t;
  for (const StateEntry& e : state_) {
    auto it = by_name.find(e.info.name);
    if (it == by_name.end()) {
      return Status::InvalidArgument(source + ": missing tensor '" + e.info.name + "' (" +
                                     arch_ + " expects " + std::to_string(state_.size()) +
                                     " tensors)");
    }
    if (it->second->value.shape() != e.value->shape()) {
      return Status::InvalidArgument(source + ": tensor '" + e.info.name + "' has shape " +
                                     ShapeToString(it->second->value.shape()) + ", " + arch_ +
                                     " expects " + ShapeToString(e.value->shape()));
    }
  }
  if (by_name.size() != state_.size() || tensors.size() != state_.size()) {
    for (const NamedTensor& t : tensors) {
      auto match = std::find_if(state_.begin(), state_.end(),
                                [&](const StateEntry& e) { return e.info.name == t.name; });
      if (match == state_.end()) {
        return Status::InvalidArgument(source + ": unexpected tensor '" + t.name + "' for " +
                                       arch_);
      }
    }
    return Status::InvalidArgument(source + ": duplicate tensor names");
  }
  for (StateEntry& e : state_) *e.value = by_name[e.info.name]->value;
  return Status::OK();
}

std::string Model::WeightsSha256() const { return xw::WeightsSha256(ExportState()); }

Result<const Tensor*> Model::Forward(const Tensor& x, const RunContext& ctx) {
  if (x.rank() != 4 || x.dim(0) < 1 || x.dim(1) != input_shape_[0] ||
      x.dim(2) != input_shape_[1] || x.dim(3) != input_shape_[2]) {
    return Status::InvalidArgument(arch_ + " expects input [N, " +
                                   std::to_string(input_shape_[0]) + ", " +
                                   std::to_string(input_shape_[1]) + ", " +
                                   std::to_string(input_shape_[2]) + "] with N >= 1, got " +
                                   ShapeToString(x.shape()));
  }
  return root_->Forward(x, ctx);
}

Status Model::Backward(Tensor& dlogits, const RunContext& ctx) {
  auto r = root_->Backward(dlogits, ctx, /*need_dx=*/false);
  return r.ok() ? Status::OK() : r.status();
}

}  // namespace xw
