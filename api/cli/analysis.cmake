# xwires CLI: analysis commands (compare, attribute, mi, report; issue #7).
target_sources(xwires PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/cmd_mi.cc
  ${CMAKE_CURRENT_LIST_DIR}/cmd_compare.cc
  ${CMAKE_CURRENT_LIST_DIR}/cmd_attribute.cc
  ${CMAKE_CURRENT_LIST_DIR}/cmd_report.cc
)
target_link_libraries(xwires PRIVATE xwires_api xwires_dataset)
