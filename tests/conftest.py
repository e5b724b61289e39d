import os
import shutil
import tempfile

import pytest
from hypothesis import HealthCheck, Phase, settings

# Speed is measured by benchmarks/, never in tests: no per-example deadline, which on a loaded CI
# machine (or on the example that first compiles a numba kernel) fails for reasons that are not bugs.
settings.register_profile("yacht", deadline=None)
# Mutation testing (tools/mutation.py) runs thousands of short sessions: fewer examples, the same ones every
# time (a mutant's verdict must not depend on the draw, and the map of which test reaches which line is taken
# with this profile too), no example database carried from one mutant to the next, no shrinking (one failing
# example kills the mutant) and no health check that fails on a loaded machine's timing rather than on the code.
settings.register_profile(
    "mutation",
    parent=settings.get_profile("yacht"),
    max_examples=20,
    derandomize=True,
    database=None,
    phases=[Phase.explicit, Phase.generate],
    report_multiple_bugs=False,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("YACHT_RL_HYPOTHESIS_PROFILE", "yacht"))

# pytest-xdist's workers set COLUMNS=80 and LINES=24, which the programs the tests start would take for their
# terminal's size (rich and shutil read them first); without them each program sizes its text to its own
# terminal (a pseudo-terminal's dimensions, or none), as in a run without workers.
if os.environ.get("PYTEST_XDIST_WORKER"):
    for name in ("COLUMNS", "LINES"):
        os.environ.pop(name, None)


# Solved tables are cached on disk by rule set and solver source digest (agents.solvers.solution_cache). The tests
# still never read a table another run stored: the run makes a fresh cache folder, which its xdist workers
# and every program the tests start share through the environment. YACHT_RL_TEST_CACHE_DIR names a folder
# to keep instead (tools/mutation.py keeps one across its thousands of short runs; the digest stops a
# mutated solver from reading a table the original solved).
TEST_CACHE_ENV = "YACHT_RL_TEST_CACHE_DIR"
CACHE_ENV = "YACHT_RL_CACHE_DIR"
fresh_cache_key = pytest.StashKey[str]()  # the folder this run made, for pytest_unconfigure to delete


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config, "workerinput"):  # an xdist worker: its controller set the folder before starting it
        return
    kept = os.environ.get(TEST_CACHE_ENV)
    if kept:
        os.environ[CACHE_ENV] = kept
        return
    fresh = tempfile.mkdtemp(prefix="yacht-rl-test-cache-")
    config.stash[fresh_cache_key] = fresh
    os.environ[CACHE_ENV] = fresh


def pytest_unconfigure(config: pytest.Config) -> None:
    fresh = config.stash.get(fresh_cache_key, None)
    if fresh is not None:
        shutil.rmtree(fresh, ignore_errors=True)


@pytest.fixture(scope="module")
def ray_cluster():
    """A local Ray with two CPUs, started once per test module; yields its address for subprocesses to join."""
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray.get_runtime_context().gcs_address
    ray.shutdown()
