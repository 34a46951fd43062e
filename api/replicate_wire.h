// Internal: the messages of a replicate run spread over MPI ranks
// (replicate_run.h). Rank 0 broadcasts the plan (trial ids and the job list);
// every other rank asks for jobs (kWantTag), gets a job index or -1 to stop
// (kJobTag), and sends back each trained replica (kResultTag) for rank 0,
// the only writer, to store. JSON text: the same bits on every rank (doubles
// and floats round-trip exactly).
#ifndef XWIRES_API_REPLICATE_WIRE_H_
#define XWIRES_API_REPLICATE_WIRE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "xwires/core/status.h"
#include "xwires/dataset/store/replicas.h"

namespace xw::replicate_wire {

inline constexpr int kWantTag = 301, kJobTag = 302, kResultTag = 303;

struct Job {
  size_t trial = 0;  // index into the plan's trial ids
  size_t model = 0;  // model index in the trial
  int64_t replica = 0;
};

// Rank 0's plan, or the error that ended it (every rank then stops).
struct Plan {
  std::string error;  // "" when the plan is valid
  int error_code = 0;  // Status::Code of the error
  std::vector<int64_t> trial_ids;
  std::vector<Job> jobs;
};
std::string EncodePlan(const Plan& p);
Result<Plan> DecodePlan(const std::string& bytes);

// A finished job: its index and the replica, or the error of its training.
struct JobResult {
  int64_t job = 0;
  Status status;
  ReplicaRecord record;  // when status is OK
  double wall_s = 0;
};
std::string EncodeResult(const JobResult& r);
Result<JobResult> DecodeResult(const std::string& bytes);

}  // namespace xw::replicate_wire

#endif  // XWIRES_API_REPLICATE_WIRE_H_
