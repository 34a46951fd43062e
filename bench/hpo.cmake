# Benchmarks: hpo.
