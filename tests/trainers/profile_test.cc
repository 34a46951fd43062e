// Profiles: shipped values (the knob table), canonical JSON round
// trip, and errors that name the offending key.
#include "xwires/trainers/profile.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

namespace xw {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string ShippedPath(const std::string& name) {
  return std::string(XWIRES_SOURCE_DIR) + "/trainers/profiles/" + name + ".json";
}

TEST(ProfileTest, TorchHasTableValues) {
  auto p = LoadProfile("torch");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->name, "torch");
  EXPECT_EQ(p->kernels.conv_algo, ConvAlgo::kDirect);
  EXPECT_EQ(p->kernels.gemm, GemmKind::kOwned);
  EXPECT_EQ(p->kernels.reduce.order, ReduceOrder::kLanes);
  EXPECT_EQ(p->kernels.reduce.lanes, 8);
  EXPECT_TRUE(p->kernels.reduce.fma);
  EXPECT_EQ(p->adam.variant, AdamVariant::kTorch);
  EXPECT_TRUE(p->adam.bias_correction_double);
  EXPECT_EQ(p->adam.weight_decay, WeightDecayMode::kL2InGradient);
  EXPECT_FALSE(p->adam.amsgrad);
  EXPECT_TRUE(p->adam.fma);
  EXPECT_EQ(p->init, InitScheme::kTorchDefault);
  EXPECT_EQ(p->bn.eps, 1e-5f);
  EXPECT_EQ(p->bn.momentum, 0.1f);
  EXPECT_TRUE(p->bn.unbiased_running_var);
  EXPECT_EQ(p->bn.update, RunningUpdate::kLerp);
  EXPECT_EQ(p->bn.accumulate, BatchNormAccumulate::kDouble);  // ATen CPU's acc_type
  EXPECT_TRUE(p->bn.fma);
  EXPECT_EQ(p->same_padding, SamePadding::kSymmetric);
  EXPECT_EQ(p->loss.numerics, LossNumerics::kFusedLogSoftmax);
  EXPECT_FALSE(p->shuffle);
  EXPECT_EQ(p->rng_stream, "torch");
}

TEST(ProfileTest, TfHasTableValues) {
  auto p = LoadProfile("tf");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->kernels.conv_algo, ConvAlgo::kIm2colGemm);
  EXPECT_EQ(p->kernels.gemm, GemmKind::kOwned);  // the same bits on every CPU
  EXPECT_TRUE(SameBitsOnEveryIsa(p->kernels));
  EXPECT_EQ(p->kernels.reduce.order, ReduceOrder::kPairwise);
  EXPECT_EQ(p->adam.variant, AdamVariant::kKeras);
  EXPECT_FALSE(p->adam.bias_correction_double);
  EXPECT_EQ(p->adam.weight_decay, WeightDecayMode::kDecoupled);
  EXPECT_EQ(p->init, InitScheme::kGlorotUniform);
  EXPECT_EQ(p->bn.eps, 1e-3f);
  EXPECT_EQ(p->bn.momentum, 0.01f);  // Keras momentum 0.99
  EXPECT_EQ(p->bn.update, RunningUpdate::kSubtract);
  EXPECT_EQ(p->same_padding, SamePadding::kTfSame);
  EXPECT_EQ(p->loss.numerics, LossNumerics::kClippedSoftmax);
  EXPECT_EQ(p->loss.clip_eps, 1e-7f);
  EXPECT_FALSE(p->shuffle);
  EXPECT_EQ(p->rng_stream, "tf");
}

TEST(ProfileTest, ReferenceHasTableValues) {
  auto p = LoadProfile("reference");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->kernels.conv_algo, ConvAlgo::kDirect);
  EXPECT_EQ(p->kernels.gemm, GemmKind::kOwned);
  EXPECT_EQ(p->kernels.reduce.order, ReduceOrder::kSequential);
  EXPECT_FALSE(p->kernels.reduce.fma);
  EXPECT_EQ(p->adam.variant, AdamVariant::kTorch);
  EXPECT_TRUE(p->adam.bias_correction_double);
  EXPECT_FALSE(p->adam.fma);
  EXPECT_EQ(p->init, InitScheme::kGlorotUniform);
  EXPECT_EQ(p->bn.eps, 1e-5f);
  EXPECT_EQ(p->bn.momentum, 0.1f);
  EXPECT_EQ(p->same_padding, SamePadding::kSymmetric);
  EXPECT_EQ(p->loss.numerics, LossNumerics::kFusedLogSoftmax);
  EXPECT_EQ(p->rng_stream, "reference");
}

