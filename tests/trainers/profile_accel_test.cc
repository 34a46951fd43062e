// The "accelerator" object of a profile: shipped accelerator profiles and
// their values, canonical JSON, today's profiles unchanged, and an error
// naming the key path for a bad value of every new key.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "xwires/core/accel_numerics.h"
#include "xwires/core/pooling.h"
#include "xwires/core/rng.h"
#include "xwires/trainers/layers.h"
#include "xwires/trainers/profile.h"

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

TEST(ProfileAccel, FpProfilesHaveNoAcceleratorAndDefaults) {
  for (const auto& name : ShippedProfileNames()) {
    auto p = LoadProfile(name);
    ASSERT_TRUE(p.ok());
    EXPECT_EQ(p->json.find("accelerator"), std::string::npos) << name;
    EXPECT_FALSE(p->accel.ConvActive());
    EXPECT_FALSE(p->accel.MatmulActive());
    EXPECT_EQ(p->mixed_precision, MixedPrecision::kFp32);
    EXPECT_EQ(p->loss_scaling, LossScaling::kNone);
  }
}

TEST(ProfileAccel, ShippedFilesAreCanonical) {
  for (const auto& name : AcceleratorProfileNames()) {
    auto p = LoadProfile(name);
    ASSERT_TRUE(p.ok()) << name << ": " << p.status().ToString();
    EXPECT_EQ(p->name, name);
    EXPECT_EQ(p->json, ReadFile(ShippedPath(name))) << name;
  }
}

TEST(ProfileAccel, ShippedValues) {
  auto a100 = *LoadProfile("torch-a100");
  EXPECT_EQ(a100.accel.conv_operands, OperandRounding::kTf32Rna);
  EXPECT_EQ(a100.accel.matmul_operands, OperandRounding::kNone);  // PyTorch >= 1.12
  EXPECT_EQ(a100.accel.accumulation, Accumulation::kTensorCore);
  EXPECT_EQ(a100.accel.TensorCoreFor(OperandRounding::kTf32Rna).block, 4);
  EXPECT_EQ(a100.rng_stream, "torch");
  auto tf = *LoadProfile("tf-a100");
  EXPECT_EQ(tf.accel.matmul_operands, OperandRounding::kTf32Rna);  // TF >= 2.4
  auto h100 = *LoadProfile("torch-h100");
  EXPECT_EQ(h100.accel.conv_operands, OperandRounding::kTf32Rz);
  EXPECT_EQ(h100.accel.TensorCoreFor(OperandRounding::kTf32Rz).align_bits, 2);
  auto amp = *LoadProfile("torch-amp-fp16");
  EXPECT_EQ(amp.mixed_precision, MixedPrecision::kTorchFp16);
  EXPECT_EQ(amp.loss_scaling, LossScaling::kTorchDynamic);
  EXPECT_EQ(LoadProfile("torch-bf16")->loss_scaling, LossScaling::kNone);
  EXPECT_EQ(LoadProfile("tf-mixed-fp16")->loss_scaling, LossScaling::kKeras3Dynamic);
  auto tpu = *LoadProfile("tpu-bf16");
  EXPECT_TRUE(tpu.accel.flush_bf16_subnormals);
  EXPECT_EQ(tpu.accel.accumulation, Accumulation::kOrdered);
}

TEST(ProfileAccel, DefaultAcceleratorPrintsOnRequestAndParsesBack) {
  const Profile torch = *LoadProfile("torch");
  const std::string full = ProfileToJsonWithAccelerator(torch);
  EXPECT_NE(full.find("\"accelerator\""), std::string::npos);
  auto q = ParseProfileJson(full);
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  EXPECT_EQ(q->json, torch.json);  // canonical form leaves the defaults out
}

TEST(ProfileAccel, CustomTensorCoreRoundTrips) {
  Profile p = *LoadProfile("torch-a100");
  p.accel.preset = TensorCorePreset::kCustom;
  p.accel.tensor_core = {16, 3};
  p.accel.split_k = 5;
  p.accel.partial = StorageFormat::kBf16;
  p.accel.scatter_random = true;
  const std::string text = ProfileToJson(p);
  auto q = ParseProfileJson(text);
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  EXPECT_EQ(q->json, text);
  EXPECT_EQ(q->accel.tensor_core.block, 16);
  EXPECT_EQ(q->accel.tensor_core.align_bits, 3);
  EXPECT_EQ(q->accel.split_k, 5);
  EXPECT_EQ(q->accel.partial, StorageFormat::kBf16);
  EXPECT_TRUE(q->accel.scatter_random);
}

