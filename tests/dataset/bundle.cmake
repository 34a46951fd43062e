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

# libFuzzer smoke run (CI): builds tests/fuzz with clang and runs the manifest,
# archive and filter-language fuzzers for 15 s each. Longer runs:
# tests/fuzz/run.sh DIR 600.
add_test(NAME bundle_fuzz_smoke
  COMMAND bash ${PROJECT_SOURCE_DIR}/tests/fuzz/run.sh ${CMAKE_CURRENT_BINARY_DIR}/fuzz 15)
set_tests_properties(bundle_fuzz_smoke PROPERTIES TIMEOUT 900 LABELS fuzz)
