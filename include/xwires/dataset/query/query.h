// Queries over a dataset's trials (used by xw::Dataset::Query / Count / Near).
//
// Filter language (`where`), parsed into parameterized SQL over whitelisted
// fields, so user text never reaches SQL:
//   expr    := or ; or := and ("or" and)* ; and := unary ("and" unary)*
//   unary   := "not" unary | "(" expr ")" | field op value
//            | field "is" ["not"] "null"         (unknown / known values)
//   op      := < <= > >= = == != <>       ("&&", "||", "!" also accepted)
//   value   := number (any C float syntax: 1e-3, .5, 2., 0x1p-4, inf)
//            | 'text' | "text" | bare word (text fields only)
// Numeric fields: lr (learning_rate), adam_eps (eps, adam_epsilon), beta1,
// beta2, weight_decay (wd), batch_size (bs), epochs, seed, diff (divergence,
// accuracy_diff), id, search_id, and per profile P: acc_P (test accuracy),
// train_acc_P, loss_P (test loss), train_loss_P, and the degenerate-model
// flags collapsed and at_chance (1 if any model is flagged, 0, or unknown;
// xwires/dataset/store/degenerate.h). Text fields: arch, data,
// status, external_id (name), provenance. The stored settings (width, depth,
// dropout, train_limit, test_limit, data_seed, init_weights, profiles, and
// per profile isa_P, simd_P, cpu_P, threads_P) are fields too
// (dataset/query/setting_fields.h). Keywords are case-insensitive.
// Unknown values (NaN) never satisfy a comparison.
//
// Limits: at most 16384 bytes of text, 64 nested '(' / 'not' levels and 256
// comparisons (SQLite's expression depth is 1000).
//
// Errors (InvalidArgument) name the unknown field or the 1-based character
// position of the malformed token, or the limit exceeded. Trial statuses
// (`statuses`) must be ok, diverged, failed, incomplete or pending.
#ifndef XWIRES_DATASET_QUERY_QUERY_H_
#define XWIRES_DATASET_QUERY_QUERY_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "xwires/core/status.h"

namespace xw {

struct TrialQuery {
  std::string where;                  // filter language above ("" = all)
  std::vector<std::string> archs;     // any of these ("" = all)
  std::vector<std::string> profiles;  // trials having a model of every one
  std::vector<std::string> statuses;  // trial status any of these
  // Inclusive ranges on numeric fields of the filter language, e.g.
  // {"lr", {1e-3, 1e-1}}; use +-inf for open ends.
  std::map<std::string, std::pair<double, double>> ranges;
  std::vector<std::string>
      order_by;        // fields, "-" prefix = descending; default id
  int64_t limit = -1;  // < 0: no limit
  int64_t offset = 0;
  // Leave out trials with a collapsed or at-chance model (flags unknown
  // count as not flagged). Default: keep them.
  bool exclude_degenerate = false;
};

// Fluent construction of a TrialQuery:
//   QueryBuilder().Arch("vgg16").Range("lr", 1e-3, 1e-2).MinDivergence(0.3)
//       .OrderBy("-diff").Limit(10).Build()
class QueryBuilder {
 public:
  QueryBuilder& Where(std::string expr);  // and-ed with earlier Where()s
  QueryBuilder& Arch(std::string arch);
  QueryBuilder& Profile(std::string profile);
  QueryBuilder& Status(std::string status);
  QueryBuilder& Range(const std::string& field, double lo, double hi);
  QueryBuilder& MinDivergence(double lo);
  QueryBuilder& MaxDivergence(double hi);
  QueryBuilder& OrderBy(std::string field);
  QueryBuilder& Limit(int64_t n);
  QueryBuilder& Offset(int64_t n);
  QueryBuilder& ExcludeDegenerate(bool on = true);
  TrialQuery Build() const { return q_; }

 private:
  TrialQuery q_;
};

// How Dataset::Near finds the nearest trials. Both plans give the same
// answer; kAuto uses the index whenever it can serve the query (no filters,
// fields among lr, adam_eps, batch_size, epochs, weight_decay), kIndex
// fails (FailedPrecondition) when it cannot, kScan reads every trial.
enum class NearMethod { kAuto, kIndex, kScan };

// Target of a nearest-neighbour query: hyperparameter -> value, e.g. parsed
// from "lr=0.05,adam_eps=0.2,batch_size=200,epochs=20". Distance is Euclidean
// over the given fields after normalising each to [0, 1] by the range of the
// stored values (log10 for lr and adam_eps, whose searches are log-uniform);
// trials missing a given field are skipped. Ties are broken by trial id.
struct NearTarget {
  std::vector<std::pair<std::string, double>> values;
  NearMethod method = NearMethod::kAuto;
};

// Parses "name=value,name=value". Names must be numeric filter fields of
// hyperparameters (not diff/acc_*); errors name the bad item.
Result<NearTarget> ParseNearTarget(const std::string& text);

// True if `field` is a sortable/filterable field name ("-diff" accepted).
bool IsKnownField(const std::string& field);

}  // namespace xw

#endif  // XWIRES_DATASET_QUERY_QUERY_H_
