// Internal: the query fields over a trial's stored settings beyond the typed
// columns: the architecture and data options of its hyperparameters
// (trials.hparams_json, as `xwires train` and the search write them), the
// profiles it compares, and per model the machine that trained it (models
// columns and fingerprint_json). Trials that do not record a setting (e.g.
// imported CrossedWires results have no width) give NULL: no comparison
// matches them, `is null` does.
//
//   width, depth, dropout       architecture options (numeric)
//   train_limit, test_limit     examples used of each split (0: all)
//   data_seed                   seed of the data order and augmentation
//   init_weights                the initial-weights file, if one was given
//   profiles                    the trial's profile names in model order,
//                               comma-separated ("torch,tf")
//   isa_P, simd_P, cpu_P        the build ISA, the SIMD kernel target
//   threads_P                   ("hwy:AVX3"), the CPU model and the thread
//                               count of the model of profile P
//
// Thread-safe (static tables).
#ifndef XWIRES_DATASET_QUERY_SETTING_FIELDS_H_
#define XWIRES_DATASET_QUERY_SETTING_FIELDS_H_

#include <optional>
#include <string>

#include "filter_parser.h"

namespace xw::filter {

// The setting field `lower` (the lower-cased name; `name` as typed, whose
// suffix is the profile of a per-model field), or nothing.
std::optional<Field> SettingField(const std::string& lower,
                                  const std::string& name);

// "width, depth, ..., isa_<profile>, ..." for error messages.
std::string SettingFieldList();

}  // namespace xw::filter

#endif  // XWIRES_DATASET_QUERY_SETTING_FIELDS_H_
