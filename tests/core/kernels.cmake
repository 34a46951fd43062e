# Tests of the kernels group (see tests/core/CMakeLists.txt).
xwires_add_test(kernels_tests
  SOURCES
    ${CMAKE_CURRENT_LIST_DIR}/matmul_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/conv_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/conv_grad_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/conv_filter_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/dense_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/kernel_golden_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/tap_gather_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/scratch_floats_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/fma_emu_test.cc
  LIBS xwires_core)
# tap_gather_test.cc checks the internal dispatched kernels (src/kernels/),
# scratch_floats_test.cc their scratch buffers (src/scratch_floats.h),
# fma_emu_test.cc their fused multiply-add (src/kernels/fma_emu-inl.h).
target_include_directories(kernels_tests PRIVATE ${PROJECT_SOURCE_DIR})
# The implicit-GEMM drivers' prefetches survive compilation (they change no
# bits, so only their instructions show them): x86 objects from GCC, read
# with objdump where it is installed.
find_program(XWIRES_OBJDUMP objdump)
if(XWIRES_OBJDUMP AND CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64"
   AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  add_test(NAME kernels_prefetch_kept
    COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/prefetch_kept_test.sh ${XWIRES_OBJDUMP}
            "$<TARGET_OBJECTS:xwires_simd>"
    COMMAND_EXPAND_LISTS)
endif()