TEST(ProfileTest, ShippedFilesAreCanonicalAndStreamsDistinct) {
  std::set<std::string> streams;
  for (const auto& name : ShippedProfileNames()) {
    auto p = LoadProfile(name);
    ASSERT_TRUE(p.ok()) << name << ": " << p.status().ToString();
    EXPECT_EQ(p->json, ReadFile(ShippedPath(name))) << name;
    streams.insert(p->rng_stream);
  }
  EXPECT_EQ(streams.size(), ShippedProfileNames().size());
}

TEST(ProfileTest, RoundTripOfEveryKnob) {
  Profile p = *LoadProfile("torch");
  p.name = "custom";
  p.kernels.conv_algo = ConvAlgo::kWinograd;
  p.kernels.gemm = GemmKind::kEigen;
  p.kernels.reduce = *ParseReduceOrder("lanes16", false);
  p.adam = {AdamVariant::kKeras, false, WeightDecayMode::kDecoupled, true, true};
  p.init = InitScheme::kGlorotUniform;
  p.bn = {1.001e-5f, 0.01f, false, RunningUpdate::kSubtract, BatchNormAccumulate::kDouble, true};
  p.same_padding = SamePadding::kTfSame;
  p.loss = {LossNumerics::kClippedSoftmax, 1e-6f};
  p.shuffle = true;
  p.rng_stream = "mine";
  const std::string text = ProfileToJson(p);
  auto q = ParseProfileJson(text);
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  EXPECT_EQ(q->json, text);
  EXPECT_EQ(q->kernels.conv_algo, ConvAlgo::kWinograd);
  EXPECT_EQ(q->kernels.reduce.lanes, 16);
  EXPECT_FALSE(q->kernels.reduce.fma);
  EXPECT_EQ(q->adam.variant, AdamVariant::kKeras);
  EXPECT_FALSE(q->adam.bias_correction_double);
  EXPECT_TRUE(q->adam.amsgrad);
  EXPECT_TRUE(q->adam.fma);
  EXPECT_EQ(q->bn.eps, 1.001e-5f);
  EXPECT_FALSE(q->bn.unbiased_running_var);
  EXPECT_EQ(q->bn.accumulate, BatchNormAccumulate::kDouble);
  EXPECT_TRUE(q->bn.fma);
  EXPECT_EQ(q->loss.clip_eps, 1e-6f);
  EXPECT_TRUE(q->shuffle);
  EXPECT_EQ(q->rng_stream, "mine");
  // Floats print as written, not as their double expansion.
  EXPECT_NE(text.find("\"eps\": 1.001e-05"), std::string::npos) << text;
}

