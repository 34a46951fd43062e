// How much the trained problem itself amplifies rounding: xwires against
// itself from initial weights one ulp apart (api/conformance.h,
// kConformancePerturbedRuns).
#include <cmath>

#include "conformance_exchange.h"
#include "conformance_internal.h"
#include "xwires/core/rng.h"

namespace xw::conformance {

NamedTensors PerturbOneUlp(const NamedTensors& init, uint64_t run) {
  const Philox rng(run, StreamId("conformance/ulp"));
  NamedTensors out = init;
  uint64_t index = 0;
  for (NamedTensor& t : out) {
    if (t.is_int64) continue;
    for (int64_t i = 0; i < t.value.size(); ++i) {
      const float v = t.value[i];
      const bool up = (rng.U32(index++) & 1u) != 0;
      // Exact zeros (biases, BN shifts, running means) stay zero: one ulp of
      // zero is a subnormal no implementation's rounding would produce.
      if (v != 0.0f) t.value[i] = std::nextafter(v, up ? INFINITY : -INFINITY);
    }
  }
  return out;
}

Result<std::vector<double>> UlpPerturbationGrowth(const Profile& profile,
                                                  const TrainOptions& options,
                                                  const DataSplits& data,
                                                  const std::vector<NamedTensors>& base,
                                                  int runs, const ReluCalls& relu) {
  std::vector<double> growth(base.size(), 0.0);
  for (int run = 1; run <= runs; ++run) {
    const NamedTensors init = PerturbOneUlp(*options.init_weights, run);
    TrainOptions t = options;
    t.init_weights = &init;
    t.init_weights_source = "conformance initial weights, one ulp apart";
    ReluShadow shadow(&relu);
    t.relu_shadow = shadow.Hook();
    t.on_step = [&](int64_t step, const Model& model) -> Status {
      XW_RETURN_IF_ERROR(shadow.EndStep(step));
      if (step < 1 || step > static_cast<int64_t>(base.size())) {
        return Status::Internal("perturbed run took more steps than the reference run");
      }
      std::string worst;
      const double e = StateError(model.ExportState(), base[step - 1], &worst);
      growth[step - 1] = std::max(growth[step - 1], e);
      return Status::OK();
    };
    XW_RETURN_IF_ERROR(TrainProfile(profile, data, t).status());
  }
  return growth;
}

}  // namespace xw::conformance
