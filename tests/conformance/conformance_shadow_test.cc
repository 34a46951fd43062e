// ReLU shadowing (api/conformance_shadow.h): the alignment of one call, the
// hook's checks of call order and shapes, and the trainer's seam
// (TrainOptions::relu_shadow) at every site that writes a ReLU's output.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>

#include "conformance_shadow.h"
#include "xwires/api/conformance.h"
#include "xwires/core/data.h"
#include "xwires/trainers/trainer.h"

namespace xw {
namespace {

using conformance::ReluCalls;
using conformance::ReluShadow;
using conformance::ShadowCount;
using conformance::ShadowReluOutput;

// max |z| = 2, so the tolerance is 2 * 2^-16 = 3.05e-5.
TEST(ConformanceShadowTest, AlignsFlipsWithinRoundingOfZeroOnly) {
  const float z_in[] = {1e-5f, -1e-5f, 1e-3f, -1e-3f, 2.0f, -0.5f, NAN, 2e-5f};
  const float y_in[] = {0.0f, 2e-6f, 0.0f, 5e-4f, 1.9999f, 0.0f, 0.0f, 3e-5f};
  Tensor z({8}), y({8});
  for (int i = 0; i < 8; ++i) z[i] = z_in[i], y[i] = y_in[i];
  const ShadowCount c = ShadowReluOutput(z, &y);
  EXPECT_EQ(c.shadowed, 2);
  EXPECT_EQ(c.unaligned, 2);
  EXPECT_DOUBLE_EQ(c.max_rel, static_cast<double>(1e-5f) / 2);
  EXPECT_EQ(y[0], 1e-5f);  // the framework passes it: its input
  EXPECT_EQ(y[1], 0.0f);   // the framework drops it
  EXPECT_EQ(y[2], 0.0f);   // beyond the tolerance: a difference of meaning, kept
  EXPECT_EQ(y[3], 5e-4f);
  EXPECT_EQ(y[4], 1.9999f);  // same decisions: untouched
  EXPECT_EQ(y[5], 0.0f);
  EXPECT_EQ(y[6], 0.0f);  // NaN on one side: untouched
  EXPECT_EQ(y[7], 3e-5f);
}

TEST(ConformanceShadowTest, ShapeAndCountMismatchesNameTheCall) {
  ReluCalls calls;
  calls[1] = {Tensor({2, 3}), Tensor({4})};
  ReluShadow shadow(&calls);
  const ReluShadowHook hook = shadow.Hook();
  RunContext ctx;
  ctx.training = true;
  ctx.step = 1;
  Tensor a({2, 3}), b({3, 2});
  ASSERT_TRUE(hook(ctx, &a).ok());
  Status s = hook(ctx, &b);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("step 1, ReLU call 1"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("[3, 2]"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("[4]"), std::string::npos) << s.message();
  s = shadow.EndStep(1);  // two calls made (the second failed), two recorded
  EXPECT_TRUE(s.ok()) << s.message();
  Tensor c({4});
  s = hook(ctx, &c);  // a third call
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("only 2 ReLU calls"), std::string::npos) << s.message();
  s = shadow.EndStep(1);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("xwires made 3 ReLU calls, the framework 2"), std::string::npos)
      << s.message();
  ctx.step = 2;
  EXPECT_FALSE(hook(ctx, &c).ok());  // a step the framework did not run
}

Result<DataSplits> Synthetic() { return LoadDataSpec("synthetic", DataOptions{20, 8, 0}); }

// Two steps of batch 10 of `arch` at `width` on one thread.
TrainOptions TwoSteps(const std::string& arch, double width) {
  TrainOptions o;
  o.arch = arch;
  o.arch_options.width = width;
  o.batch_size = 10;
  o.threads = 1;
  return o;
}

// The seam reaches every ReLU of a training pass, in order, and never an
// evaluation: resnet20 has 19 (the stem's and the blocks' fused
// BatchNorm -> ReLU, the blocks' fused BatchNorm + add -> ReLU).
TEST(ConformanceShadowTest, TrainerCallsTheHookAtEveryReluOfTrainingPasses) {
  auto data = Synthetic();
  ASSERT_TRUE(data.ok());
  auto profile = LoadProfile("torch");
  ASSERT_TRUE(profile.ok());
  TrainOptions o = TwoSteps("resnet20", 0.25);
  std::map<int64_t, int> calls;
  bool eval_call = false;
  o.relu_shadow = [&](const RunContext& ctx, Tensor* y) {
    eval_call |= !ctx.training;
    ++calls[ctx.step];
    return Status::OK();
  };
  auto r = TrainProfile(*profile, *data, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(calls, (std::map<int64_t, int>{{1, 19}, {2, 19}}));
  EXPECT_FALSE(eval_call);
  o.relu_shadow = [](const RunContext& ctx, Tensor*) {
    return ctx.step == 2 ? Status::Internal("no") : Status::OK();
  };
  EXPECT_EQ(TrainProfile(*profile, *data, o).status().message(), "no");
}

// What the hook writes is what the backward pass masks with: every ReLU
// output set to zero leaves no gradient to the layers before the last.
TEST(ConformanceShadowTest, BackwardMasksWithTheHooksOutput) {
  auto data = Synthetic();
  ASSERT_TRUE(data.ok());
  auto profile = LoadProfile("torch");
  ASSERT_TRUE(profile.ok());
  TrainOptions o = TwoSteps("mlp", 1.0 / 16);
  NamedTensors init;
  o.after_init = [&](Model& m) {
    init = m.ExportState();
    return Status::OK();
  };
  o.relu_shadow = [](const RunContext&, Tensor* y) {
    for (int64_t i = 0; i < y->size(); ++i) (*y)[i] = 0.0f;
    return Status::OK();
  };
  auto r = TrainProfile(*profile, *data, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  int same = 0;
  for (size_t i = 0; i < init.size(); ++i) {
    const bool kept = init[i].value.BitwiseEqual(r->record.weights[i].value);
    EXPECT_EQ(kept, init[i].name != "fc3.bias") << init[i].name;
    same += kept;
  }
  EXPECT_EQ(same, static_cast<int>(init.size()) - 1);
}

}  // namespace
}  // namespace xw
