// JSON records of a training run: the hyperparameters (TrialRecord::
// hparams_json) and DIR/metrics.json written by `xwires train --out DIR`.
//
// metrics.json schema ("format": "xwires-train-metrics-1"; docs/training.md):
//   {
//     "format": "xwires-train-metrics-1",
//     "arch": "simple_cnn",
//     "data": {"spec": "synthetic", "name": "synthetic", "train_size": 5000,
//              "test_size": 1000, "image_shape": [3, 32, 32], "classes": 10},
//     "hparams": { ...HparamsJson... },
//     "profiles": ["torch", "tf"],
//     "models": [{"profile", "status", "test_acc", "test_loss", "train_acc",
//                 "train_loss", "wall_time_s", "param_count", "threads",
//                 "weights_file", "weights_sha256", "profile_definition",
//                 "curves": [{"epoch", "train_loss_mean", "train_loss_last",
//                             "train_acc", "test_loss", "test_acc"}, ...]}],
//     "test_acc_difference": |acc_0 - acc_1| (null unless two models),
//     "divergence": largest pairwise |test accuracy difference|,
//     "wall_time_s": whole command, "fingerprint": {...}
//   }
// Non-finite numbers (a diverged run's losses) are written as null.
// Functions are pure and thread-safe.
#ifndef XWIRES_TRAINERS_METRICS_H_
#define XWIRES_TRAINERS_METRICS_H_

#include <string>
#include <vector>

#include "xwires/core/data.h"
#include "xwires/dataset/store/run_record.h"
#include "xwires/trainers/trainer.h"

namespace xw {

// Every option that shapes a run, as a JSON object (arch, width, depth,
// dropout, epochs, batch_size, lr, adam_eps, beta1, beta2, weight_decay,
// seed, threads, eval_batch_size, data spec and limits, init weights).
std::string HparamsJson(const TrainOptions& options);

// A trial row for a run with these options, before any model is trained: arch,
// data spec, HparamsJson and the searched hyperparameter columns are filled;
// models, divergence and provenance are left to the caller.
TrialRecord TrialRecordFor(const TrainOptions& options);

// metrics.json text (2-space indent). weights_files[i] names models[i]'s
// weights file relative to the output directory.
std::string MetricsJson(const TrialRecord& trial, const DataSplits& data,
                        const std::vector<std::string>& weights_files, double wall_time_s,
                        int threads);

}  // namespace xw

#endif  // XWIRES_TRAINERS_METRICS_H_
