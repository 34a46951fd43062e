# Tests of the accelerator-numerics group (see tests/core/CMakeLists.txt).
xwires_add_test(accel_tests
  SOURCES
    ${CMAKE_CURRENT_LIST_DIR}/accel_numerics_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/accel_gemm_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/accel_panel_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/matmul_rounding_test.cc
  LIBS xwires_core)
# accel_panel_test includes the internal src/accel/accel_gemm.h.
target_include_directories(accel_tests PRIVATE ${PROJECT_SOURCE_DIR})
