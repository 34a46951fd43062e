# Sources of the data group, added to xwires_core (see src/CMakeLists.txt).
target_sources(xwires_core PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/byte_reader.cc
  ${CMAKE_CURRENT_LIST_DIR}/cifar.cc
  ${CMAKE_CURRENT_LIST_DIR}/idx.cc
  ${CMAKE_CURRENT_LIST_DIR}/synthetic.cc
  ${CMAKE_CURRENT_LIST_DIR}/synthetic_shapes.cc
  ${CMAKE_CURRENT_LIST_DIR}/data_spec.cc)
