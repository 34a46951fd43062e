#include "analysis_test_util.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace xw::testing {

DataSplits TinyData(const TinyRun& run) {
  DataOptions d;
  d.train_limit = run.train;
  d.test_limit = run.test;
  d.seed = run.seed;
  auto data = LoadDataSpec("synthetic", d);
  if (!data.ok()) ADD_FAILURE() << data.status().ToString();
  return std::move(data).value();
}

TrainOptions TinyOptions(const TinyRun& run) {
  TrainOptions o;
  o.arch = run.arch;
  o.arch_options.width = run.width;
  o.epochs = run.epochs;
  o.batch_size = run.batch;
  o.adam.lr = run.lr;
  o.adam.eps = run.eps;
  o.seed = run.seed;
  o.threads = 2;
  o.data_spec = "synthetic";
  o.train_limit = run.train;
  o.test_limit = run.test;
  return o;
}

int64_t TrainAndStore(Dataset& ds, const std::vector<Profile>& profiles,
                      const TinyRun& run) {
  const DataSplits data = TinyData(run);
  auto trial = TrainTrial(profiles, data, TinyOptions(run));
  if (!trial.ok()) {
    ADD_FAILURE() << trial.status().ToString();
    return -1;
  }
  auto id = ds.AddTrial(*trial);
  if (!id.ok()) {
    ADD_FAILURE() << id.status().ToString();
    return -1;
  }
  return *id;
}

Profile Shipped(const std::string& name) {
  auto p = LoadProfile(name);
  if (!p.ok()) ADD_FAILURE() << p.status().ToString();
  return std::move(p).value();
}

Profile Edited(const std::string& base, const std::string& name,
               const std::vector<std::pair<std::string, std::string>>& edits) {
  nlohmann::ordered_json j =
      nlohmann::ordered_json::parse(ProfileToJson(Shipped(base)));
  j["name"] = name;
  for (const auto& [ptr, value] : edits) {
    j[nlohmann::ordered_json::json_pointer(ptr)] =
        nlohmann::ordered_json::parse(value);
  }
  auto p = ParseProfileJson(j.dump());
  if (!p.ok()) ADD_FAILURE() << p.status().ToString();
  return std::move(p).value();
}

int Run(const std::string& command, std::string* out) {
  const testutil::CommandResult r = testutil::Run(command);
  if (out != nullptr) *out = r.out;
  std::cerr << r.err;
  return r.exit_code;
}

}  // namespace xw::testing
