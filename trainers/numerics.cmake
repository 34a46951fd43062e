# Profiles, optimizers, initializers: list(APPEND XW_TRAINERS_SOURCES file.cc ...)
list(APPEND XW_TRAINERS_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/profile.cc
  ${CMAKE_CURRENT_LIST_DIR}/profile_accel.cc
  ${CMAKE_CURRENT_LIST_DIR}/loss_scaler.cc
  ${CMAKE_CURRENT_LIST_DIR}/optimizer.cc
  ${CMAKE_CURRENT_LIST_DIR}/init.cc)
