# xwires CLI: replicate (replicas and their verdicts, docs/significance.md).
target_sources(xwires PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/cmd_replicate.cc
)
target_link_libraries(xwires PRIVATE xwires_api xwires_search xwires_trainers xwires_dataset)
