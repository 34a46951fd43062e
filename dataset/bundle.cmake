# Contribution bundles (issue #6): safe archive reading/writing, manifest
# schema, and bundle create/verify/import/merge on top of the store.
target_sources(xwires_dataset PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/archive_paths.cc
  ${CMAKE_CURRENT_LIST_DIR}/archive_reader.cc
  ${CMAKE_CURRENT_LIST_DIR}/archive_writer.cc
  ${CMAKE_CURRENT_LIST_DIR}/bundle_manifest.cc
  ${CMAKE_CURRENT_LIST_DIR}/bundle_sha256.cc
)
target_link_libraries(xwires_dataset PRIVATE LibArchive::LibArchive OpenSSL::Crypto
                                             nlohmann_json::nlohmann_json)
