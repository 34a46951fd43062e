# Sources of the data group, added to xwires_core (see src/CMakeLists.txt).
