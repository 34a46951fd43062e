# xwires_api: conformance of the profiles with the frameworks they model,
# run against PyTorch and TensorFlow.js in subprocesses (api/conformance.h).
target_sources(xwires_api PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/conformance.cc
  ${CMAKE_CURRENT_LIST_DIR}/conformance_exchange.cc
  ${CMAKE_CURRENT_LIST_DIR}/conformance_growth.cc
  ${CMAKE_CURRENT_LIST_DIR}/conformance_setup.cc
  ${CMAKE_CURRENT_LIST_DIR}/conformance_shadow.cc
)
# The default source tree (scripts/make_digits.py, tests/conformance/).
set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/conformance.cc PROPERTIES
  COMPILE_DEFINITIONS "XWIRES_CONFORMANCE_SOURCE_DIR=\"${PROJECT_SOURCE_DIR}\"")
