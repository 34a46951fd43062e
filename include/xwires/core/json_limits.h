// Limits on the JSON documents users hand in (search configs, profiles):
// nlohmann::json accepts any nesting depth and keeps the last of duplicate
// keys without a word, so `{"lr": 1, "lr": 0.5}` would silently mean 0.5 and
// a document of 100,000 nested brackets would build (and later recurse
// through) a 100,000-deep tree. Every config reader checks its text here
// first. Plain function; thread-safe.
#ifndef XWIRES_CORE_JSON_LIMITS_H_
#define XWIRES_CORE_JSON_LIMITS_H_

#include <string>
#include <string_view>

#include "xwires/core/status.h"

namespace xw {

struct JsonLimits {
  // Deepest nesting of objects and arrays (the document's own object is
  // depth 1). Configs and profiles need 4.
  int max_depth = 64;
  // Largest document, in bytes.
  size_t max_bytes = size_t{16} << 20;
};

// OK when `text` is syntactically valid JSON within `limits` whose objects
// have no repeated key; else InvalidArgument "<what>: ..." naming the
// duplicate key with its path ("train.lr"), the depth or the size. A syntax
// error is reported too (the caller's parser may word it better: call this
// after parsing or let it speak).
Status CheckJsonLimits(std::string_view text, const std::string& what,
                       const JsonLimits& limits = {});

}  // namespace xw

#endif  // XWIRES_CORE_JSON_LIMITS_H_
