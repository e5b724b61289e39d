"""How reliably the report recovers the temperature of simulated people, per group size: the miss rate of the check
of ``tests/yacht_play/test_simulated_skill.py`` over many seeds, computed with the fitting code directly.

    python benchmarks/bench_skill_recovery.py                        # T = 0.5, 2, 5; 4000 games each
    python benchmarks/bench_skill_recovery.py --games 8000 --sizes 12 24 48

A simulated person at temperature ``T`` chooses by the softmax over Q* (:mod:`agents.policies.softmax`); the people of a
group face decisions that depend only on their own sheet, so a group's decisions are those of its games of
solitaire, whoever else sits at the table. Here every person's game is played in a vector env (the same rules and
dice as the server's), each decision's ``(x, chosen)`` is taken as the report takes it (:func:`yacht_play.report.skill
.choice_gaps`), and the games are cut into disjoint groups of ``size`` games, each one draw of the test's group.

The check misses a group when the put-in ``T`` is outside the fitted 95% interval *and* the fit is more than 10%
from it. Printed per temperature and group size: the draws, the misses seen (and their rate), the spread of the
fit (``sd(b_hat)/b``, ``b = 1/T``) and the miss rate a normal fit of that spread predicts (``P(|T_hat - T| > 0.1 T)``, an upper
bound of the miss rate, since a draw inside its interval does not miss either), and the predicted miss rate of a
whole run of the test (any of the three groups). Decisions per game: about 30 (one to three per turn).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np
from scipy.stats import norm

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.policies import softmax  # noqa: E402
from agents.policies.softmax import SoftmaxPolicy  # noqa: E402
from yacht_env.option_values import decimal_number, whole_number  # noqa: E402
from yacht_env.vector_env import YachtVectorEnv  # noqa: E402
from yacht_play.report import skill  # noqa: E402


def play(temperature: float, games: int, seed: int, rules=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``games`` games of a softmax person: each decision's ``(x, chosen)`` and the number of its game."""
    envs = min(games, 1000)
    env = YachtVectorEnv(envs, rules=rules)
    policy = SoftmaxPolicy(temperature, rules=rules, seed=seed)
    observations, infos = env.reset(seed=seed)
    masks = env.action_masks()
    game = np.arange(envs)
    started = envs
    xs, chosens, games_of = [], [], []
    while True:
        live = game < games
        if not live.any():
            break
        q = policy.q_values(observations, masks)
        hand = policy.encoding.decode_batch(observations)[0]
        actions = softmax.choose(q, hand, policy.rules, policy.temperature, policy.rng)  # as the people choose
        x, chosen = skill.choice_gaps(q[live], hand[live], actions[live], policy.rules)
        xs.append(x)
        chosens.append(chosen)
        games_of.append(game[live])
        observations, _, terminated, truncated, _ = env.step(actions)
        masks = env.action_masks()
        ended = np.flatnonzero(terminated | truncated)
        game[ended] = started + np.arange(len(ended))
        started += len(ended)
    return np.concatenate(xs), np.concatenate(chosens), np.concatenate(games_of)


def misses(temperature: float, x, chosen, game_of, size: int) -> tuple[int, int, np.ndarray]:
    """The draws of ``size`` games, the misses among them, and each draw's relative error in ``b = 1/T``,
    ``b_hat / b - 1`` (the maximum-likelihood ``b_hat`` is near normal; ``T_hat = 1/b_hat`` is skewed).
    """
    order = np.argsort(game_of, kind="stable")
    x, chosen, game_of = x[order], chosen[order], game_of[order]
    draws = int(game_of.max() + 1) // size
    bounds = np.searchsorted(game_of, np.arange(draws + 1) * size)
    missed, errors = 0, []
    for d in range(draws):
        part = slice(bounds[d], bounds[d + 1])
        fit = skill.fit_temperature(x[part], chosen[part])
        high = math.inf if fit["high"] is None else fit["high"]
        inside = fit["low"] <= temperature <= high
        near = abs(fit["mean"] - temperature) <= 0.1 * temperature
        missed += not (inside or near)
        errors.append(temperature / fit["mean"] - 1)
    return draws, missed, np.array(errors)


def miss_bound(bias: float, sd: float) -> float:
    """``P(|T_hat - T| > 0.1 T)`` for ``b_hat / b - 1`` normal with mean ``bias`` and spread ``sd``, ``b = 1/T``:
    ``T_hat < 0.9 T`` or ``> 1.1 T`` is ``b_hat / b - 1 > 1/0.9 - 1`` or ``< 1/1.1 - 1``.
    """
    return float(norm.cdf(1 / 1.1 - 1, bias, sd) + norm.sf(1 / 0.9 - 1, bias, sd))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--temperatures", type=decimal_number(), nargs="+", default=[0.5, 2.0, 5.0])
    parser.add_argument("--games", type=whole_number(), default=4000, help="games simulated per temperature")
    parser.add_argument("--sizes", type=whole_number(), nargs="+", default=[12, 24, 48, 96], help="games per group")
    parser.add_argument(
        "--test",
        nargs="+",
        default=["0.5:64", "2:96", "5:160"],
        metavar="T:GAMES",
        help="the groups of the test (default: those of tests/yacht_play/test_simulated_skill.py)",
    )
    parser.add_argument("--seed", type=whole_number(), default=1)
    args = parser.parse_args(argv)
    test = {float(t): int(g) for t, g in (item.split(":") for item in args.test)}
    run_miss: dict[int, float] = {}
    test_miss = 1.0
    print("sd(b)/b: the spread of the fit in b = 1/T; P(miss): normal, from this size's spread; scaled: from the")
    print("spread at the smallest size (the most draws) times sqrt(smallest / size)")
    columns = ("T", 4), ("games", 6), ("decisions", 9), ("draws", 6), ("misses", 7), ("rate", 7), ("sd(b)/b", 8)
    print(" ".join(f"{name:>{width}}" for name, width in (*columns, ("P(miss)", 9), ("scaled", 9))))
    for temperature in args.temperatures:
        start = time.perf_counter()
        x, chosen, game_of = play(temperature, args.games, args.seed)
        seconds = time.perf_counter() - start
        per_game = len(chosen) / args.games
        base = None
        for size in sorted(set(args.sizes) | ({test[temperature]} if temperature in test else set())):
            draws, missed, errors = misses(temperature, x, chosen, game_of, size)
            sd, bias = float(errors.std(ddof=1)), float(errors.mean())
            base = base or (size, sd, bias)
            predicted = miss_bound(bias, sd)
            scaled = miss_bound(base[2] * base[0] / size, base[1] * math.sqrt(base[0] / size))  # bias ~ 1/n, sd ~ 1/sqrt(n)
            if size in args.sizes:
                run_miss[size] = 1 - (1 - run_miss.get(size, 0.0)) * (1 - scaled)
            if test.get(temperature) == size:
                test_miss *= 1 - scaled
            print(
                f"{temperature:4g} {size:6d} {size * per_game:9.0f} {draws:6d} {missed:7d} {missed / draws:7.3f} "
                f"{sd:8.3f} {predicted:9.2e} {scaled:9.2e}"
            )
        print(f"     ({args.games} games, {per_game:.1f} decisions per game, played in {seconds:.0f} s)")
    print("predicted miss rate of a run (any group misses), scaled, with every group of the same size:")
    for size, rate in sorted(run_miss.items()):
        print(f"  {size:4d} games per group: {rate:.2e}")
    groups = ", ".join(f"T = {t:g}: {g} games" for t, g in test.items())
    print(f"  the test's groups ({groups}): {1 - test_miss:.2e}")


if __name__ == "__main__":
    main()
