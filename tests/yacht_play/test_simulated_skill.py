"""Simulated people of known skill through the HTTP API: the report recovers their temperatures, the likeness of the
policies to them and a rating order, as the simulation put them in."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("starlette", reason="the serve tests need the serve extra: pip install 'yacht-rl[serve]'")
pytest.importorskip("httpx", reason="the simulated people need httpx")

from tests.yacht_play.test_serve_api import TestClient  # noqa: E402
from yacht_play import store as db  # noqa: E402
from yacht_play.ratings import win_probability  # noqa: E402
from yacht_play.report import build_report, temperature_of_people  # noqa: E402
from yacht_play.serve.app import create_app  # noqa: E402
from yacht_play.serve.games import GameService  # noqa: E402
from yacht_play.simulate import Chooser, Played, run_sync  # noqa: E402

TEMPERATURES = (0.0, 0.5, 2.0, 5.0)
PEOPLE, GAMES = 3, 4  # per temperature: the fewest that recover every group's T and give each pairing n >= 10
SOFTMAXES = ["softmax:0.5", "softmax:2", "softmax:5"]


def group(temperature: float) -> list[str]:
    return [f"t{temperature:g}-{i}" for i in range(PEOPLE)]


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    """Each group at tables of three with optimal and greedy, on dice dealt from a fixed seed."""
    deals = np.random.default_rng(30)
    patch = pytest.MonkeyPatch()
    patch.setattr("yacht_play.serve.games.secrets.randbits", lambda bits: int(deals.integers(0, 2**bits)))
    engine = db.connect(str(tmp_path_factory.mktemp("skill") / "yacht.db"))
    service = GameService(engine, ["greedy", "optimal"])
    try:
        with TestClient(create_app(service)) as client:
            for number, temperature in enumerate(TEMPERATURES):
                for i, name in enumerate(group(temperature)):
                    chooser = Chooser(temperature, np.random.default_rng(1000 * number + i))
                    for _ in range(GAMES):
                        played = run_sync(client, chooser, Played(name, "table", ["optimal", "greedy"]))
                        assert not played.errors and played.winners is not None
    finally:
        patch.undo()
    games = db.all_games(engine, finished_only=True)
    return games, service, build_report(games, None, service.grader, extra_policies=SOFTMAXES)


@pytest.mark.parametrize("temperature", TEMPERATURES)
def test_each_group_s_temperature_is_recovered(study, temperature):
    games, service, report = study
    fit = temperature_of_people(games, group(temperature), service.grader)
    if temperature == 0:
        assert fit["mean"] == 0.0 and fit["low"] == 0.0  # exactly: an optimal person is T = 0
        assert all(p["temperature"]["mean"] == 0.0 for p in report["skill"]["players"] if p["name"] in group(0.0))
    else:
        inside = fit["low"] <= temperature <= fit["high"]
        assert inside or abs(fit["mean"] - temperature) <= 0.1 * temperature, (temperature, fit)


def test_optimal_matches_every_move_of_the_optimal_people(study):
    _, _, report = study
    bands = {p["name"]: p["band"] for p in report["skill"]["players"]}
    assert {bands[name] for name in group(0.0)} == {"T < 0.25"}
    assert [name for name, band in bands.items() if band == "T < 0.25"] == group(0.0)
    optimal = next(entry for entry in report["likeness"] if entry["policy"] == "optimal")
    perfect = next(b for b in optimal["by_band"] if b["band"] == "T < 0.25")
    assert perfect["top1"]["mean"] == 1.0 and perfect["people"] == PEOPLE
    assert optimal["top1"]["mean"] < 1.0  # the others do not always play the optimum


def test_each_softmax_is_likeliest_on_the_group_of_its_own_temperature(study):
    _, _, report = study
    likelihood = {
        e["policy"]: {b["band"]: b["log_likelihood"]["mean"] for b in e["by_band"]}
        for e in report["likeness"]
        if e["policy"] in SOFTMAXES
    }
    band_of = {p["name"]: p["band"] for p in report["skill"]["players"]}
    for policy in SOFTMAXES:
        temperature = float(policy.split(":")[1])
        band = band_of[group(temperature)[0]]
        assert {band_of[name] for name in group(temperature)} == {band}  # the group is its band
        best = max(SOFTMAXES, key=lambda other: likelihood[other][band])
        assert best == policy, (band, {other: likelihood[other][band] for other in SOFTMAXES})
    fit = next(e for e in report["likeness"] if e["policy"] == "softmax:fit")
    assert fit["temperature"] == report["skill"]["population"]["median"] and fit["log_likelihood"]["n"] == fit["decisions"]


def test_the_ratings_order_the_players_and_predict_the_win_rates(study):
    games, _, report = study
    rating = {p["name"]: p["rating"]["mean"] for p in report["ratings"]["players"]}
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
