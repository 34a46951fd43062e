# Sources of the layers group, added to xwires_core (see src/CMakeLists.txt).
target_sources(xwires_core PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/layer_util.cc
  ${CMAKE_CURRENT_LIST_DIR}/batchnorm.cc
  ${CMAKE_CURRENT_LIST_DIR}/batchnorm_acc64.cc
  ${CMAKE_CURRENT_LIST_DIR}/batchnorm_stats.cc
  ${CMAKE_CURRENT_LIST_DIR}/activation.cc
  ${CMAKE_CURRENT_LIST_DIR}/pooling.cc
  ${CMAKE_CURRENT_LIST_DIR}/dropout.cc
  ${CMAKE_CURRENT_LIST_DIR}/tensor_ops.cc
  ${CMAKE_CURRENT_LIST_DIR}/loss.cc
)
