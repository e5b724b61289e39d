"""Ray, for work past one process: local by default, a cluster by address.

Ray is optional (``pip install -e ".[distributed]"``); nothing imports it until a Ray flag is used,
and then a missing install is one line naming the extra. :func:`connect` starts Ray on this
machine with its cores, or joins a running cluster (``ray start --head`` prints the address) when
given an address or ``RAY_ADDRESS``. :func:`run_tasks` runs a function over a list of argument
tuples, in this process or as Ray tasks, and returns the results in the order of the arguments:
callers split their work into slices and merge the results with the same code either way.
"""

from __future__ import annotations

import os
from typing import Callable, Sequence

EXTRA = 'pip install -e ".[distributed]"'


class RayMissingError(RuntimeError):
    """A Ray feature was asked for and Ray is not installed."""


def import_ray():
    """The ``ray`` module, or ``RayMissingError`` naming the extra that installs it."""
    try:
        import ray
    except ImportError:
        raise RayMissingError(
            f"this needs Ray, which is not installed: {EXTRA} (or pip install 'yacht-rl[distributed]')"
        ) from None
    return ray


def connect(address: str | None = None, num_cpus: int | None = None):
    """Start or join Ray once per process; return the ``ray`` module.

    ``address`` (else ``RAY_ADDRESS``) joins that cluster; with neither, Ray starts here with
    ``num_cpus`` CPUs (default: all of this machine's). A process already connected is left as is.
    """
    ray = import_ray()
    if ray.is_initialized():
        return ray
    address = address or os.environ.get("RAY_ADDRESS") or None
    if address:
        if num_cpus is not None:
            raise ValueError(f"--ray-cpus {num_cpus} is for a local Ray; a cluster ({address}) has the CPUs its nodes brought")
        try:
            ray.init(address=address, log_to_driver=False)
        except (ConnectionError, TimeoutError, RuntimeError, ValueError) as error:
            message = (str(error).strip().splitlines() or [type(error).__name__])[0]
            raise ValueError(
                f"could not join the Ray cluster at {address!r} (start one with `ray start --head`): {message}"
            ) from None
    else:
        ray.init(num_cpus=num_cpus or os.cpu_count(), include_dashboard=False, log_to_driver=False)
    return ray


def cluster_cpus() -> int:
    """CPUs of the connected Ray cluster (at least 1)."""
    return max(1, int(import_ray().cluster_resources().get("CPU", 1)))


def run_tasks(
    function: Callable, arguments: Sequence[tuple], on_ray: bool = False, progress: Callable[[int], None] | None = None
) -> list:
    """``[function(*args) for args in arguments]``, here or as Ray tasks (one CPU each), in order.

    ``progress(i)`` is called as task ``i`` finishes (Ray tasks finish in any order).
    """
    results: list = []
    if not on_ray:
        for index, args in enumerate(arguments):
            results.append(function(*args))
            if progress is not None:
                progress(index)
        return results
    ray = import_ray()
    remote = ray.remote(num_cpus=1)(function)
    pending = {remote.remote(*args): index for index, args in enumerate(arguments)}
    results = [None] * len(arguments)
    while pending:
        done, _ = ray.wait(list(pending), num_returns=1)
        index = pending.pop(done[0])
        results[index] = ray.get(done[0])
        if progress is not None:
            progress(index)
    return results


def check_sendable_rules(rules) -> None:
    """``ValueError`` unless ``rules`` can travel to Ray workers: only the named rule sets can.

    A ``RuleSet`` of one's own holds its scoring rules as functions, which pickle cannot copy.
    """
    from yacht_env.rules import RULE_SETS

    if RULE_SETS.get(rules.name) is not rules:
        raise ValueError(
            f"rule set {rules.name!r} is not one of the named rule sets ({', '.join(RULE_SETS)}): its scoring rules "
            "cannot be sent to Ray workers; play it without Ray"
        )


def game_slices(count: int, size: int) -> list[tuple[int, int]]:
    """Consecutive slices ``(first, length)`` of ``count`` games (or deals), each at most ``size`` long."""
    return [(first, min(size, count - first)) for first in range(0, count, size)]
