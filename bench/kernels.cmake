# Benchmarks: kernels (GEMM and convolution throughput per numerics algorithm).
# peak_tile.cc is compiled once per SIMD target (Highway's foreach_target),
# without -march=native, as the dispatched kernels are (xwires_simd).
add_library(bench_peak_tile OBJECT ${CMAKE_CURRENT_LIST_DIR}/peak_tile.cc)
set_target_properties(bench_peak_tile PROPERTIES XWIRES_PORTABLE ON)
target_include_directories(bench_peak_tile PRIVATE ${PROJECT_SOURCE_DIR})
target_compile_definitions(bench_peak_tile PRIVATE
  "HWY_DISABLED_TARGETS=(HWY_SVE|HWY_SVE2|HWY_SVE_256|HWY_SVE2_128|HWY_RVV)")
target_link_libraries(bench_peak_tile PRIVATE hwy::hwy)

add_executable(bench_kernels ${CMAKE_CURRENT_LIST_DIR}/bench_kernels.cc)
target_include_directories(bench_kernels PRIVATE ${PROJECT_SOURCE_DIR})
target_link_libraries(bench_kernels PRIVATE xwires_core bench_peak_tile hwy::hwy
                      benchmark::benchmark)
