// Option parsing shared by CLI commands (train, bundle).
#ifndef XWIRES_API_CLI_TRAIN_COMMON_H_
#define XWIRES_API_CLI_TRAIN_COMMON_H_

#include <string>
#include <vector>

namespace xw::cli {

// "a,b,,c" -> {"a", "b", "c"} (empty items dropped, spaces trimmed).
std::vector<std::string> SplitList(const std::string& list);

}  // namespace xw::cli

#endif  // XWIRES_API_CLI_TRAIN_COMMON_H_
