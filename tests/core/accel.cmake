# Tests of the accelerator-numerics group (see tests/core/CMakeLists.txt).
xwires_add_test(accel_tests
  SOURCES
    ${CMAKE_CURRENT_LIST_DIR}/accel_numerics_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/accel_gemm_test.cc
  LIBS xwires_core)
