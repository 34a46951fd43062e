// CheckJsonLimits: duplicate keys anywhere (with their path), nesting beyond
// the limit and oversized documents are refused; valid documents within the
// limits pass, including equal keys in different objects.
#include "xwires/core/json_limits.h"

#include <gtest/gtest.h>

#include <string>

namespace xw {
namespace {

std::string Message(const std::string& text, const JsonLimits& limits = {}) {
  Status s = CheckJsonLimits(text, "config", limits);
  EXPECT_FALSE(s.ok()) << text;
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  return s.message();
}

TEST(JsonLimitsTest, AcceptsValidDocumentsWithinTheLimits) {
  EXPECT_TRUE(CheckJsonLimits(R"({"a": 1, "b": {"a": 2}, "c": [{"a": 3}, {"a": 4}]})", "x").ok());
  EXPECT_TRUE(CheckJsonLimits("[]", "x").ok());
  const std::string deep = std::string(64, '[') + std::string(64, ']');
  EXPECT_TRUE(CheckJsonLimits(deep, "x").ok());
}

TEST(JsonLimitsTest, NamesTheDuplicateKeyByItsPath) {
  EXPECT_EQ(Message(R"({"lr": 1, "lr": 0.5})"), "config: duplicate key 'lr'");
  EXPECT_EQ(Message(R"({"train": {"width": 1, "lr": 2, "width": 3}})"),
            "config: duplicate key 'train.width'");
  EXPECT_EQ(Message(R"({"dims": [{"n": 1}, {"n": 2, "n": 3}]})"),
            "config: duplicate key 'dims[1].n'");
}

TEST(JsonLimitsTest, RefusesDeepNestingAndLargeDocuments) {
  const std::string deep = std::string(65, '[') + std::string(65, ']');
  EXPECT_EQ(Message(deep), "config: nested deeper than 64 levels at '" +
                               [] {
                                 std::string p;
                                 for (int i = 0; i < 64; ++i) p += "[0]";
                                 return p;
                               }() + "'");
  const std::string huge = std::string(1000000, '[');  // never parsed into a tree
  EXPECT_NE(Message(huge).find("nested deeper than 64 levels"), std::string::npos);
  JsonLimits small;
  small.max_bytes = 10;
  EXPECT_EQ(Message(R"({"a": "0123456789"})", small),
            "config: 19 bytes, more than the limit of 10");
  EXPECT_NE(Message(R"({"a": )").find("JSON syntax error"), std::string::npos);
}

}  // namespace
}  // namespace xw
