"""Fixtures shared by the agents' tests."""

import pytest


@pytest.fixture
def one_torch_thread():
    """Torch on one thread for the test: the networks of these tests are tiny, and more threads only contend."""
    torch = pytest.importorskip("torch")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
