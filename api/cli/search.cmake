# xwires CLI: search commands. target_sources(xwires PRIVATE ...) and target_link_libraries(xwires PRIVATE ...).
target_sources(xwires PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/cmd_search.cc
  ${CMAKE_CURRENT_LIST_DIR}/cmd_searches.cc
)
target_link_libraries(xwires PRIVATE xwires_api xwires_search xwires_dataset)
