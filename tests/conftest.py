from hypothesis import settings

# Speed is measured by benchmarks/, never in tests: no per-example deadline, which on a loaded CI
# machine (or on the example that first compiles a numba kernel) fails for reasons that are not bugs.
settings.register_profile("yacht", deadline=None)
settings.load_profile("yacht")
