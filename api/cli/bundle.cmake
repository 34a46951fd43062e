# xwires CLI: bundle create/verify/import and merge (issue #6).
target_sources(xwires PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/cmd_bundle.cc
  ${CMAKE_CURRENT_LIST_DIR}/cmd_merge.cc
  ${CMAKE_CURRENT_LIST_DIR}/bundle_checkers.cc
)
target_link_libraries(xwires PRIVATE xwires_dataset xwires_trainers xwires_hpo
                                     nlohmann_json::nlohmann_json)
