// The conformance harness's own parts (api/conformance.h): the exchange file
// the runners read and write, the error measure, the bound, the TF.js
// profile's difference from `tf`, and the trainer's per-step hook. The
// comparisons with the frameworks themselves are the conformance_* ctest
// entries (tests/conformance/CMakeLists.txt).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "conformance_exchange.h"
#include "conformance_internal.h"
#include "xwires/api/conformance.h"
#include "xwires/core/data.h"
#include "xwires/trainers/trainer.h"

namespace xw {
namespace {

std::string TempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("xw_conf_" + std::to_string(::getpid()) + "_" + name)).string();
}

TEST(ConformanceExchangeTest, RoundTripsFloatAndInt64) {
  Tensor a({2, 3});
  for (int i = 0; i < 6; ++i) a[i] = i * 0.1f - 0.2f;
  a[5] = -0.0f;
  Tensor n({1}, 7.0f);
  const std::string path = TempPath("rt.xwt");
  ASSERT_TRUE(conformance::WriteExchange(path, {{"1/fc.weight", a, false},
                                                {"1/bn.num_batches_tracked", n, true}}).ok());
  auto back = conformance::ReadExchange(path);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_EQ(back->size(), 2u);
  EXPECT_EQ((*back)[0].name, "1/fc.weight");
  EXPECT_TRUE((*back)[0].value.BitwiseEqual(a));
  EXPECT_FALSE((*back)[0].is_int64);
  EXPECT_TRUE((*back)[1].is_int64);
  EXPECT_EQ((*back)[1].value[0], 7.0f);
  std::filesystem::remove(path);
}

TEST(ConformanceExchangeTest, TruncatedAndForeignFilesAreCorruption) {
  const std::string path = TempPath("bad.xwt");
  ASSERT_TRUE(conformance::WriteExchange(path, {{"w", Tensor({4}, 1.0f), false}}).ok());
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 3);
  auto r = conformance::ReadExchange(path);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kCorruption);
  EXPECT_NE(r.status().message().find("truncated"), std::string::npos);
  std::ofstream(path, std::ios::trunc) << "PK\x03\x04 not ours";
  r = conformance::ReadExchange(path);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("XWTENS01"), std::string::npos);
  std::filesystem::remove(path);
  EXPECT_EQ(conformance::ReadExchange(path).status().code(), Status::Code::kNotFound);
}

TEST(ConformanceErrorTest, NormwiseRelativeError) {
  Tensor ref({3}), ours({3});
  ref[0] = 2.0f, ref[1] = -4.0f, ref[2] = 1e-9f;
  ours[0] = 2.0f, ours[1] = -4.0f + 0.5f, ours[2] = 1e-9f + 1e-3f;
  // max |diff| = 0.5 over max |ref| = 4: the tiny element does not dominate.
  EXPECT_DOUBLE_EQ(conformance::RelativeError(ours, ref), 0.125);
  ours[2] = NAN;
  EXPECT_TRUE(std::isinf(conformance::RelativeError(ours, ref)));
  EXPECT_TRUE(std::isinf(conformance::RelativeError(Tensor({2}), ref)));
  EXPECT_DOUBLE_EQ(conformance::RelativeError(Tensor({2}, 3.0f), Tensor({2}, 0.0f)), 3.0);
}

TEST(ConformanceBoundTest, FourUlpsOfOnePerStep) {
  EXPECT_DOUBLE_EQ(ConformanceWeightBound(1), 4.0 / (1 << 23));
  EXPECT_DOUBLE_EQ(ConformanceWeightBound(4), 16.0 / (1 << 23));
  // The AVX-512 drift the harness guards against (3.5e-4 at step 4) is far out.
  EXPECT_LT(ConformanceWeightBound(4), 3.5e-4 / 100);
}

// A tensor's error is measured on its module's scale: a BN shift that
// starts at zero against the module's gamma (1), not against itself.
TEST(ConformanceErrorTest, StateErrorUsesTheModulesScale) {
  NamedTensors ref = {{"bn.weight", Tensor({2}, 1.0f), false},
                      {"bn.bias", Tensor({2}, 1e-3f), false},
                      {"fc.bias", Tensor({2}, 1e-3f), false}};
  NamedTensors ours = ref;
  ours[1].value[0] = 1e-3f + 1e-6f;  // 1e-6 on a module whose largest |x| is 1
  std::string worst;
  EXPECT_NEAR(conformance::StateError(ours, ref, &worst), 1e-6, 1e-9);
  EXPECT_EQ(worst, "bn.bias");
  ours[2].value[1] = 1e-3f + 1e-6f;  // on its own scale, 1e-3: the worst
  EXPECT_NEAR(conformance::StateError(ours, ref, &worst), 1e-3, 1e-5);
  EXPECT_EQ(worst, "fc.bias");
}

