# Benchmarks: kernels (GEMM and convolution throughput per numerics algorithm).
add_executable(bench_kernels ${CMAKE_CURRENT_LIST_DIR}/bench_kernels.cc)
target_link_libraries(bench_kernels PRIVATE xwires_core benchmark::benchmark)
