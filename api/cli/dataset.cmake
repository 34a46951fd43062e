# xwires CLI: dataset commands (query, stats, top, import-crossedwires, export, show, fsck,
# migrate).
target_sources(xwires PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/cmd_query.cc
  ${CMAKE_CURRENT_LIST_DIR}/cmd_stats.cc
  ${CMAKE_CURRENT_LIST_DIR}/cmd_top.cc
  ${CMAKE_CURRENT_LIST_DIR}/cmd_import.cc
  ${CMAKE_CURRENT_LIST_DIR}/cmd_export.cc
  ${CMAKE_CURRENT_LIST_DIR}/cmd_show.cc
  ${CMAKE_CURRENT_LIST_DIR}/cmd_fsck.cc
  ${CMAKE_CURRENT_LIST_DIR}/cmd_migrate.cc
)
target_link_libraries(xwires PRIVATE xwires_api xwires_dataset)
