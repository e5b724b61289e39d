"""The benchmark's tracks (agents.benchmark.tracks) are the protocol the leaderboard page publishes, and fixed."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from agents.benchmark.tracks import TRACKS, TRAINING_SEEDS, track
from yacht_env.echo import echoed

PAGE = (Path(__file__).resolve().parents[2] / "docs" / "leaderboard.md").read_text()
TABLE = {"alone": 1, "two seats, against `optimal`": 2}


def number(text: str) -> int:
    return int(text.replace(",", ""))


def published_tracks() -> dict[str, tuple]:
    """``{name: (rules, seats, budget, games, optimum as published)}`` of the page's table of tracks."""
    found = {}
    for row in re.findall(r"^\| (`[a-z]+-\w+-1m`, `[a-z]+-\w+-10m`) \| (.+?) \|$", PAGE, re.MULTILINE):
        names = re.findall(r"`([^`]+)`", row[0])
        rules, table, budgets, evaluation, optimum = row[1].split(" | ")
        games = number(evaluation.split(" games")[0])
        for name, budget in zip(names, budgets.split(" / ")):
            found[name] = (rules.lower(), TABLE[table], number(budget), games, optimum)
    return found


def test_the_ranked_tracks_are_those_the_leaderboard_publishes():
    published = published_tracks()
    ranked = {name: fixed for name, fixed in TRACKS.items() if fixed.ranked}
    assert sorted(published) == sorted(ranked)
    for name, (rules, seats, budget, games, optimum) in published.items():
        fixed = ranked[name]
        assert (fixed.name, fixed.rules, fixed.seats, fixed.budget, fixed.games) == (name, rules, seats, budget, games)
        assert fixed.metric == ("score" if seats == 1 else "win_share")
        if seats == 2:  # the best response's exact chance of winning, both seatings' mean
            assert optimum == f"{100 * fixed.optimum():.4f}% of wins (exact)"


def test_the_smoke_tracks_are_the_page_s_steps_and_games_and_never_ranked():
    steps, games = re.search(r"The smoke tracks \(`yacht-solo-20k`, \.\.\., ([0-9,]+) steps, ([0-9,]+) games\)", PAGE).groups()
    smoke = [fixed for fixed in TRACKS.values() if not fixed.ranked]
    assert sorted(fixed.name for fixed in smoke) == sorted(
        name.replace("-1m", "-20k") for name in published_tracks() if "-1m" in name
    )
    assert {(fixed.budget, fixed.games) for fixed in smoke} == {(number(steps), number(games))}


def test_evaluation_deals_start_at_the_published_seed_above_every_training_seed():
    seeds = re.search(
        r"Every track is trained from the seeds ([0-9, and]+), and evaluated .* seed `([0-9,]+) \+ g`", PAGE, re.DOTALL
    )
    trained = [int(seed) for seed in re.findall(r"\d+", seeds[1])]
    assert tuple(trained) == TRAINING_SEEDS
    assert {fixed.eval_seed for fixed in TRACKS.values()} == {number(seeds[2])} and number(seeds[2]) >= 2**32


def test_a_track_cannot_be_changed_by_a_run_that_reads_it():
    fixed = track("yacht-solo-1m")
    with pytest.raises(dataclasses.FrozenInstanceError):
        fixed.budget = 10**12  # type: ignore[misc]
    assert track("yacht-solo-1m").budget == 1_000_000


@pytest.mark.parametrize("name", ["yacht-solo-2m", "x" * 500, "yacht\x1b]0;owned\x07", "yacht-solo-1m\n"])
def test_an_unknown_name_is_echoed_short_and_escaped_in_one_line(name):
    with pytest.raises(ValueError) as refused:
        track(name)
    message = str(refused.value)
    assert message.startswith(f"unknown track {echoed(name)}: one of yacht-solo-1m, ") and "\x1b" not in message
    assert "\n" not in message and len(message) < 400


def test_a_name_that_is_not_text_is_named_by_its_type():
    with pytest.raises(ValueError, match=r"^unknown track int: one of "):
        track(3)