// Edits the torch profile's JSON and expects an error mentioning `needle`.
void ExpectError(const std::function<void(nlohmann::json&)>& edit, const std::string& needle) {
  auto j = nlohmann::json::parse(LoadProfile("torch")->json);
  edit(j);
  auto p = ParseProfileJson(j.dump());
  ASSERT_FALSE(p.ok()) << "accepted: " << j.dump();
  EXPECT_EQ(p.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(p.status().message().find(needle), std::string::npos)
      << "message '" << p.status().message() << "' lacks '" << needle << "'";
}

TEST(ProfileTest, UnknownKeysAreNamed) {
  ExpectError([](auto& j) { j["colour"] = "red"; }, "colour: unknown key");
  ExpectError([](auto& j) { j["adam"]["epsilon"] = 1e-8; }, "adam.epsilon: unknown key");
}

TEST(ProfileTest, MissingKeysAreNamed) {
  ExpectError([](auto& j) { j.erase("init"); }, "init: missing");
  ExpectError([](auto& j) { j["batch_norm"].erase("momentum"); }, "batch_norm.momentum: missing");
}

TEST(ProfileTest, WrongTypesAreNamed) {
  ExpectError([](auto& j) { j["shuffle"] = "no"; }, "shuffle: expected true or false");
  ExpectError([](auto& j) { j["batch_norm"]["eps"] = "1e-5"; },
              "batch_norm.eps: expected a number");
  ExpectError([](auto& j) { j["adam"] = 3; }, "adam: expected a JSON object");
  ExpectError([](auto& j) { j["name"] = 7; }, "name: expected a string");
}

TEST(ProfileTest, BadValuesAreNamed) {
  ExpectError([](auto& j) { j["adam"]["variant"] = "tf"; },
              "adam.variant: unknown value 'tf' (expected torch or keras)");
  ExpectError([](auto& j) { j["kernels"]["reduce"] = "lanes3"; }, "kernels.reduce");
  ExpectError([](auto& j) { j["kernels"]["conv_algo"] = "fft"; }, "kernels.conv_algo");
  ExpectError([](auto& j) { j["same_padding"] = "valid"; }, "same_padding: unknown value");
  ExpectError([](auto& j) { j["batch_norm"]["momentum"] = 0.99 + 1; }, "batch_norm.momentum");
  ExpectError([](auto& j) { j["batch_norm"]["eps"] = 0; }, "batch_norm.eps");
  ExpectError([](auto& j) { j["batch_norm"]["accumulate"] = "half"; },
              "batch_norm.accumulate: unknown value 'half'");
  ExpectError([](auto& j) { j["batch_norm"]["fma"] = "yes"; }, "batch_norm.fma");
  ExpectError([](auto& j) { j["loss"]["clip_eps"] = 0.7; }, "loss.clip_eps");
  ExpectError([](auto& j) { j["rng_stream"] = ""; }, "rng_stream: must not be empty");
}

// batch_norm.accumulate and .fma are optional: a profile written before
// they existed (every stored run's) reads as float and false, how it ran.
TEST(ProfileTest, BatchNormAccumulateAndFmaDefaultToFloat) {
  auto j = nlohmann::json::parse(LoadProfile("torch")->json);
  j["batch_norm"].erase("accumulate");
  j["batch_norm"].erase("fma");
  auto p = ParseProfileJson(j.dump());
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->bn.accumulate, BatchNormAccumulate::kFloat);
  EXPECT_FALSE(p->bn.fma);
  EXPECT_EQ(p->json.find("accumulate"), std::string::npos);  // defaults not printed
  EXPECT_NE(ProfileToJsonWithAccelerator(*p).find("\"accumulate\": \"float\""),
            std::string::npos);
  for (const std::string name : {"tf", "reference", "torch-a100", "torch-h100",
                                 "torch-amp-fp16", "torch-bf16"}) {
    auto q = LoadProfile(name);
    ASSERT_TRUE(q.ok()) << name;
    EXPECT_EQ(q->bn.accumulate, BatchNormAccumulate::kFloat) << name;
    EXPECT_FALSE(q->bn.fma) << name;
  }
}

TEST(ProfileTest, NotJsonIsRejected) {
  auto p = ParseProfileJson("{\"name\": ");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("not valid JSON"), std::string::npos);
  EXPECT_FALSE(ParseProfileJson("[1, 2]").ok());
}

TEST(ProfileTest, UserFileLoadsAndErrorsNameTheFile) {
  const std::string dir = ::testing::TempDir();
  const std::string good = dir + "/xw_profile_user.json";
  Profile p = *LoadProfile("reference");
  p.name = "mine";
  p.rng_stream = "mine";
  { std::ofstream(good) << ProfileToJson(p); }
  auto q = LoadProfile(good);
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  EXPECT_EQ(q->name, "mine");

  const std::string bad = dir + "/xw_profile_bad.json";
  const std::string bad_text = "{\"name\": \"x\"}";
  { std::ofstream(bad) << bad_text; }
  auto r = LoadProfile(bad);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find(bad), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("kernels: missing"), std::string::npos);
  EXPECT_EQ(ReadFile(bad), bad_text);  // loading never touches the file
  std::remove(good.c_str());
  std::remove(bad.c_str());
}

TEST(ProfileTest, UnknownNameAndMissingFileAreNotFound) {
  auto a = LoadProfile("jax");
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), Status::Code::kNotFound);
  EXPECT_NE(a.status().message().find("'jax'"), std::string::npos);
  auto b = LoadProfile("/nonexistent/dir/p.json");
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), Status::Code::kNotFound);
  EXPECT_NE(b.status().message().find("/nonexistent/dir/p.json"), std::string::npos);
}

}  // namespace
}  // namespace xw
