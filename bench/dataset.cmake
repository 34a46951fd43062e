# Benchmarks: dataset (1,000,000 synthetic trials: bulk insert, range queries,
# nearest neighbours). bench/dataset_pandas_compare.py runs the same filter
# the way the original CrossedWires API did (pandas over a CSV) for a ratio.
add_executable(bench_dataset ${CMAKE_CURRENT_LIST_DIR}/bench_dataset.cc)
target_link_libraries(bench_dataset PRIVATE xwires_dataset benchmark::benchmark)
