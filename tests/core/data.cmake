# Tests of the data group (see tests/core/CMakeLists.txt).
xwires_add_test(data_tests
  SOURCES data_cifar_test.cc data_idx_test.cc data_synthetic_test.cc
  LIBS xwires_core ZLIB::ZLIB GTest::gmock)
