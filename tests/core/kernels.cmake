# Tests of the kernels group (see tests/core/CMakeLists.txt).
xwires_add_test(kernels_tests
  SOURCES
    ${CMAKE_CURRENT_LIST_DIR}/matmul_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/conv_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/conv_grad_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/conv_filter_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/dense_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/kernel_golden_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/tap_gather_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/scratch_floats_test.cc
  LIBS xwires_core)
# tap_gather_test.cc checks the internal dispatched kernels (src/kernels/),
# scratch_floats_test.cc their scratch buffers (src/scratch_floats.h).
target_include_directories(kernels_tests PRIVATE ${PROJECT_SOURCE_DIR})
