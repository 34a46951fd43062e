# Tests of contribution bundles: the untrusted-input layer (archive reader,
# manifest parser) and bundle create/verify/import/merge; unrecorded_test:
# imported trials keep "no seed / no parameter count" through every output;
# replica_stats_key_test: statistics rows keyed by first_replica (schema 4)
# through queries, fsck, bundles, merges and the migration from schema 3.
xwires_add_test(bundle_tests
  SOURCES
    bundle_test_util.cc
    bundle_archive_test.cc
    bundle_manifest_test.cc
    bundle_ops_test.cc
    bundle_attack_test.cc
    bundle_analyses_test.cc
    replica_fixtures.cc
    bundle_replicas_test.cc
    replica_stats_key_test.cc
    bundle_cli_test.cc
    dataset_internal_test.cc
    unrecorded_test.cc
  LIBS xwires_dataset xwires_test_support LibArchive::LibArchive OpenSSL::Crypto nlohmann_json::nlohmann_json
       SQLiteCpp)
target_include_directories(bundle_tests PRIVATE ${PROJECT_SOURCE_DIR})
add_dependencies(bundle_tests xwires)  # bundle_cli_test drives the CLI

# libFuzzer smoke run (CI): runs the manifest, archive and filter-language
# fuzzers for 15 s each. They are a separate clang project (tests/fuzz),
# the target xwires_fuzzers here, which scripts/test.sh builds before ctest
# so that the test spends its time fuzzing (not part of `all`: the main job's
# build does not need them); run.sh builds what is missing or stale (a no-op
# after that build) and fails if that build fails. Longer runs:
# tests/fuzz/run.sh DIR 600.
set(XWIRES_FUZZ_DIR ${CMAKE_CURRENT_BINARY_DIR}/fuzz)
find_program(XWIRES_FUZZ_CXX NAMES clang++-14 clang++)
find_program(XWIRES_FUZZ_CC NAMES clang-14 clang)
if(XWIRES_FUZZ_CXX AND XWIRES_FUZZ_CC)
  include(ExternalProject)
  ExternalProject_Add(xwires_fuzzers
    SOURCE_DIR ${PROJECT_SOURCE_DIR}/tests/fuzz
    BINARY_DIR ${XWIRES_FUZZ_DIR}
    CMAKE_ARGS -DCMAKE_BUILD_TYPE=Release
               -DCMAKE_CXX_COMPILER=${XWIRES_FUZZ_CXX} -DCMAKE_C_COMPILER=${XWIRES_FUZZ_CC}
               -DCMAKE_CXX_COMPILER_LAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER}
               -DCMAKE_C_COMPILER_LAUNCHER=${CMAKE_C_COMPILER_LAUNCHER}
    BUILD_ALWAYS ON        # the fuzzers' sources are the library's: let make decide
    EXCLUDE_FROM_ALL ON
    INSTALL_COMMAND "")
endif()
add_test(NAME bundle_fuzz_smoke
  COMMAND bash ${PROJECT_SOURCE_DIR}/tests/fuzz/run.sh ${XWIRES_FUZZ_DIR} 15)
set_tests_properties(bundle_fuzz_smoke PROPERTIES TIMEOUT 900 LABELS fuzz)
