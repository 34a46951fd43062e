// libFuzzer target: the query filter language (filter::Parse) on arbitrary
// text. It must never crash, overflow the stack, leak or hit undefined
// behaviour, and whatever it accepts must be a condition the store can run:
// as many bound parameters as '?' placeholders outside quoted SQL text, and
// within the documented limits (nesting depth, number of comparisons).
#include <cstddef>
#include <cstdint>
#include <algorithm>
#include <cstdlib>
#include <string>
#include <variant>

#include "dataset/query/filter_parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto c = xw::filter::Parse(text);
  if (!c.ok()) {
    // Refusals are InvalidArgument with a message, never anything else.
    if (c.status().code() != xw::Status::Code::kInvalidArgument) std::abort();
    if (c.status().message().empty()) std::abort();
    return 0;
  }
  // User text never reaches the SQL: every placeholder has its parameter
  // (field SQL is fixed text with no quotes, so '?' counts are exact).
  size_t marks = 0, parens = 0, depth = 0;
  for (const char ch : c->sql) {
    marks += ch == '?';
    if (ch == '(') depth = std::max(depth, ++parens);
    if (ch == ')') {
      if (parens == 0) std::abort();
      --parens;
    }
  }
  if (parens != 0 || marks != c->params.size()) std::abort();
  // Parenthesised 'not' / '(' each add at most 1, and each comparison
  // against a per-profile field its own subquery: bounded by the limits.
  if (depth > 2 * static_cast<size_t>(xw::filter::kMaxNesting) + 4) std::abort();
  return 0;
}
