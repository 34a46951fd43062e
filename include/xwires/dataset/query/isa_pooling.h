// Models of an ISA-dependent profile pooled from different SIMD targets.
//
// A profile whose kernels are not exact-order (a user profile with
// `gemm: eigen`: Eigen's sgemm blocks and fuses by the build's -march and
// the dispatched target) computes different bits, and so different
// accuracies and divergences, on different CPUs; its models' fingerprints
// say "isa_dependent": true next to the build's "isa" and the dispatched
// "kernel_target" (docs/profiles.md). `stats`, `merge` and `bundle import`
// pool models; when such a profile's models come from more than one
// (isa, kernel_target) pair, the pooled numbers mix CPUs, and the commands
// warn. Exact-order profiles (torch, tf, reference) never do.
// Read-only; thread-safety as Dataset.
#ifndef XWIRES_DATASET_QUERY_ISA_POOLING_H_
#define XWIRES_DATASET_QUERY_ISA_POOLING_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "xwires/core/status.h"
#include "xwires/dataset/query/query.h"
#include "xwires/dataset/store/dataset.h"

namespace xw {

// One ISA-dependent profile whose models were computed on several targets.
struct IsaMixedProfile {
  std::string profile;
  // "<isa> / <kernel_target>" -> number of models, sorted by the key; two
  // or more entries.
  std::vector<std::pair<std::string, int64_t>> targets;
};

// Every ISA-dependent profile (a model's fingerprint has "isa_dependent":
// true) among the trials matching `q` (its filters; limit and order are
// ignored) whose models come from more than one (isa, kernel_target) pair,
// sorted by profile name. A fingerprint that is not JSON counts as no
// ISA dependence. Errors: those of Dataset::Query.
Result<std::vector<IsaMixedProfile>> FindIsaMixedProfiles(const Dataset& ds,
                                                          const TrialQuery& q = {});

// One line for the user: "warning: profile 'mine' has ISA-dependent
// kernels (isa_dependent) and its N models were computed on different SIMD
// targets: <key> (n), ...; its accuracies and divergences mix CPUs".
std::string IsaMixedWarning(const IsaMixedProfile& p);

}  // namespace xw

#endif  // XWIRES_DATASET_QUERY_ISA_POOLING_H_
