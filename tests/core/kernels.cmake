# Tests of the kernels group (see tests/core/CMakeLists.txt).
