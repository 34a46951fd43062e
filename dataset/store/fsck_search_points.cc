#include "fsck_search_points.h"

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>

namespace xw {

void CheckSearchPoints(SQLite::Database& db, FsckReport& r) {
  // (search, subspace, point as JSON text) -> first trial; likewise
  // (search, completed pending row) -> first trial.
  std::map<std::tuple<int64_t, int64_t, std::string>, int64_t> points;
  std::map<std::pair<int64_t, int64_t>, int64_t> completes;
  SQLite::Statement st(db,
                       "SELECT id, search_id, extra_json FROM trials WHERE "
                       "search_id IS NOT NULL AND status != 'pending' "
                       "ORDER BY id");
  while (st.executeStep()) {
    const int64_t id = st.getColumn(0).getInt64();
    const int64_t search = st.getColumn(1).getInt64();
    auto j = nlohmann::json::parse(st.getColumn(2).getString(), nullptr, false);
    if (!j.is_object() || !j.contains("search") || !j["search"].is_object())
      continue;  // not written by the search driver
    const auto& s = j["search"];
    const std::string what = "search " + std::to_string(search) + ": trials ";
    if (s.contains("subspace") && s["subspace"].is_number_integer() &&
        s.contains("point") && s["point"].is_array()) {
      auto key = std::make_tuple(search, s["subspace"].get<int64_t>(),
                                 s["point"].dump());
      auto [it, added] = points.emplace(key, id);
      if (!added) {
        r.issues.push_back({"duplicate-point", "xwires.db", id,
                            what + std::to_string(it->second) + " and " +
                                std::to_string(id) + " train the same point " +
                                std::get<2>(key) + " of subspace " +
                                std::to_string(std::get<1>(key)) +
                                " (two writers ran the search)"});
        continue;
      }
    }
    if (s.contains("pending_trial") && s["pending_trial"].is_number_integer()) {
      const int64_t pending = s["pending_trial"].get<int64_t>();
      auto [it, added] = completes.emplace(std::make_pair(search, pending), id);
      if (!added) {
        r.issues.push_back({"duplicate-point", "xwires.db", id,
                            what + std::to_string(it->second) + " and " +
                                std::to_string(id) +
                                " both complete pending trial " +
                                std::to_string(pending) +
                                " (two writers ran the search)"});
      }
    }
  }
}

}  // namespace xw
