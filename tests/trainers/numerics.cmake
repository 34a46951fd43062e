# Tests: profiles, optimizers, initializers.
