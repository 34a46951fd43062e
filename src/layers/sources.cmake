# Sources of the layers group, added to xwires_core (see src/CMakeLists.txt).
