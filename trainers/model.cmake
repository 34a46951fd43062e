# Graph, architectures, training loop: list(APPEND XW_TRAINERS_SOURCES file.cc ...)
list(APPEND XW_TRAINERS_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/module.cc
  ${CMAKE_CURRENT_LIST_DIR}/layers.cc
  ${CMAKE_CURRENT_LIST_DIR}/blocks.cc
  ${CMAKE_CURRENT_LIST_DIR}/model.cc
  ${CMAKE_CURRENT_LIST_DIR}/architectures.cc
  ${CMAKE_CURRENT_LIST_DIR}/trainer.cc
  ${CMAKE_CURRENT_LIST_DIR}/metrics.cc
  ${CMAKE_CURRENT_LIST_DIR}/replica.cc
)
list(APPEND XW_TRAINERS_SOURCES ${CMAKE_CURRENT_LIST_DIR}/capture.cc)  # per-module activations (analysis, issue #7)
