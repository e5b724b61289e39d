"""Compare policies with the exact optimum on common random numbers.

    python -m agents.evaluate --policy random --policy greedy --policy optimal --games 10000
    python -m agents.evaluate --table optimal,greedy --games 20000   # win rates at one table
    python -m agents.evaluate --video videos/ --policy optimal          # MP4s of 3 games (video extra)

``--table`` plays full games at one table instead: see :mod:`agents.tournament`.

Every policy plays the same games: game ``g`` is ``Yacht-v0`` reset with seed ``seed + g``, which
fixes its whole dice stream (for each turn and roll, the faces re-rolled dice land on, in order),
so the differences between policies are paired and far less noisy than independent runs. Games
are played in batches on the vector env. Each decision is graded with the DP: its *regret* is
Q*(best action) - Q*(chosen action), the exact expected points that decision gives away.

Figures (per policy): mean final score with standard deviation and 95% confidence interval,
percent of the optimal expected score, the paired difference to ``optimal`` with its 95% CI, mean
regret per decision, and mean regret per game (the sum over a game's decisions) with its 95% CI.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import asdict, dataclass

import numpy as np

from agents.optimal import expected_score, solve
from agents.policy import Policy, make_policy
from yacht_env.atomic_files import write_atomically
from yacht_env.rules import YACHT, RuleSet

Z95 = 1.959963984540054  # two-sided 95% normal quantile; n is large enough for the CLT here


@dataclass
class GameLog:
    """Per-game figures of one policy over the evaluated games."""

    scores: np.ndarray  # final total of each game
    regret: np.ndarray  # summed regret of each game's decisions
    decisions: np.ndarray  # decisions taken in each game


@dataclass
class Summary:
    policy: str
    games: int
    mean: float
    std: float
    ci95: tuple[float, float]
    percent_of_optimal: float
    diff_to_optimal: float
    diff_ci95: tuple[float, float]
    regret_per_decision: float
    regret_per_game: float
    regret_per_game_ci95: tuple[float, float]
    decisions_per_game: float


def mean_ci(values: np.ndarray) -> tuple[float, float, float]:
    """Mean and its 95% confidence interval."""
    mean = float(values.mean())
    half = Z95 * float(values.std(ddof=1)) / math.sqrt(len(values)) if len(values) > 1 else float("nan")
    return mean, mean - half, mean + half


def play_games(
    policy: Policy,
    games: int,
    seed: int = 0,
    rules: RuleSet | None = None,
    batch_size: int = 4096,
    progress=None,
) -> GameLog:
    """Play ``games`` games (seeds ``seed .. seed + games - 1``) and grade every decision with the DP."""
    from yacht_env.vector_env import YachtVectorEnv

    rules = rules or YACHT
    solution = solve(rules)
    scores = np.zeros(games)
    regret = np.zeros(games)
    decisions = np.zeros(games, dtype=np.int64)
    policy.reset(seed)
    for start in range(0, games, batch_size):
        size = min(batch_size, games - start)
        env = YachtVectorEnv(num_envs=size, rules=rules, observation_encoding=policy.encoding.name)
        obs, infos = env.reset(seed=seed + start)
        playing = np.ones(size, dtype=bool)
        rows = slice(start, start + size)
        while playing.any():
            masks = infos["action_mask"]
            actions = policy.act_batch(obs, masks)
            q = solution.q_values_batch(*policy.encoding.decode_batch(obs))
            lost = q.max(axis=1) - q[np.arange(size), actions]
            regret[rows] += np.where(playing, lost, 0.0)
            decisions[rows] += playing
            obs, rewards, terminations, truncations, infos = env.step(actions)
            scores[rows] += np.where(playing, rewards, 0.0)
            playing &= ~(terminations | truncations)
        env.close()
        if progress is not None:
            progress.update(size)
    return GameLog(scores, regret, decisions)


def summarize(name: str, log: GameLog, optimal: GameLog, optimum: float) -> Summary:
    mean, low, high = mean_ci(log.scores)
    diff, diff_low, diff_high = mean_ci(log.scores - optimal.scores)
    regret_game, regret_low, regret_high = mean_ci(log.regret)
    return Summary(
        policy=name,
        games=len(log.scores),
        mean=mean,
        std=float(log.scores.std(ddof=1)),
        ci95=(low, high),
        percent_of_optimal=100.0 * mean / optimum,
        diff_to_optimal=diff,
        diff_ci95=(diff_low, diff_high),
        regret_per_decision=float(log.regret.sum() / log.decisions.sum()),
        regret_per_game=regret_game,
        regret_per_game_ci95=(regret_low, regret_high),
        decisions_per_game=float(log.decisions.mean()),
    )


def evaluate_policies(
    policies: dict[str, Policy],
    games: int = 10_000,
    seed: int = 0,
    rules: RuleSet | None = None,
    batch_size: int = 4096,
    show_progress: bool = False,
) -> tuple[list[Summary], dict[str, GameLog]]:
    """Play every policy on the same games; ``optimal`` is played too when absent, as the paired reference."""
    rules = rules or YACHT
    to_play = dict(policies)
    if "optimal" not in to_play:
        to_play["optimal"] = make_policy("optimal", rules=rules)
    progress = None
    if show_progress:
        from tqdm import tqdm

        progress = tqdm(total=games * len(to_play), unit="game", desc="evaluating", file=sys.stderr)
    logs = {}
    for name, policy in to_play.items():
        if progress is not None:
            progress.set_postfix_str(name)
        logs[name] = play_games(policy, games, seed, rules, batch_size, progress)
    if progress is not None:
        progress.close()
    optimum = expected_score(rules)
    return [summarize(name, logs[name], logs["optimal"], optimum) for name in policies], logs


def evaluate(policy_names: list[str], games: int = 10_000, seed: int = 0, rules: RuleSet | None = None, **kwargs):
    """Evaluate policies given by name (``random``, ``greedy``, ``optimal``, ``ppo:PATH``)."""
    policies = {name: make_policy(name, rules=rules, seed=seed) for name in dict.fromkeys(policy_names)}
    return evaluate_policies(policies, games, seed, rules, **kwargs)


def evaluate_model(model, encoding: str, games: int, seed: int, reference=(), name: str = "ppo") -> list[Summary]:
    """Evaluate an in-memory MaskablePPO model (and the named reference policies) against the optimum."""
    from agents.ppo import PPOPolicy

    policies = {name: PPOPolicy(model, name, encoding=encoding)}
    policies.update({ref: make_policy(ref, seed=seed) for ref in reference})
    summaries, _ = evaluate_policies(policies, games, seed)
    return summaries


def print_table(summaries: list[Summary], optimum: float, games: int, seed: int) -> None:
    from rich.table import Table

    from yacht_env.render import report_console

    table = Table(title=f"{games:,} games, seeds {seed}..{seed + games - 1}; optimal expected score {optimum:.4f}")
    for column in ("policy", "mean ± sd", "95% CI", "% of optimum", "diff to optimal [95% CI]", "regret/decision", "regret/game [95% CI]"):
        table.add_column(column, justify="left" if column == "policy" else "right")
    for s in summaries:
        table.add_row(
            s.policy,
            f"{s.mean:.2f} ± {s.std:.2f}",
            f"[{s.ci95[0]:.2f}, {s.ci95[1]:.2f}]",
            f"{s.percent_of_optimal:.2f}%",
            f"{s.diff_to_optimal:+.2f} [{s.diff_ci95[0]:+.2f}, {s.diff_ci95[1]:+.2f}]",
            f"{s.regret_per_decision:.4f}",
            f"{s.regret_per_game:.3f} [{s.regret_per_game_ci95[0]:.3f}, {s.regret_per_game_ci95[1]:.3f}]",
        )
    console = report_console()
    console.print(table)


def save_json(path, summaries: list[Summary], optimum: float, games: int, seed: int) -> None:
    report = {
        "games": games,
        "seed": seed,
        "optimal_expected_score": optimum,
        "policies": [asdict(s) for s in summaries],
    }
    write_atomically(path, lambda handle: handle.write(json.dumps(report, indent=2).encode() + b"\n"))


def save_plot(path, logs: dict[str, GameLog], names: list[str], optimum: float) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(9, 5))
    low = min(logs[name].scores.min() for name in names)
    high = max(logs[name].scores.max() for name in names)
    bins = np.arange(math.floor(low) - 0.5, math.ceil(high) + 5.5, 5)
    for name in names:
        axes.hist(logs[name].scores, bins=bins, histtype="step", linewidth=1.6, label=f"{name} (mean {logs[name].scores.mean():.1f})")
    axes.axvline(optimum, color="black", linestyle="--", label=f"optimal expected score {optimum:.2f}")
    axes.set_xlabel("final score")
    axes.set_ylabel("games")
    axes.set_title(f"Yacht final scores over {len(next(iter(logs.values())).scores):,} common-random-number games")
    axes.legend()
    figure.tight_layout()
    write_atomically(path, lambda handle: figure.savefig(handle, format="png", dpi=120))
    plt.close(figure)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m agents.evaluate", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--policy", action="append", help="random, greedy, optimal or ppo:PATH (repeatable; default: random, greedy, optimal)")
    parser.add_argument("--table", help="comma-separated policies at one table of 2 to 5 (e.g. optimal,greedy): play full games and report win rates")
    parser.add_argument("--games", type=int, default=10_000, help="games per policy, or games at the --table (default 10000)")
    parser.add_argument("--seed", type=int, default=0, help="seed of game 0; game g uses seed + g (default 0)")
    parser.add_argument("--batch-size", type=int, default=4096, help="games played at once (default 4096)")
    parser.add_argument("--json", help="write every figure to this JSON file")
    parser.add_argument("--plot", help="write a PNG of the score distributions to this file")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    parser.add_argument("--video", metavar="DIR", help="record games of each --policy as MP4 files in DIR instead of evaluating (needs the video extra)")
    parser.add_argument("--video-games", type=int, default=3, help="games recorded per policy with --video (default 3)")
    args = parser.parse_args(argv)
    if args.video:
        from agents.video import record_games

        if args.table:
            parser.error("--video records single-player games of each --policy; it does not go with --table")
        if args.video_games < 1:
            parser.error(f"--video-games must be at least 1, got {args.video_games}")
        try:
            paths = record_games(args.policy or ["random", "greedy", "optimal"], args.video, args.video_games, args.seed)
        except ValueError as error:
            parser.exit(2, f"error: {error}\n")
        print("\n".join(str(path) for path in paths))
        return
    if args.games < 2:
        parser.error(f"--games must be at least 2 (for a confidence interval), got {args.games}")
    if args.batch_size < 1:
        parser.error(f"--batch-size must be at least 1, got {args.batch_size}")
    if args.table:
        from agents.tournament import main_table

        if args.policy:
            parser.error("--table and --policy do not go together: the table names its policies")
        try:
            main_table(args.table, args.games, args.seed, args.batch_size, args.json, args.plot, show_progress=not args.no_progress)
        except ValueError as error:
            parser.exit(2, f"error: {error}\n")
        return
    names = args.policy or ["random", "greedy", "optimal"]
    try:
        summaries, logs = evaluate(names, args.games, args.seed, batch_size=args.batch_size, show_progress=not args.no_progress)
    except ValueError as error:
        parser.exit(2, f"error: {error}\n")
    optimum = expected_score()
    print_table(summaries, optimum, args.games, args.seed)
    if args.json:
        save_json(args.json, summaries, optimum, args.games, args.seed)
    if args.plot:
        save_plot(args.plot, logs, list(dict.fromkeys(names)), optimum)


if __name__ == "__main__":
    main()
