# Graph, architectures, training loop: list(APPEND XW_TRAINERS_SOURCES file.cc ...)
