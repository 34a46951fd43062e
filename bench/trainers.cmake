# Benchmarks: trainers.
