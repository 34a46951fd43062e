# Tests of the data group (see tests/core/CMakeLists.txt).
