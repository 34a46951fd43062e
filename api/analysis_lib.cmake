# xwires_api: the analysis facade (issue #7): three-tier pair comparison,
# divergence attribution, mutual information and the HTML report.
add_library(xwires_api
  ${CMAKE_CURRENT_LIST_DIR}/mutual_info.cc
  ${CMAKE_CURRENT_LIST_DIR}/mi_analysis.cc
  ${CMAKE_CURRENT_LIST_DIR}/analysis_store.cc
  ${CMAKE_CURRENT_LIST_DIR}/trial_setup.cc
  ${CMAKE_CURRENT_LIST_DIR}/compare.cc
  ${CMAKE_CURRENT_LIST_DIR}/compare_format.cc
  ${CMAKE_CURRENT_LIST_DIR}/attribute.cc
  ${CMAKE_CURRENT_LIST_DIR}/attribute_summary.cc
  ${CMAKE_CURRENT_LIST_DIR}/kde.cc
  ${CMAKE_CURRENT_LIST_DIR}/svg_plot.cc
  ${CMAKE_CURRENT_LIST_DIR}/report.cc
  ${CMAKE_CURRENT_LIST_DIR}/report_plots.cc
  ${CMAKE_CURRENT_LIST_DIR}/report_runs.cc
  ${CMAKE_CURRENT_LIST_DIR}/report_searches.cc
  ${CMAKE_CURRENT_LIST_DIR}/report_replicas.cc
)
target_include_directories(xwires_api PUBLIC ${PROJECT_SOURCE_DIR}/include)
target_include_directories(xwires_api PRIVATE ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(xwires_api
  PUBLIC xwires_core xwires_dataset xwires_trainers
  PRIVATE nlohmann_json::nlohmann_json SQLiteCpp SQLite::SQLite3)
