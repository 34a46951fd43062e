# xwires CLI: conformance with PyTorch and TensorFlow.js (api/conformance.h).
target_sources(xwires PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/cmd_conformance.cc
)
