# Tests: graph, architectures, training loop, CLI train/predict.
xwires_add_test(trainers_model_tests
  SOURCES
    ${CMAKE_CURRENT_LIST_DIR}/arch_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/graph_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/train_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/parity_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/golden_bits_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/accel_golden_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/train_cli_test.cc
  LIBS xwires_trainers xwires_dataset xwires_test_support nlohmann_json::nlohmann_json)
# grad_check.h is shared with the core tests.
target_include_directories(trainers_model_tests PRIVATE ${PROJECT_SOURCE_DIR}/tests/core)
# The CLI tests run ${XWIRES_BINARY_DIR}/xwires, built by the default target.
# Replicas: perturbation families, golden replica hashes on every target.
xwires_add_test(trainers_replica_tests
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/replica_test.cc
  LIBS xwires_trainers xwires_dataset nlohmann_json::nlohmann_json)
