# Sources of the accelerator-numerics group (TF32/bf16/fp16 operands, the
# tensor-core model, split-K, scatter orders), added to xwires_core.
target_sources(xwires_core PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/accel_numerics.cc
  ${CMAKE_CURRENT_LIST_DIR}/accel_conv.cc
  ${CMAKE_CURRENT_LIST_DIR}/accel_matmul.cc
  ${CMAKE_CURRENT_LIST_DIR}/accel_gemm.cc
  ${CMAKE_CURRENT_LIST_DIR}/accel_patches.cc
  ${CMAKE_CURRENT_LIST_DIR}/operand_cache.cc
)
# The tensor-core panels and the operand rounding, compiled once per SIMD target (see
# src/kernels/sources.cmake for the dispatch and its disabled targets).
target_sources(xwires_simd PRIVATE ${CMAKE_CURRENT_LIST_DIR}/accel_tiles.cc
                                   ${CMAKE_CURRENT_LIST_DIR}/tc_block_tiles.cc
                                   ${CMAKE_CURRENT_LIST_DIR}/round_lanes.cc)
