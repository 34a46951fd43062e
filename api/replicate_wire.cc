#include "replicate_wire.h"

#include <nlohmann/json.hpp>

namespace xw::replicate_wire {
namespace {

using json = nlohmann::json;

// Reals as JSON numbers; non-finite ones as strings (JSON has none).
json Real(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}
double RealOf(const json& j) {
  if (j.is_number()) return j.get<double>();
  const std::string s = j.get<std::string>();
  if (s == "inf") return INFINITY;
  if (s == "-inf") return -INFINITY;
  return NAN;
}

json RecordJson(const ReplicaRecord& r) {
  json curves = json::array(), weights = json::array();
  for (const EpochMetrics& e : r.curves) {
    curves.push_back({e.epoch, Real(e.train_loss_mean), Real(e.train_loss_last),
                      Real(e.train_acc), Real(e.test_loss), Real(e.test_acc)});
  }
  for (const NamedTensor& t : r.weights) {
    json data = json::array();
    for (int64_t i = 0; i < t.value.size(); ++i) data.push_back(t.value.data()[i]);
    weights.push_back({{"name", t.name},
                       {"shape", t.value.shape()},
                       {"int64", t.is_int64},
                       {"data", std::move(data)}});
  }
  return {{"trial_id", r.trial_id},
          {"profile", r.profile},
          {"family", r.family},
          {"replica", r.replica},
          {"params_json", r.params_json},
          {"status", r.status},
          {"test_acc", Real(r.test_acc)},
          {"test_loss", Real(r.test_loss)},
          {"first_nonfinite_step", r.first_nonfinite_step},
          {"curves", std::move(curves)},
          {"predictions", r.predictions},
          {"weights", std::move(weights)},
          {"weights_sha256", r.weights_sha256},
          {"wall_time_s", Real(r.wall_time_s)},
          {"fingerprint_json", r.fingerprint_json}};
}

ReplicaRecord RecordOf(const json& j) {
  ReplicaRecord r;
  r.trial_id = j.at("trial_id").get<int64_t>();
  r.profile = j.at("profile").get<std::string>();
  r.family = j.at("family").get<std::string>();
  r.replica = j.at("replica").get<int64_t>();
  r.params_json = j.at("params_json").get<std::string>();
  r.status = j.at("status").get<std::string>();
  r.test_acc = RealOf(j.at("test_acc"));
  r.test_loss = RealOf(j.at("test_loss"));
  r.first_nonfinite_step = j.at("first_nonfinite_step").get<int64_t>();
  for (const json& e : j.at("curves")) {
    r.curves.push_back({e.at(0).get<int>(), RealOf(e.at(1)), RealOf(e.at(2)), RealOf(e.at(3)),
                        RealOf(e.at(4)), RealOf(e.at(5))});
  }
  r.predictions = j.at("predictions").get<std::vector<uint8_t>>();
  for (const json& w : j.at("weights")) {
    Tensor t(w.at("shape").get<Shape>());
    const json& data = w.at("data");
    if (static_cast<int64_t>(data.size()) != t.size()) throw std::runtime_error("tensor size");
    for (int64_t i = 0; i < t.size(); ++i) t.data()[i] = data[static_cast<size_t>(i)].get<float>();
    r.weights.push_back({w.at("name").get<std::string>(), std::move(t),
                         w.at("int64").get<bool>()});
  }
  r.weights_sha256 = j.at("weights_sha256").get<std::string>();
  r.wall_time_s = RealOf(j.at("wall_time_s"));
  r.fingerprint_json = j.at("fingerprint_json").get<std::string>();
  return r;
}

Status Malformed(const char* what, const std::exception& e) {
  return Status::Corruption(std::string("malformed replicate ") + what +
                            " message between MPI ranks: " + e.what());
}

}  // namespace

std::string EncodePlan(const Plan& p) {
  json jobs = json::array();
  for (const Job& j : p.jobs) jobs.push_back({j.trial, j.model, j.replica});
  return json{{"error", p.error},
              {"code", p.error_code},
              {"trials", p.trial_ids},
              {"jobs", std::move(jobs)}}
      .dump();
}

Result<Plan> DecodePlan(const std::string& bytes) {
  try {
    const json j = json::parse(bytes);
    Plan p;
    p.error = j.at("error").get<std::string>();
    p.error_code = j.at("code").get<int>();
    p.trial_ids = j.at("trials").get<std::vector<int64_t>>();
    for (const json& x : j.at("jobs")) {
      p.jobs.push_back({x.at(0).get<size_t>(), x.at(1).get<size_t>(), x.at(2).get<int64_t>()});
    }
    return p;
  } catch (const std::exception& e) {
    return Malformed("plan", e);
  }
}

std::string EncodeResult(const JobResult& r) {
  json j = {{"job", r.job},
            {"code", static_cast<int>(r.status.code())},
            {"error", r.status.message()},
            {"wall_s", r.wall_s}};
  if (r.status.ok()) j["record"] = RecordJson(r.record);
  return j.dump();
}

Result<JobResult> DecodeResult(const std::string& bytes) {
  try {
    const json j = json::parse(bytes);
    JobResult r;
    r.job = j.at("job").get<int64_t>();
    r.wall_s = j.at("wall_s").get<double>();
    const int code = j.at("code").get<int>();
    if (code != 0) {
      r.status = Status(static_cast<Status::Code>(code), j.at("error").get<std::string>());
    } else {
      r.record = RecordOf(j.at("record"));
    }
    return r;
  } catch (const std::exception& e) {
    return Malformed("result", e);
  }
}

}  // namespace xw::replicate_wire
