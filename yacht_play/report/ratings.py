"""One rating scale for people and agents: a Bradley-Terry fit of every finished game, with bootstrap 95% intervals.

Each game at a table of ``k`` seats gives its ``k (k - 1) / 2`` pairwise results (1 to the higher total, 1/2 each
on a tie); solitaire games give none. Player ``i`` beats ``j`` with probability ``1 / (1 + 10 ** ((R_j - R_i) / 400))``
(the Elo scale), the ratings ``R`` maximizing the likelihood of every result, anchored so that ``greedy`` is
``ANCHOR`` (or, without it, so that the ratings average ``ANCHOR``). A weak normal prior (``PRIOR`` logits of
precision) keeps the rating of a player who won or lost every game finite. The intervals are percentiles of
``BOOTSTRAP`` refits on the games resampled with replacement (seeded: the same games give the same intervals).

Duplicate games (an agent on the person's dice) and games at a table (each seat its own dice) are pooled in the one
fit, which assumes one chance of winning per rating gap: on the same dice the better player wins more often than on
dice of its own, so the gap fitted is a mix of the two, weighted by the results of each. The report says how many
games of each mode it pooled (``games_by_mode``, :data:`POOLED`); a report filtered to one mode (``--mode``,
``?mode=`` on ``/report``) rates that mode alone. They stay pooled rather than split because a split gives each
agent two ratings on scales that cannot be compared, and a person who played one mode only a place on one of them:
the filter already gives either scale, with every other figure filtered alike.

Bradley-Terry rather than TrueSkill or OpenSkill: the games are a finished batch, so one maximum-likelihood fit,
which no order of the games changes, with intervals resampled over games (as Chatbot Arena does), fits better than
an online update whose ratings depend on the order the games came in.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from yacht_play.report.results import AgentPrediction, Anchor, Estimate, GamesOfMode, RatedPlayer, Ratings

ANCHOR_POLICY = "greedy"
ANCHOR = 1000.0
ELO = 400.0 / math.log(10.0)  # rating points per logit of the odds
PRIOR = 1e-3  # the prior's precision, per logit squared: a standard deviation of about 30 logits
BOOTSTRAP = 200
SEED = 0
POOLED = (
    "the modes are pooled in one fit: on the same dice (duplicate) the better player wins more often than with dice "
    "of its own (table), and one rating gap is fitted to both; a report filtered to one mode rates it alone"
)


@dataclass
class PairResults:
    """The pairwise results of the games: player ``first[k]`` against ``second[k]`` scored ``result[k]`` (1, 1/2 or 0)
    in game ``game[k]`` (players by their index in ``players``).
    """

    players: list[tuple[str, str]]  # (kind, name): ("agent", policy) or ("human", name)
    first: np.ndarray
    second: np.ndarray
    result: np.ndarray  # the first player's score: 1 a win, 1/2 a tie, 0 a loss
    game: np.ndarray
    games: int
    modes: dict[str, int]  # the games counted, per mode

    @classmethod
    def of(cls, games) -> PairResults:
        """The pairs of every game with two seats or more (:class:`yacht_play.records.GameRecord`, finished)."""
        index: dict[tuple[str, str], int] = {}
        i, j, s, game = [], [], [], []
        counted = 0
        modes: dict[str, int] = {}
        for number, record in enumerate(games):
            seats = [
                (("agent", p["policy"]) if p["kind"] == "agent" else ("human", p["name"]), p["seat"]) for p in record.players
            ]
            if len(seats) < 2:
                continue
            counted += 1
            modes[record.header["mode"]] = modes.get(record.header["mode"], 0) + 1
            totals = record.end["totals"]
            for a in range(len(seats)):
                for b in range(a + 1, len(seats)):
                    (first, seat_a), (second, seat_b) = seats[a], seats[b]
                    if first == second:  # the same policy twice at a table: no information on it
                        continue
                    i.append(index.setdefault(first, len(index)))
                    j.append(index.setdefault(second, len(index)))
                    margin = totals[seat_a] - totals[seat_b]
                    s.append(1.0 if margin > 0 else 0.5 if margin == 0 else 0.0)
                    game.append(number)
        as_int = lambda values: np.array(values, dtype=np.int64)  # noqa: E731
        return cls(list(index), as_int(i), as_int(j), np.array(s, dtype=float), as_int(game), counted, modes)


def fit(pairs: PairResults, weights: np.ndarray | None = None, start: np.ndarray | None = None) -> np.ndarray:
    """The ratings in logits (mean-free up to the prior), by Newton's method on the penalized log-likelihood."""
    n = len(pairs.players)
    w = np.ones(len(pairs.result)) if weights is None else weights
    r = np.zeros(n) if start is None else start.copy()
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(r[pairs.second] - r[pairs.first]))
        residual = w * (pairs.result - p)
        gradient = np.bincount(pairs.first, residual, n) - np.bincount(pairs.second, residual, n) - PRIOR * r
        curvature = w * p * (1.0 - p)
        off_diagonal = np.bincount(pairs.first * n + pairs.second, curvature, n * n) + np.bincount(
            pairs.second * n + pairs.first, curvature, n * n
        )
        hessian = np.diag(np.bincount(pairs.first, curvature, n) + np.bincount(pairs.second, curvature, n) + PRIOR)
        hessian -= off_diagonal.reshape(n, n)
        step = np.clip(np.linalg.solve(hessian, gradient), -4.0, 4.0)  # far from the optimum, steps of a few logits
        r += step
        if np.abs(step).max() < 1e-10:
            break
    return r


