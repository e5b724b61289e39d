"""The table planner's figures script: paired shares against ``win`` on the same deals, resumed from its file, on Ray."""

from __future__ import annotations

import json

import numpy as np
import pytest

from agents.evaluation.stats import mean_ci
from agents.evaluation.tournament import run_table
from agents.registry import make_table_policy
from benchmarks import planN_figures
from yacht_env.rules import rule_set
from yacht_env.table.outcome import win_shares


def figures_of(tmp_path, *arguments: str) -> dict:
    tmp_path.mkdir(exist_ok=True)
    out = tmp_path / "figures.json"
    assert planN_figures.main([*arguments, "--out", str(out)]) == 0
    return json.loads(out.read_text())


def percent(values, share: bool = True) -> list[float]:
    """A mean and its 95% interval in percent, a share's kept within 0 and 1 (as the script reports them)."""
    return [100 * x for x in mean_ci(values, clip=(0.0, 1.0) if share else None)]


def deal_shares(names: list[str], games: int, seed: int) -> np.ndarray:
    """The first seat's share of each deal, averaged over its seatings, from a tournament played here."""
    rules = rule_set("yacht")
    policies = [make_table_policy(name, len(names), rules=rules) for name in names]
    _, log = run_table(policies, names, games, seed, rules)
    return win_shares(log.totals)[:, 0].reshape(-1, len(names)).mean(axis=1)


def test_each_table_s_shares_and_their_paired_difference_are_those_of_its_deals(tmp_path):
    figures = figures_of(tmp_path, "greedy", "--sizes", "2,3", "--games", "18", "--seed", "41")
    assert list(figures) == ["greedy|yacht|2|18|41", "greedy|yacht|3|18|41"]
    for n in (2, 3):
        table = figures[f"greedy|yacht|{n}|18|41"]
        mine = deal_shares(["greedy"] + ["optimal"] * (n - 1), 18, 41)
        theirs = deal_shares(["win"] + ["optimal"] * (n - 1), 18, 41)
        assert table["games"] == 18 and table["table_size"] == n and table["reference"] == "win"
        assert table["fair_share"] == pytest.approx(100 / n)
        assert table["planner_share"] == pytest.approx(percent(mine))
        assert table["reference_share"] == pytest.approx(percent(theirs))
        assert table["paired_difference"] == pytest.approx(percent(mine - theirs, share=False))
        assert ("head_to_head_vs_win" in table) == (n == 2)
    head = deal_shares(["greedy", "win"], 18, 41)
    assert figures["greedy|yacht|2|18|41"]["head_to_head_vs_win"] == pytest.approx(percent(head))


def test_under_bonus_rules_the_reference_is_optimal_at_exactly_the_fair_share(tmp_path):
    figures = figures_of(tmp_path, "greedy", "--rules", "yatzy", "--sizes", "3", "--games", "12", "--seed", "7")
    table = figures["greedy|yatzy|3|12|7"]
    assert table["reference"] == "optimal" and table["reference_share"] == pytest.approx([100 / 3] * 3)
    assert table["paired_difference"][0] == pytest.approx(table["planner_share"][0] - 100 / 3)
    assert "head_to_head_vs_win" not in table and "loss_per_game_pp" not in table


def test_a_rerun_plays_only_the_tables_its_file_lacks(tmp_path, monkeypatch):
    first = figures_of(tmp_path, "greedy", "--sizes", "2", "--games", "8", "--seed", "3")
    played = []
    real = planN_figures.table_figures
    monkeypatch.setattr(planN_figures, "table_figures", lambda *args, **kw: played.append(args[2]) or real(*args, **kw))
    again = figures_of(tmp_path, "greedy", "--sizes", "2,3", "--games", "8", "--seed", "3")
    assert played == [3] and again["greedy|yacht|2|8|3"] == first["greedy|yacht|2|8|3"]


def test_with_ray_every_tournament_is_handed_to_ray_by_name(tmp_path, monkeypatch):
    connected, calls = [], []

    def fake_run_table(policies, names, games, seed, rules, grade=False, on_ray=False):
        calls.append((list(policies), on_ray))
        return run_table([make_table_policy(name, len(names), rules=rules) for name in names], names, games, seed, rules)

    monkeypatch.setattr(planN_figures, "connect", lambda: connected.append(True))
    monkeypatch.setattr(planN_figures, "run_table", fake_run_table)
    figures_of(tmp_path, "greedy", "--sizes", "2", "--games", "8", "--seed", "3", "--ray")
    assert connected == [True]
    assert calls == [(["greedy", "optimal"], True), (["win", "optimal"], True), (["greedy", "win"], True)]


def test_without_ray_installed_it_says_so_in_one_line_and_plays_nothing(tmp_path, monkeypatch, capsys):
    def missing():
        raise planN_figures.RayMissingError("this needs Ray, which is not installed")

    monkeypatch.setattr(planN_figures, "connect", missing)
    out = tmp_path / "figures.json"
    assert planN_figures.main(["greedy", "--sizes", "2", "--games", "8", "--ray", "--out", str(out)]) == 2
    assert capsys.readouterr().err == "planN_figures: this needs Ray, which is not installed\n"
    assert not out.exists()


@pytest.mark.slow
def test_on_a_local_ray_the_figures_are_those_played_here(tmp_path):
    here = figures_of(tmp_path / "here", "greedy", "--sizes", "2,3", "--games", "24", "--seed", "11")
    on_ray = figures_of(tmp_path / "ray", "greedy", "--sizes", "2,3", "--games", "24", "--seed", "11", "--ray")
    assert list(on_ray) == list(here)
    for key, table in here.items():
        assert set(on_ray[key]) == set(table)
        for name, value in table.items():
            if name != "planner_seconds":
                assert on_ray[key][name] == (pytest.approx(value) if isinstance(value, list) else value), (key, name)
