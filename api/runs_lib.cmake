# xwires_api: what the CLI and the Python package (issue #14) share to run
# and show training and searches: requests, progress text, result tables.
target_sources(xwires_api PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/output_files.cc
  ${CMAKE_CURRENT_LIST_DIR}/progress_text.cc
  ${CMAKE_CURRENT_LIST_DIR}/query_tables.cc
  ${CMAKE_CURRENT_LIST_DIR}/search_run.cc
  ${CMAKE_CURRENT_LIST_DIR}/train_run.cc
  ${CMAKE_CURRENT_LIST_DIR}/replicate_run.cc
  ${CMAKE_CURRENT_LIST_DIR}/replicate_pool.cc
  ${CMAKE_CURRENT_LIST_DIR}/replicate_wire.cc
  ${CMAKE_CURRENT_LIST_DIR}/replica_tables.cc
)
target_link_libraries(xwires_api PUBLIC xwires_search)
