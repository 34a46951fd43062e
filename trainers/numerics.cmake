# Profiles, optimizers, initializers: list(APPEND XW_TRAINERS_SOURCES file.cc ...)
