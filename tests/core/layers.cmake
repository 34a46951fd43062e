# Tests of the layers group (see tests/core/CMakeLists.txt).
