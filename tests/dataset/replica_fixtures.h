// Fixtures of the replica tests (bundle_replicas_test, replica_stats_key_test):
// a stored trial of two profiles (torch, tf) and hand-made replicas with
// per-example predictions, so that bundles, merges, fsck and migrations can
// be checked without training.
#ifndef XWIRES_TESTS_DATASET_REPLICA_FIXTURES_H_
#define XWIRES_TESTS_DATASET_REPLICA_FIXTURES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "xwires/dataset/store/dataset.h"
#include "xwires/dataset/store/replicas.h"

namespace xw::testutil {

// The fixtures' test set: kReplicaExamples examples of kReplicaClasses classes.
inline constexpr int kReplicaExamples = 60, kReplicaClasses = 10;

// Its labels: example i has class i % kReplicaClasses.
std::vector<uint8_t> ReplicaLabels();

// An mlp trial of `seed` with models torch (accuracy 0.6) and tf (0.3).
TrialRecord ReplicaTrial(int seed);

// Replica r of `profile` in `family`: torch right on about 60% of the
// examples, tf on about 30%, each replica on a different subset. With
// `with_weights`, it keeps a 2x2 weight tensor.
ReplicaRecord MakeReplica(int64_t trial, const std::string& profile, const std::string& family,
                          int r, bool with_weights = false);

// Stores replicas first..first+k-1 of both profiles of `trial` (those not
// stored yet) and their statistics row; replica `weights_replica` of each
// profile keeps its weights (-1: none).
void StoreReplicated(Dataset& ds, int64_t trial, const std::string& family, int first, int k,
                     int weights_replica = -1);

}  // namespace xw::testutil

#endif  // XWIRES_TESTS_DATASET_REPLICA_FIXTURES_H_
