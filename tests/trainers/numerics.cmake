# Tests: profiles, optimizers, initializers.
xwires_add_test(trainers_numerics_tests
  SOURCES
    ${CMAKE_CURRENT_LIST_DIR}/profile_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/optimizer_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/init_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/profile_accel_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/loss_scaler_test.cc
  LIBS xwires_trainers nlohmann_json::nlohmann_json)
