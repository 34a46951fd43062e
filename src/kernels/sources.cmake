# Sources of the kernels group, added to xwires_core (see src/CMakeLists.txt).