def anchored(r: np.ndarray, anchor: int | None) -> np.ndarray:
    """Logits as Elo-scale ratings: ``ANCHOR`` at the anchor's, or on average without one."""
    zero = r[anchor] if anchor is not None else r.mean()
    return ANCHOR + ELO * (r - zero)


def win_probability(rating: float, other: float) -> float:
    """The probability that a player rated ``rating`` beats one rated ``other`` (a tie counting 1/2)."""
    return 1.0 / (1.0 + 10.0 ** ((other - rating) / 400.0))


def one_blas_thread():
    """A context in which linear algebra runs on one thread: a small solve is faster so, and a threaded BLAS
    on a busy machine makes each of the bootstrap's thousands of solves wait for every core (x15 measured).
    """
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # without it (the serve extra brings it): the same figures, more slowly
        from contextlib import nullcontext

        return nullcontext()
    return threadpool_limits(1, user_api="blas")


def rate(games, bootstrap: int = BOOTSTRAP, seed: int = SEED) -> Ratings:
    """Every person's and agent's rating with its 95% bootstrap interval, best first, and how it was anchored."""
    pairs = PairResults.of(games)
    anchor = pairs.players.index(("agent", ANCHOR_POLICY)) if ("agent", ANCHOR_POLICY) in pairs.players else None
    unrated = Ratings(
        method="Bradley-Terry (maximum likelihood), 95% percentile bootstrap over games",
        scale="Elo: 400 points per factor of 10 in the odds",
        anchor=Anchor(ANCHOR_POLICY if anchor is not None else None, ANCHOR),
        games=pairs.games,
        pairs=len(pairs.result),
        bootstrap=bootstrap,
        players=(),
        games_by_mode=tuple(GamesOfMode(mode, n) for mode, n in sorted(pairs.modes.items())),
    )
    if not len(pairs.result):
        return unrated
    rng = np.random.default_rng(seed)
    counted = np.unique(pairs.game)
    draws = []
    with one_blas_thread():
        r = fit(pairs)
        point = anchored(r, anchor)
        for _ in range(bootstrap):
            picked = np.bincount(rng.choice(len(counted), len(counted)), minlength=len(counted)).astype(float)
            weights = picked[np.searchsorted(counted, pairs.game)]
            draws.append(anchored(fit(pairs, weights, r), anchor))
    low, high = np.percentile(np.array(draws), [2.5, 97.5], axis=0) if draws else (point, point)
    games_of = [len(set(pairs.game[(pairs.first == k) | (pairs.second == k)].tolist())) for k in range(len(pairs.players))]
    players = []
    for k in np.argsort(-point, kind="stable"):
        kind, name = pairs.players[k]
        if bootstrap == 0:
            rating = Estimate(float(point[k]), None, None, games_of[k], "games", "no bootstrap: no interval")
        else:
            rating = Estimate(float(point[k]), float(low[k]), float(high[k]), games_of[k], "games")
        players.append(RatedPlayer(name, "agent" if kind == "agent" else "human", rating))
    return dataclasses.replace(unrated, players=tuple(players), agents_vs_people=predicted_against_people(pairs, point))


def predicted_against_people(pairs: PairResults, ratings: np.ndarray) -> tuple[AgentPrediction, ...]:
    """Per agent, over its results against people: the mean score the ratings predict and the one observed."""
    out = []
    for k, (kind, name) in enumerate(pairs.players):
        if kind != "agent":
            continue
        predicted, observed = [], []
        for mine, other, sign in ((pairs.first == k, pairs.second, 1.0), (pairs.second == k, pairs.first, -1.0)):
            human = np.array([pairs.players[o][0] == "human" for o in other[mine]], dtype=bool)
            opponents = other[mine][human]
            predicted += [win_probability(ratings[k], ratings[o]) for o in opponents]
            scores = pairs.result[mine][human]
            observed += list(scores if sign > 0 else 1.0 - scores)
        if observed:
            out.append(AgentPrediction(name, len(observed), float(np.mean(predicted)), float(np.mean(observed))))
    return tuple(out)
