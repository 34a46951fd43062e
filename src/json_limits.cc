#include "xwires/core/json_limits.h"

#include <nlohmann/json.hpp>
#include <set>
#include <vector>

namespace xw {
namespace {

using json = nlohmann::json;

// A SAX pass that builds no tree: one frame per open object or array, with
// the keys seen so far (objects) or the element index (arrays) for the path.
class LimitsSax : public nlohmann::json_sax<json> {
 public:
  LimitsSax(const std::string& what, const JsonLimits& limits)
      : what_(what), limits_(limits) {}

  Status status() const { return status_; }

  bool null() override { return Value(); }
  bool boolean(bool) override { return Value(); }
  bool number_integer(number_integer_t) override { return Value(); }
  bool number_unsigned(number_unsigned_t) override { return Value(); }
  bool number_float(number_float_t, const string_t&) override { return Value(); }
  bool string(string_t&) override { return Value(); }
  bool binary(binary_t&) override { return Value(); }
  bool start_object(std::size_t) override { return Open(true); }
  bool end_object() override { return Close(); }
  bool start_array(std::size_t) override { return Open(false); }
  bool end_array() override { return Close(); }
  bool key(string_t& k) override {
    Frame& f = frames_.back();
    f.key = k;
    if (!f.keys.insert(k).second) {
      return Fail("duplicate key '" + Path() + "'");
    }
    return true;
  }
  bool parse_error(std::size_t byte, const std::string&,
                   const nlohmann::detail::exception& e) override {
    return Fail("JSON syntax error at byte " + std::to_string(byte) + ": " + e.what());
  }

 private:
  struct Frame {
    bool object = false;
    std::set<std::string> keys;
    std::string key;
    size_t index = 0;
  };

  // A scalar or a closed container ends one element of an enclosing array.
  bool Value() {
    if (!frames_.empty() && !frames_.back().object) ++frames_.back().index;
    return true;
  }
  bool Open(bool object) {
    if (static_cast<int>(frames_.size()) >= limits_.max_depth) {
      return Fail("nested deeper than " + std::to_string(limits_.max_depth) +
                  " levels at '" + Path() + "'");
    }
    frames_.push_back(Frame{object, {}, {}, 0});
    return true;
  }
  bool Close() {
    frames_.pop_back();
    return Value();
  }
  std::string Path() const {
    std::string p;
    for (const Frame& f : frames_) {
      if (f.object) {
        p += (p.empty() ? "" : ".") + f.key;
      } else {
        p += "[" + std::to_string(f.index) + "]";
      }
    }
    return p.empty() ? "document" : p;
  }
  bool Fail(const std::string& message) {
    if (status_.ok()) status_ = Status::InvalidArgument(what_ + ": " + message);
    return false;
  }

  const std::string& what_;
  const JsonLimits& limits_;
  std::vector<Frame> frames_;
  Status status_;
};

}  // namespace

Status CheckJsonLimits(std::string_view text, const std::string& what,
                       const JsonLimits& limits) {
  if (text.size() > limits.max_bytes) {
    return Status::InvalidArgument(what + ": " + std::to_string(text.size()) +
                                   " bytes, more than the limit of " +
                                   std::to_string(limits.max_bytes));
  }
  LimitsSax sax(what, limits);
  json::sax_parse(text.begin(), text.end(), &sax, json::input_format_t::json,
                  /*strict=*/true, /*ignore_comments=*/false);
  return sax.status();
}

}  // namespace xw