// The float64 reference travels as float pairs hi + lo: a float that equals
// hi is still a quarter ulp from the double hi + lo, which StateError
// against hi alone cannot see.
TEST(ConformanceErrorTest, StateErrorF64MeasuresAgainstHiPlusLo) {
  const double v = 1.0 + 0.25 * 0x1p-23;  // a quarter ulp above 1.0f
  const float hi = static_cast<float>(v), lo = static_cast<float>(v - hi);
  ASSERT_EQ(hi, 1.0f);
  ASSERT_EQ(lo, 0.25f * 0x1p-23f);
  conformance::SplitState ref;
  ref.hi = {{"fc.weight", Tensor({2}, hi), false}, {"fc.bias", Tensor({1}, 0.5f), false}};
  ref.lo = {{"fc.weight", Tensor({2}, lo), false}, {"fc.bias", Tensor({1}, 0.0f), false}};
  NamedTensors ours = {{"fc.weight", Tensor({2}, 1.0f), false},
                       {"fc.bias", Tensor({1}, 0.5f), false}};
  std::string worst;
  EXPECT_EQ(conformance::StateError(ours, ref.hi, &worst), 0.0);
  EXPECT_NEAR(conformance::StateErrorF64(ours, ref, &worst), 0.25 * 0x1p-23 / v, 1e-15);
  EXPECT_EQ(worst, "fc.weight");
  ours[1].value = Tensor({2}, 0.5f);  // a shape mismatch is infinitely far
  EXPECT_EQ(conformance::StateErrorF64(ours, ref, &worst), INFINITY);
}

uint32_t Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

// The perturbation behind g(step): one ulp, either way, on every nonzero
// float; zeros and counters kept; the same directions for the same run.
TEST(ConformanceGrowthTest, PerturbOneUlpMovesEveryNonzeroFloatOneUlp) {
  Tensor w({1000});
  for (int i = 0; i < 1000; ++i) w[i] = i % 10 == 0 ? 0.0f : 0.37f * (i - 500);
  const NamedTensors init = {{"fc.weight", w, false},
                             {"bn.num_batches_tracked", Tensor({1}, 3.0f), true}};
  const NamedTensors a = conformance::PerturbOneUlp(init, 1);
  const NamedTensors b = conformance::PerturbOneUlp(init, 2);
  int up = 0, differ = 0;
  for (int i = 0; i < 1000; ++i) {
    const float v = w[i], p = a[0].value[i];
    if (v == 0.0f) {
      EXPECT_EQ(Bits(p), Bits(v)) << i;
      continue;
    }
    EXPECT_NE(p, v) << i;
    const int64_t step = static_cast<int64_t>(Bits(p)) - static_cast<int64_t>(Bits(v));
    EXPECT_EQ(std::abs(step), 1) << i;  // adjacent floats of the same sign
    up += p > v;
    differ += a[0].value[i] != b[0].value[i];
  }
  EXPECT_GT(up, 350);  // 900 nonzero, each direction about half
  EXPECT_LT(up, 550);
  EXPECT_GT(differ, 350);  // another run draws other directions
  EXPECT_TRUE(a[1].value.BitwiseEqual(init[1].value));
  EXPECT_TRUE(conformance::PerturbOneUlp(init, 1)[0].value.BitwiseEqual(a[0].value));
}

// The TF.js profile is `tf` but for the two places TF.js differs from
// tf.keras, and nothing else.
TEST(ConformanceProfileTest, TfjsProfileDiffersFromTfOnlyWhereTfjsDoes) {
  auto tf = LoadProfile("tf");
  auto tfjs = TfjsProfile();
  ASSERT_TRUE(tf.ok() && tfjs.ok());
  const auto a = nlohmann::json::parse(tf->json).flatten();
  const auto b = nlohmann::json::parse(tfjs->json).flatten();
  std::set<std::string> differ;
  for (auto it = a.begin(); it != a.end(); ++it) {
    if (!b.contains(it.key()) || b[it.key()] != it.value()) differ.insert(it.key());
  }
  EXPECT_EQ(a.size(), b.size());
  EXPECT_EQ(differ, (std::set<std::string>{"/name", "/adam/variant",
                                           "/batch_norm/running_var"}));
  EXPECT_EQ(b["/adam/variant"], "torch");
  EXPECT_EQ(b["/adam/bias_correction"], "float32");
  EXPECT_EQ(b["/batch_norm/running_var"], "biased");
  // The profile's JSON loads back as the same profile (a user can keep it).
  auto again = ParseProfileJson(tfjs->json);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->json, tfjs->json);
}

// TrainOptions::on_step sees every step, and the last one is the result.
TEST(ConformanceTrainHookTest, OnStepSeesEveryStepsWeights) {
  auto data = LoadDataSpec("synthetic", DataOptions{24, 8, 0});
  ASSERT_TRUE(data.ok());
  auto profile = LoadProfile("torch");
  ASSERT_TRUE(profile.ok());
  TrainOptions o;
  o.arch = "mlp";
  o.arch_options.width = 1.0 / 16;
  o.batch_size = 10;
  o.threads = 1;
  std::vector<int64_t> seen;
  NamedTensors last;
  o.on_step = [&](int64_t step, const Model& model) {
    seen.push_back(step);
    last = model.ExportState();
    return Status::OK();
  };
  auto r = TrainProfile(*profile, *data, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(seen, (std::vector<int64_t>{1, 2, 3}));  // 24 images, batch 10
  ASSERT_EQ(last.size(), r->record.weights.size());
  for (size_t i = 0; i < last.size(); ++i) {
    EXPECT_TRUE(last[i].value.BitwiseEqual(r->record.weights[i].value)) << last[i].name;
  }
  o.on_step = [](int64_t step, const Model&) {
    return step == 2 ? Status::Internal("stop at 2") : Status::OK();
  };
  r = TrainProfile(*profile, *data, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "stop at 2");
}

}  // namespace
}  // namespace xw
