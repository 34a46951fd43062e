# Sources of the kernels group, added to xwires_core (see src/CMakeLists.txt).
# Internal headers are included as "src/kernels/...".
target_sources(xwires_core PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/ordered_gemm.cc
  ${CMAKE_CURRENT_LIST_DIR}/matmul.cc
  ${CMAKE_CURRENT_LIST_DIR}/dense.cc
  ${CMAKE_CURRENT_LIST_DIR}/conv.cc
  ${CMAKE_CURRENT_LIST_DIR}/conv_direct.cc
  ${CMAKE_CURRENT_LIST_DIR}/tap_gather.cc
  ${CMAKE_CURRENT_LIST_DIR}/conv_im2col.cc
  ${CMAKE_CURRENT_LIST_DIR}/conv_implicit.cc
  ${CMAKE_CURRENT_LIST_DIR}/conv_implicit_channels.cc
  ${CMAKE_CURRENT_LIST_DIR}/conv_implicit_exact.cc
  ${CMAKE_CURRENT_LIST_DIR}/conv_winograd.cc
)
target_include_directories(xwires_core PRIVATE ${PROJECT_SOURCE_DIR})
