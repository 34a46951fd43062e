# Benchmarks: hpo (GP optimizer suggest time; bench/gp_sklearn_peer.py runs it
# side by side with scikit-learn's GaussianProcessRegressor).
add_executable(bench_hpo ${CMAKE_CURRENT_LIST_DIR}/bench_hpo.cc)
target_link_libraries(bench_hpo PRIVATE xwires_hpo benchmark::benchmark)
# tests/hpo/test_functions.h (Hartmann6) is shared with the hpo tests.
target_include_directories(bench_hpo PRIVATE ${PROJECT_SOURCE_DIR})
