#include "xwires/trainers/capture.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>
#include <typeinfo>

namespace xw {
namespace {

std::string TypeName(const Module& m) {
  const char* mangled = typeid(m).name();
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> demangled(
      abi::__cxa_demangle(mangled, nullptr, nullptr, &status), std::free);
  std::string name = status == 0 && demangled ? demangled.get() : mangled;
  const size_t colon = name.rfind("::");
  return colon == std::string::npos ? name : name.substr(colon + 2);
}

// Mirrors Sequential::Forward (children in order, each reading the previous
// output) but copies every leaf's output before the next module runs, since
// modules documented as in place may overwrite their input.
Result<const Tensor*> Walk(Module& m, const std::string& path, const Tensor& x,
                           const RunContext& ctx,
                           std::vector<Activation>* out) {
  auto* seq = dynamic_cast<Sequential*>(&m);
  if (seq == nullptr) {
    auto r = m.Forward(x, ctx);
    if (!r.ok()) return r.status().WithContext(path);
    out->push_back({path, TypeName(m), **r});
    return *r;
  }
  const Tensor* h = &x;
  for (size_t i = 0; i < seq->size(); ++i) {
    const auto& [name, child] = seq->child(i);
    std::string child_path;
    if (name.empty()) {
      child_path = path + "(" + std::to_string(i) + ")";
    } else {
      child_path = path.empty() ? name : path + "." + name;
    }
    XW_ASSIGN_OR_RETURN(h, Walk(*child, child_path, *h, ctx, out));
  }
  return h;
}

}  // namespace

Result<std::vector<Activation>> ForwardCapture(Model& model,
                                               const Profile& profile,
                                               const Tensor& x) {
  const Shape& in = model.input_shape();
  if (x.rank() != 4 || x.dim(0) < 1 || x.dim(1) != in[0] || x.dim(2) != in[1] ||
      x.dim(3) != in[2]) {
    return Status::InvalidArgument(
        "ForwardCapture: input must be [N>=1, " + std::to_string(in[0]) + ", " +
        std::to_string(in[1]) + ", " + std::to_string(in[2]) + "]");
  }
  const RunContext ctx = RunContext::ForProfile(profile);  // eval mode
  std::vector<Activation> out;
  XW_RETURN_IF_ERROR(Walk(model.root(), "", x, ctx, &out).status());
  return out;
}

}  // namespace xw
