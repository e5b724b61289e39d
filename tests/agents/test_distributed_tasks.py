"""Ray for work past one process (agents/evaluation/distributed.py): tasks in argument order here and on Ray, slices of
games, rule sets that can travel, and how Ray is started or joined. The evaluations' results on Ray are compared
with the local runs in test_distributed.py."""

from __future__ import annotations

import dataclasses
import os
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agents.evaluation import distributed
from agents.evaluation.distributed import EXTRA, RayMissingError, check_sendable_rules, game_slices, run_tasks
from yacht_env.rules import RULE_SETS, YACHT, RuleSet


@given(count=st.integers(0, 500), size=st.integers(1, 60))
def test_slices_cover_the_games_in_order_each_full_but_the_last(count, size):
    slices = game_slices(count, size)
    assert [first for first, _ in slices] == list(range(0, count, size))
    assert sum(length for _, length in slices) == count
    assert all(length == size for _, length in slices[:-1]) and all(0 < length <= size for _, length in slices)


def power(base, exponent):
    return base**exponent


def test_tasks_here_return_in_argument_order_and_report_each_as_it_ends():
    ended = []
    assert run_tasks(power, [(2, 3), (3, 2), (5, 0)], progress=ended.append) == [8, 9, 1]
    assert ended == [0, 1, 2]
    assert run_tasks(power, []) == []


def first_is_last(index, last, folder):
    """Task 0 ends only after task ``last`` has (a file it leaves), whenever Ray starts each: they end out of order."""
    if index == 0:
        deadline = time.monotonic() + 120
        while not (Path(folder) / "last-ended").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
    elif index == last:
        (Path(folder) / "last-ended").write_text("")
    return index * 10


def test_tasks_on_ray_return_in_argument_order_whatever_order_they_end_in(ray_cluster, tmp_path):
    ended = []
    tasks = [(i, 2, str(tmp_path)) for i in range(3)]
    assert run_tasks(first_is_last, tasks, on_ray=True, progress=ended.append) == [0, 10, 20]
    assert sorted(ended) == [0, 1, 2] and ended != [0, 1, 2]  # reported as each ended: the first last
    assert distributed.cluster_cpus() == 2  # the test cluster's


def spell(seconds):
    """When this task ran: ``(start, end)`` on the wall clock."""
    start = time.time()
    time.sleep(seconds)
    return start, time.time()


def test_each_task_on_ray_takes_a_cpu_so_no_more_run_at_once_than_the_cluster_has(ray_cluster):
    spells = run_tasks(spell, [(0.5,)] * 5, on_ray=True)
    most_at_once = max(sum(start <= moment < end for start, end in spells) for moment, _ in spells)
    assert 1 <= most_at_once <= distributed.cluster_cpus() == 2


@pytest.mark.parametrize("name", sorted(RULE_SETS))
def test_a_named_rule_set_can_travel_to_ray_workers(name):
    check_sendable_rules(RULE_SETS[name])


@pytest.mark.parametrize(
    "rules",
    [
        RuleSet("mine", categories=YACHT.categories[:6]),
        dataclasses.replace(YACHT),  # Yacht's name, but not the named rule set itself
    ],
)
def test_a_rule_set_of_ones_own_is_refused_naming_it_and_the_named_ones(rules):
    with pytest.raises(ValueError) as refused:
        check_sendable_rules(rules)
    message = str(refused.value)
    assert message.startswith(f"rule set {rules.name!r} is not one of the named rule sets ({', '.join(RULE_SETS)})")
    assert message.endswith("cannot be sent to Ray workers; play it without Ray")


def test_without_ray_its_import_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` now raises ImportError
    with pytest.raises(RayMissingError) as missing:
        distributed.import_ray()
    assert str(missing.value) == f"this needs Ray, which is not installed: {EXTRA} (or pip install 'yacht-rl[distributed]')"


class Starts:
    """What ``ray.init`` was asked, on a Ray that is not running yet (the real start is test_distributed.py's)."""

    def __init__(self, monkeypatch, refusal: Exception | None = None):
        ray = pytest.importorskip("ray")
        self.calls: list[dict] = []
        self.refusal = refusal
        monkeypatch.setattr(ray, "is_initialized", lambda: False)
        monkeypatch.setattr(ray, "init", self.init)
        monkeypatch.delenv("RAY_ADDRESS", raising=False)

    def init(self, **arguments):
        self.calls.append(arguments)
        if self.refusal is not None:
            raise self.refusal


def test_ray_starts_here_with_the_cpus_asked_for_or_all_of_them(monkeypatch):
    starts = Starts(monkeypatch)
    distributed.connect(num_cpus=3)
    distributed.connect()
    here = {"include_dashboard": False, "log_to_driver": False}
    assert starts.calls == [{"num_cpus": 3, **here}, {"num_cpus": os.cpu_count(), **here}]


def test_an_address_or_ray_address_joins_that_cluster(monkeypatch):
    starts = Starts(monkeypatch)
    distributed.connect("10.0.0.1:6379")
    monkeypatch.setenv("RAY_ADDRESS", "10.0.0.2:6379")
    distributed.connect()
    distributed.connect("10.0.0.3:6379")  # the address given comes first
    assert [call["address"] for call in starts.calls] == ["10.0.0.1:6379", "10.0.0.2:6379", "10.0.0.3:6379"]
    assert all(call == {"address": call["address"], "log_to_driver": False} for call in starts.calls)


@pytest.mark.parametrize("cpus", [4, 0])
def test_cpus_for_a_cluster_are_refused_before_joining_it(monkeypatch, cpus):
    starts = Starts(monkeypatch)
    with pytest.raises(ValueError, match=rf"^--ray-cpus {cpus} is for a local Ray; a cluster \(head:6379\) has the CPUs"):
        distributed.connect("head:6379", num_cpus=cpus)
    assert starts.calls == []


@pytest.mark.parametrize("resources, cpus", [({"CPU": 7.0}, 7), ({"CPU": 0.5}, 1), ({"GPU": 1.0}, 1)])
def test_a_clusters_cpus_are_its_whole_cpus_and_at_least_one(monkeypatch, resources, cpus):
    ray = pytest.importorskip("ray")
    monkeypatch.setattr(ray, "cluster_resources", lambda: resources)
    assert distributed.cluster_cpus() == cpus


@pytest.mark.parametrize(
    "refusal, reason",
    [
        (ConnectionError("no head there\nmore detail"), "no head there"),
        (TimeoutError(), "TimeoutError"),
        (RuntimeError("  \n"), "RuntimeError"),
        (ValueError("bad address"), "bad address"),
    ],
)
def test_a_cluster_that_cannot_be_joined_is_one_line_with_the_first_line_of_why(monkeypatch, refusal, reason):
    Starts(monkeypatch, refusal)
    with pytest.raises(ValueError) as refused:
        distributed.connect("nowhere:1")
    assert str(refused.value) == f"could not join the Ray cluster at 'nowhere:1' (start one with `ray start --head`): {reason}"


def test_a_process_already_connected_is_left_as_it_is(monkeypatch):
    ray = pytest.importorskip("ray")
    monkeypatch.setattr(ray, "is_initialized", lambda: True)
    monkeypatch.setattr(ray, "init", lambda **arguments: pytest.fail(f"ray.init({arguments}) on a connected process"))
    assert distributed.connect("head:6379", num_cpus=4) is ray