// Edits torch-amp-fp16's JSON; expects an error naming `needle`.
void ExpectError(const std::function<void(nlohmann::json&)>& edit, const std::string& needle) {
  auto j = nlohmann::json::parse(LoadProfile("torch-amp-fp16")->json);
  edit(j);
  auto p = ParseProfileJson(j.dump());
  ASSERT_FALSE(p.ok()) << "accepted: " << j.dump();
  EXPECT_EQ(p.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(p.status().message().find(needle), std::string::npos)
      << "message '" << p.status().message() << "' lacks '" << needle << "'";
}

TEST(ProfileAccel, BadValuesNameTheKeyPath) {
  ExpectError([](auto& j) { j["accelerator"]["conv_operands"] = "tf32"; },
              "accelerator.conv_operands: unknown value 'tf32'");
  ExpectError([](auto& j) { j["accelerator"]["matmul_operands"] = 3; },
              "accelerator.matmul_operands: expected a string");
  ExpectError([](auto& j) { j["accelerator"]["flush_bf16_subnormals"] = "yes"; },
              "accelerator.flush_bf16_subnormals: expected true or false");
  ExpectError([](auto& j) { j["accelerator"]["accumulation"]["kind"] = "fast"; },
              "accelerator.accumulation.kind: unknown value 'fast'");
  ExpectError([](auto& j) { j["accelerator"]["accumulation"]["preset"] = "v100"; },
              "accelerator.accumulation.preset: unknown value 'v100'");
  ExpectError([](auto& j) { j["accelerator"]["accumulation"]["block"] = 8; },
              "accelerator.accumulation.block: set by the preset");
  ExpectError(
      [](auto& j) {
        j["accelerator"]["accumulation"]["preset"] = "custom";
        j["accelerator"]["accumulation"]["block"] = 6;
        j["accelerator"]["accumulation"]["align_bits"] = 1;
      },
      "accelerator.accumulation.block: must be 4, 8, 16 or 32");
  ExpectError(
      [](auto& j) {
        j["accelerator"]["accumulation"]["preset"] = "custom";
        j["accelerator"]["accumulation"]["block"] = 8;
      },
      "accelerator.accumulation.align_bits: missing");
  ExpectError(
      [](auto& j) {
        j["accelerator"]["accumulation"]["preset"] = "custom";
        j["accelerator"]["accumulation"]["block"] = 8;
        j["accelerator"]["accumulation"]["align_bits"] = 1.5;
      },
      "accelerator.accumulation.align_bits: must be an integer");
  ExpectError([](auto& j) { j["accelerator"]["accumulation"] = {{"kind", "ordered"}, {"x", 1}}; },
              "accelerator.accumulation.x: unknown key");
  ExpectError([](auto& j) { j["accelerator"]["split_k"]["partitions"] = 0; },
              "accelerator.split_k.partitions: must be an integer in [1, 4096]");
  ExpectError([](auto& j) { j["accelerator"]["split_k"]["partial"] = "fp8"; },
              "accelerator.split_k.partial: unknown value 'fp8'");
  ExpectError([](auto& j) { j["accelerator"]["scatter_order"] = "atomic"; },
              "accelerator.scatter_order: unknown value 'atomic'");
  ExpectError([](auto& j) { j["accelerator"]["mixed_precision"] = "fp16"; },
              "accelerator.mixed_precision: unknown value 'fp16'");
  ExpectError([](auto& j) { j["accelerator"]["loss_scaling"] = "static"; },
              "accelerator.loss_scaling: unknown value 'static'");
  ExpectError([](auto& j) { j["accelerator"].erase("loss_scaling"); },
              "accelerator.loss_scaling: missing");
  ExpectError([](auto& j) { j["accelerator"]["colour"] = 1; }, "accelerator.colour: unknown key");
  ExpectError([](auto& j) { j["accelerator"] = 1; }, "accelerator: expected a JSON object");
}

TEST(ProfileAccel, BadFileIsRejectedNamingFileAndKey) {
  auto j = nlohmann::json::parse(LoadProfile("torch-a100")->json);
  j["accelerator"]["split_k"]["partial"] = "fp64";
  const std::string path = ::testing::TempDir() + "/xw_accel_bad.json";
  { std::ofstream(path) << j.dump(); }
  auto p = LoadProfile(path);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find(path), std::string::npos);
  EXPECT_NE(p.status().message().find("accelerator.split_k.partial"), std::string::npos);
}

