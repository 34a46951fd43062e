# Sources of the kernels group, added to xwires_core (see src/CMakeLists.txt).
# Internal headers are included as "src/kernels/...".
target_sources(xwires_core PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/matmul.cc
  ${CMAKE_CURRENT_LIST_DIR}/dense.cc
  ${CMAKE_CURRENT_LIST_DIR}/conv.cc
  ${CMAKE_CURRENT_LIST_DIR}/conv_direct.cc
  ${CMAKE_CURRENT_LIST_DIR}/conv_im2col.cc
  ${CMAKE_CURRENT_LIST_DIR}/conv_padding_free.cc
  ${CMAKE_CURRENT_LIST_DIR}/conv_padding_free_filter.cc
  ${CMAKE_CURRENT_LIST_DIR}/conv_winograd.cc
  ${CMAKE_CURRENT_LIST_DIR}/implicit_layout.cc
)
target_include_directories(xwires_core PRIVATE ${PROJECT_SOURCE_DIR})
# matmul.cc holds every Eigen GEMM (the tf profile's products). Eigen's gebp
# kernel is hand-scheduled intrinsics, and GCC's AMD Zen scheduling models
# (-mtune=znver2/znver3, which -march=native picks on Zen 2-4) slow it by
# 20-30%: measured on a Zen 4, one thread, 128 x 512 x 3072, 75 GFLOP/s
# under -march=native against 96 with -mtune=generic added (AVX2 code: 67
# under -march=znver3 against 100 under -march=haswell). Tuning reorders
# instructions only (-ffp-contract=off holds everywhere), so the bits stay.
if(XWIRES_NATIVE AND CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
  set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/matmul.cc PROPERTIES
                              COMPILE_OPTIONS "-mtune=generic")
endif()

# The Highway-dispatched kernels: each file includes "hwy/foreach_target.h",
# so it is compiled once per SIMD target of the architecture (x86: AVX-512,
# AVX2, SSE4, SSSE3, scalar; ARM: NEON, scalar) and HWY_DYNAMIC_DISPATCH picks
# the CPU's best at run time. XWIRES_PORTABLE keeps -march=native off these
# files, so a native build dispatches exactly like the portable one.
add_library(xwires_simd OBJECT
  ${CMAKE_CURRENT_LIST_DIR}/simd_target.cc
  ${CMAKE_CURRENT_LIST_DIR}/ordered_gemm.cc
  ${CMAKE_CURRENT_LIST_DIR}/reduce_block.cc
  ${CMAKE_CURRENT_LIST_DIR}/reduce_lanes.cc
  ${CMAKE_CURRENT_LIST_DIR}/channel_chains.cc
  ${CMAKE_CURRENT_LIST_DIR}/conv_implicit.cc
  ${CMAKE_CURRENT_LIST_DIR}/conv_implicit_exact.cc
  ${CMAKE_CURRENT_LIST_DIR}/conv_filter_lanes.cc
  ${CMAKE_CURRENT_LIST_DIR}/conv_implicit_channels.cc
  ${CMAKE_CURRENT_LIST_DIR}/tap_gather.cc
  ${CMAKE_CURRENT_LIST_DIR}/col2im.cc
  ${CMAKE_CURRENT_LIST_DIR}/transpose.cc
  ${CMAKE_CURRENT_LIST_DIR}/winograd_tiles.cc
  ${CMAKE_CURRENT_LIST_DIR}/pool_tiles.cc
  ${CMAKE_CURRENT_LIST_DIR}/fma_lanes.cc
)
set_target_properties(xwires_simd PROPERTIES XWIRES_PORTABLE ON)
target_include_directories(xwires_simd PRIVATE ${PROJECT_SOURCE_DIR}
                           ${PROJECT_SOURCE_DIR}/include)
# SVE and RVV vectors are sizeless and cannot live in the tiles' register
# arrays; those ARM/RISC-V machines run the NEON or scalar code.
target_compile_definitions(xwires_simd PRIVATE
  "HWY_DISABLED_TARGETS=(HWY_SVE|HWY_SVE2|HWY_SVE_256|HWY_SVE2_128|HWY_RVV)")
target_link_libraries(xwires_simd PRIVATE hwy::hwy)
target_link_libraries(xwires_core PRIVATE xwires_simd hwy::hwy)
