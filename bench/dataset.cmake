# Benchmarks: dataset.
