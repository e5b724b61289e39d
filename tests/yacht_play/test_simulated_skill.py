"""Simulated people of known skill through the HTTP API: the report recovers their temperatures, the likeness of the
policies to them and a rating order, as the simulation put them in.

The dice and the people's draws come from one seed, ``YACHT_SKILL_SEED`` in the environment (default 30), so a run
is the same run every time unless another seed is asked for. Twelve games are played at once, through the ASGI app in
this process, each with its own draws; the games are created in a fixed order, so that the dice each game is dealt do
not depend on which request the server answers first.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("starlette", reason="the serve tests need the serve extra: pip install 'yacht-rl[serve]'")
httpx = pytest.importorskip("httpx", reason="the simulated people need httpx")

from yacht_play import store as db  # noqa: E402
from yacht_play.report.build import build_report, temperature_of_people  # noqa: E402
from yacht_play.report.ratings import win_probability  # noqa: E402
from yacht_play.report.results import PolicyLikeness  # noqa: E402
from yacht_play.serve.app import create_app  # noqa: E402
from yacht_play.serve.games import GameService  # noqa: E402
from yacht_play.simulate import Chooser, Played, run_async  # noqa: E402


def seed_from_environment(default: int = 30) -> int:
    text = os.environ.get("YACHT_SKILL_SEED", str(default))
    try:
        return int(text)
    except ValueError:
        raise pytest.UsageError(f"YACHT_SKILL_SEED must be an integer seed, got {text!r}") from None


SEED = seed_from_environment()
TEMPERATURES = (0.0, 0.5, 2.0, 5.0)
PEOPLE, GAMES = 3, 4  # per temperature at the tables: the fewest that give each pairing n >= 10
SOFTMAXES = ["softmax:0.5", "softmax:2", "softmax:5"]
# The recovery of each group's T is checked on groups of its own, in solitaire (a person's decisions depend on its own
# sheet only). The check misses a group when the put-in T is outside the fitted 95% interval and the fit is more than
# 10% from it: at 12 games a group (the tables' size) that is about 5% of seeds. The fit's spread shrinks as
# 1/sqrt(decisions) and is widest, relative to T, at T = 5; `python benchmarks/bench_skill_recovery.py` measures it
# per temperature and group size over thousands of simulated games. At the sizes below (2,200 to 5,300 decisions a
# group) each group misses on fewer than 1 seed in 10,000, a run on about 1.6 in 10,000.
RECOVERY_PEOPLE = {0.5: 8, 2.0: 12, 5.0: 20}  # of RECOVERY_GAMES each: 64, 96 and 160 games a group
RECOVERY_GAMES = 8


def group(temperature: float) -> list[str]:
    return [f"t{temperature:g}-{i}" for i in range(PEOPLE)]


class Creations:
    """The games' creations, one at a time in the games' order: :meth:`game` is the client game ``index`` plays
    through, an ``httpx.AsyncClient`` whose request to create the game waits until every earlier game is created.
    The server deals each game's dice at its creation, so each game's dice are the same however the people's other
    requests interleave.
    """

    def __init__(self, client):
        self.client, self.created, self.turn = client, 0, asyncio.Condition()

    def game(self, index: int):
        creations = self

        class Client:
            async def request(self, method: str, path: str, json=None):
                if not (method == "POST" and path == "/api/games"):
                    return await creations.client.request(method, path, json=json)
                async with creations.turn:
                    await creations.turn.wait_for(lambda: creations.created == index)
                    response = await creations.client.request(method, path, json=json)
                    creations.created += 1
                    creations.turn.notify_all()
                    return response

        return Client()


def play(service: GameService, games: list[tuple[Chooser, str]], mode: str, agents: list[str], at_once: int = 12) -> None:
    """Each game ``(chooser, person's name)`` played in ``mode`` with ``agents`` through the HTTP API, ``at_once``
    games at a time, created in the order of ``games``; the dice of every game are dealt from ``SEED`` in that order.
    """
    deals = np.random.default_rng(SEED)
    patch = pytest.MonkeyPatch()
    patch.setattr("yacht_play.serve.games.secrets.randbits", lambda bits: int(deals.integers(0, 2**bits)))

    async def player(creations: Creations, queue) -> None:
        for index, (chooser, name) in queue:  # the next game not yet taken
            played = await run_async(creations.game(index), chooser, Played(name, mode, agents))
            assert not played.errors and played.winners is not None, played.errors

    async def everyone() -> None:
        transport = httpx.ASGITransport(app=create_app(service))
        async with httpx.AsyncClient(transport=transport, base_url="http://yacht.test") as client:
            creations, queue = Creations(client), iter(enumerate(games))
            await asyncio.gather(*(player(creations, queue) for _ in range(at_once)))

    try:
        asyncio.run(everyone())
    finally:
        patch.undo()


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """A folder for the studies' databases, in memory where the system has one (/dev/shm): a commit there costs no
    disk flush, and what these tests check is the report on the games, not that a commit reaches the disk (the
    store's tests check that)."""
    shm = Path("/dev/shm")
    if not (shm.is_dir() and os.access(shm, os.W_OK)):
        yield tmp_path_factory.mktemp("skill")
        return
    path = Path(tempfile.mkdtemp(prefix="yacht-skill-", dir=shm))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def study(folder):
    """Each group at tables of three with optimal and greedy, on dice dealt from ``SEED``."""
    engine = db.connect(str(folder / "tables.db"))
    service = GameService(engine, ["greedy", "optimal"])
    games = [
        (Chooser(temperature, np.random.default_rng([SEED, number, i, g])), name)
        for g in range(GAMES)
        for number, temperature in enumerate(TEMPERATURES)
        for i, name in enumerate(group(temperature))
    ]
    play(service, games, "table", ["optimal", "greedy"])
    games = db.all_games(engine, finished_only=True)
    return games, service, build_report(games, None, service.grader, extra_policies=SOFTMAXES)


def recovery_group(temperature: float) -> list[str]:
    return [f"r{temperature:g}-{i}" for i in range(RECOVERY_PEOPLE[temperature])]


@pytest.fixture(scope="module")
def recovery(folder):
    """Groups at the temperatures above 0, of ``RECOVERY_PEOPLE`` people of ``RECOVERY_GAMES`` solitaire games each."""
    engine = db.connect(str(folder / "solitaire.db"))
    service = GameService(engine, [])
    games = [
        (Chooser(temperature, np.random.default_rng([SEED, 100 + number, i, g])), name)
        for number, temperature in enumerate(RECOVERY_PEOPLE)
        for i, name in enumerate(recovery_group(temperature))
        for g in range(RECOVERY_GAMES)
    ]
    play(service, games, "solitaire", [])
    return db.all_games(engine, finished_only=True), service


def test_the_optimal_people_s_temperature_is_exactly_0(study):
    games, service, report = study
    fit = temperature_of_people(games, group(0.0), service.grader)
    assert fit.mean == 0.0 and fit.low == 0.0  # exactly: an optimal person is T = 0
    assert all(p.temperature.mean == 0.0 for p in report.skill.players if p.name in group(0.0))


@pytest.mark.parametrize("temperature", list(RECOVERY_PEOPLE))
def test_each_group_s_temperature_is_recovered(recovery, temperature):
    games, service = recovery
    fit = temperature_of_people(games, recovery_group(temperature), service.grader)
    assert fit.n >= 30 * RECOVERY_PEOPLE[temperature] * RECOVERY_GAMES  # every decision of the group's games
    inside = fit.low <= temperature <= (np.inf if fit.high is None else fit.high)
    assert inside or abs(fit.mean - temperature) <= 0.1 * temperature, (temperature, fit)


def test_optimal_matches_every_move_of_the_optimal_people(study):
    _, _, report = study
    bands = {p.name: p.band for p in report.skill.players}
    assert {bands[name] for name in group(0.0)} == {"T < 0.25"}
    assert [name for name, band in bands.items() if band == "T < 0.25"] == group(0.0)
    optimal = next(entry for entry in report.likeness if entry.policy == "optimal")
    assert isinstance(optimal, PolicyLikeness)
    perfect = next(b for b in optimal.by_band if b.band == "T < 0.25")
    assert perfect.top1.mean == 1.0 and perfect.people == PEOPLE
    assert optimal.top1.mean < 1.0  # the others do not always play the optimum


def test_each_softmax_is_likeliest_on_the_group_of_its_own_temperature(study):
    _, _, report = study
    likelihood = {
        e.policy: {b.band: b.log_likelihood.mean for b in e.by_band}
        for e in report.likeness
        if isinstance(e, PolicyLikeness) and e.policy in SOFTMAXES
    }
    band_of = {p.name: p.band for p in report.skill.players}
    for policy in SOFTMAXES:
        temperature = float(policy.split(":")[1])
        band = band_of[group(temperature)[0]]
        assert {band_of[name] for name in group(temperature)} == {band}  # the group is its band
        best = max(SOFTMAXES, key=lambda other: likelihood[other][band])
        assert best == policy, (band, {other: likelihood[other][band] for other in SOFTMAXES})
    fit = next(e for e in report.likeness if e.policy == "softmax:fit")
    assert fit.temperature == report.skill.population.median and fit.log_likelihood.n == fit.decisions


def test_the_ratings_order_the_players_and_predict_the_win_rates(study):
    games, _, report = study
    rating = {p.name: p.rating.mean for p in report.ratings.players}
    assert rating["optimal"] > rating["greedy"] == 1000.0
    assert all(rating["greedy"] > rating[name] for name in group(5.0))
    # each agent against each group, and optimal against greedy: the rating differences predict the win rate seen
    pairings = {(agent, t): ([], []) for agent in ("optimal", "greedy") for t in TEMPERATURES} | {("optimal", "greedy"): ([], [])}
    for game in games:
        totals = game.end["totals"]
        seat = {p["policy"] or p["name"]: p["seat"] for p in game.players}
        person = next(p["name"] for p in game.players if p["kind"] == "human")
        temperature = next(t for t in TEMPERATURES if person in group(t))
        for (agent, other), (observed, predicted) in pairings.items():
            against = person if other == temperature else other if other == "greedy" else None
            if against is None:
                continue
            difference = totals[seat[agent]] - totals[seat[against]]
            observed.append(1.0 if difference > 0 else 0.5 if difference == 0 else 0.0)
            predicted.append(win_probability(rating[agent], rating[against]))
    for key, (observed, predicted) in pairings.items():
        low, high = wilson(observed)
        assert low <= np.mean(predicted) <= high, (key, np.mean(observed), len(observed), (low, high), np.mean(predicted))


def wilson(scores: list[float], z: float = 1.959963984540054) -> tuple[float, float]:
    """The 95% Wilson interval of a win rate (the normal one shrinks to a point at 12 wins in 12)."""
    n, p = len(scores), float(np.mean(scores))
    middle, half = (p + z * z / (2 * n)) / (1 + z * z / n), z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return middle - half, middle + half
