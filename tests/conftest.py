import pytest
from hypothesis import settings

# Speed is measured by benchmarks/, never in tests: no per-example deadline, which on a loaded CI
# machine (or on the example that first compiles a numba kernel) fails for reasons that are not bugs.
settings.register_profile("yacht", deadline=None)
settings.load_profile("yacht")


@pytest.fixture(scope="module")
def ray_cluster():
    """A local Ray with two CPUs, started once per test module; yields its address for subprocesses to join."""
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray.get_runtime_context().gcs_address
    ray.shutdown()