// Average pooling under mixed precision: fp32 accumulation, output (and
// input gradient) rounded to the 16-bit dtype, as autocast runs pooling in
// its input's dtype; fp32 profiles leave the mean unrounded.
TEST(ProfileAccel, AveragePoolingRoundsItsOutputUnderMixedPrecision) {
  Tensor x({2, 3, 4, 4});
  Philox(3, StreamId("avgpool-mixed")).FillUniform(x.data(), x.size(), -1.0f, 1.0f);
  for (int64_t i = 0; i < x.size(); ++i) x[i] = RoundToFormat(x[i], StorageFormat::kBf16);
  auto all_bf16 = [](const Tensor& t) {
    for (int64_t i = 0; i < t.size(); ++i) {
      if (RoundToFormat(t[i], StorageFormat::kBf16) != t[i]) return false;
    }
    return true;
  };
  for (bool global : {true, false}) {
    SCOPED_TRACE(global ? "global" : "2x2");
    RunContext fp32, bf16;
    bf16.mixed = StorageFormat::kBf16;
    GlobalAvgPool g1, g2;
    AvgPool2d p1(2, 2), p2(2, 2);
    Module& plain = global ? static_cast<Module&>(g1) : p1;
    Module& mixed = global ? static_cast<Module&>(g2) : p2;
    auto y32 = plain.Forward(x, fp32);
    auto y16 = mixed.Forward(x, bf16);
    ASSERT_TRUE(y32.ok() && y16.ok());
    EXPECT_FALSE(all_bf16(**y32));  // the means need more than bf16's 8 bits
    EXPECT_TRUE(all_bf16(**y16));
    for (int64_t i = 0; i < (*y16)->size(); ++i) {
      EXPECT_EQ((**y16)[i], RoundToFormat((**y32)[i], StorageFormat::kBf16));
    }
    Tensor dy((*y16)->shape());
    Philox(4, StreamId("avgpool-mixed")).FillUniform(dy.data(), dy.size(), -1.0f, 1.0f);
    for (int64_t i = 0; i < dy.size(); ++i) dy[i] = RoundToFormat(dy[i], StorageFormat::kBf16);
    Tensor dy2 = dy;
    auto dx16 = mixed.Backward(dy, bf16, true);
    auto dx32 = plain.Backward(dy2, fp32, true);
    ASSERT_TRUE(dx16.ok() && dx32.ok());
    EXPECT_TRUE(all_bf16(**dx16));
    for (int64_t i = 0; i < (*dx16)->size(); ++i) {
      EXPECT_EQ((**dx16)[i], RoundToFormat((**dx32)[i], StorageFormat::kBf16));
    }
  }
}


// `scatter_order` reaches max pooling: with overlapping 3x3 windows at
// stride 1 on a plane whose maxima repeat, the layer's backward under a
// profile with `random` is PoolScatterOrder's random order keyed by (seed,
// step, "maxpool/" + the layer's path), and the index profile's is the
// plain output order.
TEST(ProfileAccel, ScatterOrderReachesOverlappingMaxPooling) {
  Tensor x({1, 2, 6, 6});
  for (int64_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 7) % 5);
  Tensor dy({1, 2, 4, 4});
  for (int64_t i = 0; i < dy.size(); ++i) dy[i] = std::ldexp(1.0f + i % 3, (i % 5) * 6 - 12);
  const Pool2dSpec spec = Pool2dSpec::Square(3, 1);
  Tensor y;
  std::vector<int32_t> idx;
  ASSERT_TRUE(MaxPool2dForward(x, spec, &y, &idx).ok());
  RunContext index, random;
  random.accel.scatter_random = true;
  random.seed = index.seed = 9;
  random.step = index.step = 4;
  MaxPool2d a(3, 1), b(3, 1);
  std::vector<StateEntry> entries;
  b.Register("features.2.", &entries);
  ASSERT_TRUE(a.Forward(x, index).ok());
  ASSERT_TRUE(b.Forward(x, random).ok());
  Tensor dy1 = dy, dy2 = dy;
  auto di = a.Backward(dy1, index, true);
  auto dr = b.Backward(dy2, random, true);
  ASSERT_TRUE(di.ok() && dr.ok());
  Tensor want_index, want_random;
  ASSERT_TRUE(MaxPool2dBackward(dy, idx, x.shape(), spec, &want_index).ok());
  PoolScatterOrder order{true, 9, 4, StreamId("maxpool/features.2")};
  ASSERT_TRUE(MaxPool2dBackward(dy, idx, x.shape(), spec, order, &want_random).ok());
  EXPECT_TRUE((*di)->BitwiseEqual(want_index));
  EXPECT_TRUE((*dr)->BitwiseEqual(want_random));
  EXPECT_FALSE(want_index.BitwiseEqual(want_random));
}

}  // namespace
}  // namespace xw
