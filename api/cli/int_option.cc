#include "int_option.h"

#include <charconv>
#include <limits>

#include "command.h"

namespace xw::cli {

Result<int64_t> ParseIntOption(const std::string& option, const std::string& text,
                               int64_t lo, int64_t hi) {
  const std::string range = "[" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  int64_t v = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, v, 10);
  if (text.empty() || ec == std::errc::invalid_argument || ptr != end) {
    return Status::InvalidArgument(option + ": '" + text + "' is not an integer (expected " +
                                   range + ")");
  }
  if (ec == std::errc::result_out_of_range && lo == std::numeric_limits<int64_t>::min() &&
      hi == std::numeric_limits<int64_t>::max()) {
    return Status::InvalidArgument(option + ": " + text + " does not fit a 64-bit integer");
  }
  if (ec == std::errc::result_out_of_range || v < lo || v > hi) {
    return Status::InvalidArgument(option + ": " + text + " is out of range " + range);
  }
  return v;
}

namespace {

// The option's name as the user typed it in messages: its long name.
std::string Shown(const std::string& name) {
  const size_t comma = name.find(',');
  return comma == std::string::npos ? name : name.substr(comma + 1);
}

template <typename Store>
CLI::Option* Add(CLI::App* cmd, const std::string& name, int64_t lo, int64_t hi,
                 const std::string& help, Store store, std::string default_text) {
  const std::string shown = Shown(name);
  CLI::Option* opt = cmd->add_option_function<std::string>(
      name,
      [shown, lo, hi, store](const std::string& text) {
        store(Unwrap(ParseIntOption(shown, text, lo, hi)));
      },
      help);
  opt->type_name("INT");
  if (!default_text.empty()) opt->default_str(std::move(default_text));
  return opt;
}

}  // namespace

CLI::Option* AddIntOption(CLI::App* cmd, const std::string& name, int64_t* out, int64_t lo,
                          int64_t hi, const std::string& help) {
  return Add(cmd, name, lo, hi, help, [out](int64_t v) { *out = v; },
                      std::to_string(*out));
}

CLI::Option* AddIntOption(CLI::App* cmd, const std::string& name, int* out, int64_t lo,
                          int64_t hi, const std::string& help) {
  return Add(cmd, name, lo, hi, help, [out](int64_t v) { *out = static_cast<int>(v); },
                  std::to_string(*out));
}

CLI::Option* AddIntOption(CLI::App* cmd, const std::string& name, uint64_t* out, int64_t lo,
                          int64_t hi, const std::string& help) {
  return Add(cmd, name, lo, hi, help,
                       [out](int64_t v) { *out = static_cast<uint64_t>(v); },
                       std::to_string(*out));
}

CLI::Option* AddIntOption(CLI::App* cmd, const std::string& name,
                          std::optional<int64_t>* out, int64_t lo, int64_t hi,
                          const std::string& help) {
  return Add(cmd, name, lo, hi, help, [out](int64_t v) { *out = v; },
                      out->has_value() ? std::to_string(**out) : std::string());
}

}  // namespace xw::cli
