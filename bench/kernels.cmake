# Benchmarks: kernels.
