# Contribution bundles (issue #6): safe archive reading/writing, manifest and
# trials.json schemas, and bundle create/verify/import/merge on the store.
target_sources(xwires_dataset PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/archive_paths.cc
  ${CMAKE_CURRENT_LIST_DIR}/archive_reader.cc
  ${CMAKE_CURRENT_LIST_DIR}/archive_writer.cc
  ${CMAKE_CURRENT_LIST_DIR}/bundle_sha256.cc
  ${CMAKE_CURRENT_LIST_DIR}/bundle_json.cc
  ${CMAKE_CURRENT_LIST_DIR}/bundle_manifest.cc
  ${CMAKE_CURRENT_LIST_DIR}/bundle_trials.cc
  ${CMAKE_CURRENT_LIST_DIR}/bundle_trials_parse.cc
  ${CMAKE_CURRENT_LIST_DIR}/bundle_analyses.cc
  ${CMAKE_CURRENT_LIST_DIR}/bundle_store.cc
  ${CMAKE_CURRENT_LIST_DIR}/bundle_open.cc
  ${CMAKE_CURRENT_LIST_DIR}/bundle_create.cc
  ${CMAKE_CURRENT_LIST_DIR}/bundle_verify.cc
  ${CMAKE_CURRENT_LIST_DIR}/bundle_import.cc
)
target_link_libraries(xwires_dataset PRIVATE LibArchive::LibArchive OpenSSL::Crypto
                                             nlohmann_json::nlohmann_json)
