# Tests: graph, architectures, training loop, CLI train/predict.
