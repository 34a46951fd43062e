#include "xwires/dataset/query/isa_pooling.h"

#include <map>
#include <nlohmann/json.hpp>

namespace xw {

Result<std::vector<IsaMixedProfile>> FindIsaMixedProfiles(const Dataset& ds,
                                                          const TrialQuery& q) {
  TrialQuery all = q;
  all.limit = -1;
  XW_ASSIGN_OR_RETURN(const std::vector<TrialRow> trials, ds.Query(all));
  std::map<std::string, std::map<std::string, int64_t>> by_profile;
  for (const TrialRow& t : trials) {
    for (const ModelRow& m : t.models) {
      const auto fp = nlohmann::json::parse(m.fingerprint_json, nullptr, false);
      if (!fp.is_object() || !fp.value("isa_dependent", false)) continue;
      const std::string key =
          fp.value("isa", std::string("?")) + " / " + fp.value("kernel_target", std::string("?"));
      ++by_profile[m.profile][key];
    }
  }
  std::vector<IsaMixedProfile> out;
  for (const auto& [profile, targets] : by_profile) {
    if (targets.size() < 2) continue;
    out.push_back({profile, {targets.begin(), targets.end()}});
  }
  return out;
}

std::string IsaMixedWarning(const IsaMixedProfile& p) {
  int64_t models = 0;
  std::string list;
  for (const auto& [key, n] : p.targets) {
    models += n;
    list += (list.empty() ? "" : ", ") + key + " (" + std::to_string(n) + ")";
  }
  return "warning: profile '" + p.profile + "' has ISA-dependent kernels (isa_dependent) and its " +
         std::to_string(models) + " models were computed on different SIMD targets: " + list +
         "; its accuracies and divergences mix CPUs";
}

}  // namespace xw
