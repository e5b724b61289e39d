"""Tournaments: full games of Yacht at one table of 2 to 5 policies, judged on winning.

    python -m agents.evaluate --table optimal,greedy,random --games 20000 --json t.json --plot t.png
    python -m agents.evaluate --table optimal,greedy --rules yahtzee --games 20000   # any rule set of RULE_SETS

Deals and seatings. Deal ``d`` draws every seat's dice from seed ``seed + d`` exactly as the
PettingZoo env and ``Yacht-v0`` at a table do (seat 0 first; seat 0's dice are those of solitaire
``Yacht-v0`` with that seed). Each deal is played once per cyclic seating of the table: in
seating ``r`` the ``i``-th policy sits in seat ``(i + r) % n``. So every policy plays every seat
(first player, second, ...) and every seat's dice equally often, which cancels both the
first-player effect and most of the luck of the dice: ``--games N`` plays ``ceil(N / n)`` deals,
``n`` games each.

Figures, per policy: *win rate*, the mean share of the win, where a game won outright counts 1
and a first place shared by ``k`` players counts ``1/k`` each (a two-player tie is half a win;
sole and shared wins are also counted separately); mean final score; and the head-to-head
matrix, how often the row policy finished above the column policy at this table (a tie counts
half). 95% confidence intervals use the normal approximation over deals: the ``n`` games of a
deal share their dice and are not independent, so each deal's average is one observation.
Games are played many tables at a time, each policy acting on all tables where it is to move
with one ``act_batch`` call.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np
from gymnasium.utils import seeding

from agents.evaluation.distributed import check_sendable_rules, cluster_cpus, game_slices, run_tasks
from agents.evaluation.stats import mean_ci
from agents.learned.table_policy import model_policy
from agents.policies.policy import Policy
from agents.registry import make_table_policy
from yacht_env.atomic_files import write_atomically
from yacht_env.rules import RuleSet, rule_set
from yacht_env.seeding import seat_seed
from yacht_env.table.encoding import policy_observations
from yacht_env.table.outcome import MAX_PLAYERS, GameBatch, draw_table_dice, unique_names, win_shares


@dataclass
class TableLog:
    """Final totals of every game, in the order of the table's policies."""

    names: list[str]
    totals: np.ndarray  # (games, policies): each policy's final total
    deals: int  # games = deals * policies; game g is deal g // n in seating g % n
    rules: str = "yacht"  # the rule set's name
    losses: np.ndarray | None = None  # (games, policies): summed loss in chance of winning, when graded
    decisions: np.ndarray | None = None  # (games, policies): decisions made, when graded


@dataclass
class TableGames:
    """What a batch of table games leaves: each policy's final totals and, when graded, its decisions' losses."""

    totals: np.ndarray  # (games, policies) int64
    losses: np.ndarray | None = None  # (games, policies) float64: the summed drop in chance of winning of its decisions
    decisions: np.ndarray | None = None  # (games, policies) int64: how many decisions it made


@dataclass
class Standing:
    """One policy's line of the standings: its games, win rate, wins and mean score (with 95% intervals).

    At a graded two-player table (:mod:`agents.two_player.grading`), also its decisions' mean loss in chance of
    winning, in percentage points, per decision and per game (with the game's 95% interval over deals).
    """

    policy: str
    games: int
    win_rate: float
    win_rate_ci95: tuple[float, float]
    sole_wins: int
    shared_wins: int
    mean_score: float
    mean_score_ci95: tuple[float, float]
    loss_per_decision_pp: float | None = None
    loss_per_game_pp: float | None = None
    loss_per_game_pp_ci95: tuple[float, float] | None = None


@dataclass
class TournamentResult:
    """A tournament's outcome: the table, games, deals and seed, the standings and the head-to-head rates."""

    table: list[str]
    games: int
    deals: int
    seed: int
    standings: list[Standing]
    head_to_head: list[list[float | None]]  # [i][j]: how often i finished above j (ties half)
    head_to_head_ci95: list[list[tuple[float, float] | None]]
    rules: str = "yacht"  # the rule set's name
    grading: str = ""  # how the decisions were graded, or why they were not


# -- playing --------------------------------------------------------------------------------------


def deal_dice(seed: int, deals: int, num_players: int, rules: RuleSet) -> np.ndarray:
    """Every seat's dice for ``deals`` deals from seeds ``seed, seed + 1, ...``: (deals, seats, turns, rolls, dice)."""
    return np.stack([draw_table_dice(seeding.np_random(seed + d)[0], rules, num_players) for d in range(deals)])


def play_table(
    policies: list[Policy],
    games: int,
    seed: int = 0,
    rules: RuleSet | None = None,
    batch_size: int = 4096,
    progress=None,
) -> np.ndarray:
    """Play ``ceil(games / n)`` deals in every seating; each policy's final totals, (deals * n, n).

    The deals are played ``batch_size // n`` at a time; the batch from deal ``first`` re-seeds
    policy ``i`` with ``seed + first + i``, so a run of whole batches plays the same wherever it
    runs (``play_table(p, k * n, seed + first)`` gives exactly those deals of the whole run).
    """
    return play_table_games(policies, games, seed, rules, batch_size, progress).totals


def play_table_games(
    policies: list[Policy],
    games: int,
    seed: int = 0,
    rules: RuleSet | None = None,
    batch_size: int = 4096,
    progress=None,
    grader=None,
) -> TableGames:
    """:func:`play_table`, with every decision graded by ``grader`` (a :class:`agents.two_player.grading.TwoPlayerGrader`)."""
    n = len(policies)
    deals = math.ceil(games / n)
    batches = game_slices(deals, max(1, batch_size // n))
    parts = [play_deals(policies, size, seed + first, rules, progress, grader) for first, size in batches]
    if grader is None:
        return TableGames(np.concatenate([part.totals for part in parts]))
    return merge_games(parts)


def merge_games(parts: list[TableGames]) -> TableGames:
    """Batches of games, one after the other."""
    graded = all(part.losses is not None for part in parts)
    return TableGames(
        np.concatenate([part.totals for part in parts]),
        np.concatenate([part.losses for part in parts]) if graded else None,
        np.concatenate([part.decisions for part in parts]) if graded else None,
    )


def play_deals(
    policies: list[Policy], deals: int, seed: int, rules: RuleSet | None = None, progress=None, grader=None
) -> TableGames:
    """Deals ``seed .. seed + deals - 1`` at once, each in every seating; each policy's totals, (deals * n, n)."""
    rules = rule_set(rules)
    n = len(policies)
    seating = np.arange(n)
    for i, policy in enumerate(policies):
        policy.reset(seat_seed(seed, i))
    faces = np.repeat(deal_dice(seed, deals, n, rules), n, axis=0)
    rotation = np.tile(seating, deals)  # table t plays seating t % n
    policy_in_seat = (seating[None, :] - rotation[:, None]) % n  # (tables, seats)
    tables = GameBatch(rules, n, len(faces))
    tables.start(faces)
    graded = None if grader is None else TableGames(np.zeros((len(faces), n), np.int64), np.zeros((len(faces), n)))
    if graded is not None:
        graded.decisions = np.zeros((len(faces), n), dtype=np.int64)
    _play_to_the_end(tables, policies, policy_in_seat, grader, graded)
    seat_of_policy = (seating[None, :] + rotation[:, None]) % n
    if progress is not None:
        progress.update(deals * n)
    totals = np.take_along_axis(tables.totals, seat_of_policy, axis=1).astype(np.int64)
    if graded is None:
        return TableGames(totals)
    return TableGames(totals, graded.losses, graded.decisions)


def _play_to_the_end(
    tables: GameBatch, policies: list[Policy], policy_in_seat: np.ndarray, grader=None, graded: TableGames | None = None
) -> None:
    all_tables = np.arange(tables.num_tables)
    while not tables.over.all():
        acting = policy_in_seat[all_tables, tables.seat]
        for index, policy in enumerate(policies):
            rows = np.flatnonzero(~tables.over & (acting == index))
            if not rows.size:
                continue
            masks = tables.legal_masks(rows)
            observations = policy_observations(policy, tables, rows, tables.seat[rows])
            actions = np.asarray(policy.act_batch(observations, masks), dtype=np.int64)
            if grader is not None and graded is not None and _all_legal(masks, actions):
                graded.losses[rows, index] += grader.table_losses(tables, rows, actions)  # type: ignore[index]
                graded.decisions[rows, index] += 1  # type: ignore[index]
            _, legal = tables.play(actions, rows)
            if not legal.all():
                raise ValueError(f"policy {getattr(policy, 'name', policy)!r} chose illegal action {int(actions[~legal][0])}")


def _all_legal(masks: np.ndarray, actions: np.ndarray) -> bool:
    inside = (actions >= 0) & (actions < masks.shape[1])
    return bool(inside.all() and (masks[np.arange(len(actions)), actions] != 0).all())


# -- figures --------------------------------------------------------------------------------------


def _deal_mean_ci(per_game: np.ndarray, n: int, is_rate: bool = False) -> tuple[float, tuple[float, float]]:
    """Mean of a per-game figure and its 95% CI, with each deal's average as one observation.

    A rate's interval is clipped to [0, 1]: the normal approximation can overshoot near the ends.
    """
    mean, low, high = mean_ci(per_game.reshape(-1, n).mean(axis=1), clip=(0.0, 1.0) if is_rate else None)
    return mean, (low, high)


def summarize_table(log: TableLog, seed: int, grading: str = "") -> TournamentResult:
    """The standings of the games in ``log``, played from ``seed`` (``grading``: how its decisions were graded)."""
    n = len(log.names)
    totals = log.totals
    shares = win_shares(totals)
    standings = []
    for i, name in enumerate(log.names):
        win_rate, win_ci = _deal_mean_ci(shares[:, i], n, is_rate=True)
        mean_score, score_ci = _deal_mean_ci(totals[:, i].astype(np.float64), n)
        standings.append(
            Standing(
                policy=name,
                games=len(totals),
                win_rate=win_rate,
                win_rate_ci95=win_ci,
                sole_wins=int((shares[:, i] == 1).sum()),
                shared_wins=int(((shares[:, i] > 0) & (shares[:, i] < 1)).sum()),
                mean_score=mean_score,
                mean_score_ci95=score_ci,
                **_loss_figures(log, i),
            )
        )
    matrix: list[list[float | None]] = [[None] * n for _ in range(n)]
    matrix_ci: list[list[tuple[float, float] | None]] = [[None] * n for _ in range(n)]
    for i in range(n):
        for j in range(n):
            if i != j:
                above = (totals[:, i] > totals[:, j]) + 0.5 * (totals[:, i] == totals[:, j])
                matrix[i][j], matrix_ci[i][j] = _deal_mean_ci(above, n, is_rate=True)
    return TournamentResult(list(log.names), len(totals), log.deals, seed, standings, matrix, matrix_ci, log.rules, grading)


def _loss_figures(log: TableLog, policy: int) -> dict:
    """A policy's loss in chance of winning, in percentage points: per decision, and per game with its interval."""
    if log.losses is None or log.decisions is None:
        return {}
    per_game, per_game_ci = _deal_mean_ci(100 * log.losses[:, policy], len(log.names))
    decisions = int(log.decisions[:, policy].sum())
    return {
        "loss_per_decision_pp": 100 * float(log.losses[:, policy].sum()) / max(decisions, 1),
        "loss_per_game_pp": per_game,
        "loss_per_game_pp_ci95": per_game_ci,
    }


# -- entry points ---------------------------------------------------------------------------------


def check_table_size(count: int) -> None:
    """Check that ``count`` policies fill a table (2 to MAX_PLAYERS); raise ValueError if not."""
    if not 2 <= count <= MAX_PLAYERS:
        raise ValueError(f"a table seats 2 to {MAX_PLAYERS} policies, got {count}")


def run_table(
    policies: list[Policy] | list[str],
    names: list[str],
    games: int,
    seed: int = 0,
    rules: RuleSet | None = None,
    batch_size: int = 4096,
    show_progress: bool = False,
    on_ray: bool = False,
    grade: bool = False,
) -> tuple[TournamentResult, TableLog]:
    """Play a tournament of ``policies`` (displayed as ``names``) at one table and summarize it.

    ``grade``: at a table of two under rules the two-player solution covers, every decision is graded in
    chance of winning against the solved game when that solution is computed (the result says how to compute it
    otherwise); other tables are not graded, and say nothing of it.

    The deals are cut into slices of whole batches, played here one after the other or, with
    ``on_ray``, as Ray tasks (policies then given by name and built in the workers); the slices'
    totals are merged in order, so both give the same result.
    """
    check_table_size(len(policies))
    rules = rule_set(rules)
    n = len(policies)
    if games < 2 * n:
        raise ValueError(f"games must be at least {2 * n} (two deals, for a confidence interval), got {games}")
    if on_ray and not all(isinstance(policy, str) for policy in policies):
        raise ValueError("policies played on Ray are given by name (random, greedy, optimal, ppo:PATH), not as objects")
    if on_ray:
        check_sendable_rules(rules)
    deals, deals_per_batch = math.ceil(games / n), max(1, batch_size // n)
    batches_per_slice = math.ceil(math.ceil(deals / deals_per_batch) / (4 * cluster_cpus())) if on_ray else 1
    slices = game_slices(deals, batches_per_slice * deals_per_batch)
    grading = ""
    grade = grade and n == 2 and not rules.has_bonus_or_joker  # the tables the two-player solution covers
    if grade:
        from agents.two_player.grading import TwoPlayerGrader, two_player_grader

        grader = two_player_grader(rules, n)
        graded = isinstance(grader, TwoPlayerGrader)
        grading = "decisions graded against the solved two-player game" if graded else str(grader)
        grade = graded
    tasks = [(list(policies), size * n, seed + first, rules, batch_size, grade) for first, size in slices]
    progress = None
    if show_progress:
        from tqdm import tqdm

        progress = tqdm(total=deals * n, unit="game", desc="tournament", file=sys.stderr)
    try:
        advance = None if progress is None else (lambda index: progress.update(tasks[index][1]))
        games_played = merge_games(run_tasks(play_table_slice, tasks, on_ray, progress=advance))
    finally:
        if progress is not None:
            progress.close()
    log = TableLog(unique_names(names), games_played.totals, deals, rules.name, games_played.losses, games_played.decisions)
    return summarize_table(log, seed, grading), log


def play_table_slice(
    policies: Sequence[Policy | str], games: int, seed: int, rules: RuleSet | None, batch_size: int, grade: bool = False
) -> TableGames:
    """One task of :func:`run_table`: ``play_table`` for policy objects, or ones built here by name; graded when asked."""
    seated: list[Policy] = [
        make_table_policy(policy, len(policies), rules=rules, seed=seat_seed(seed, i)) if isinstance(policy, str) else policy
        for i, policy in enumerate(policies)
    ]
    grader = None
    if grade:
        from agents.two_player.grading import TwoPlayerGrader

        grader = TwoPlayerGrader(rules)
    return play_table_games(seated, games, seed, rules, batch_size, grader=grader)


def tournament(
    policy_names: list[str], games: int, seed: int = 0, rules: RuleSet | str | None = None, on_ray: bool = False, **kwargs
):
    """A tournament of policies given by name (``random``, ``greedy``, ``optimal``, ``ppo:PATH``), here or on Ray."""
    check_table_size(len(policy_names))
    rules = rule_set(rules)
    policies = [
        make_table_policy(name, len(policy_names), rules=rules, seed=seat_seed(seed, i)) for i, name in enumerate(policy_names)
    ]
    return run_table(policy_names if on_ray else policies, policy_names, games, seed, rules, on_ray=on_ray, **kwargs)


def evaluate_model_at_table(
    model, name: str, opponents: list[str], games: int, seed: int, seat: int = 0, rules: RuleSet | str | None = None
):
    """An in-memory MaskablePPO model in ``seat`` against the named ``opponents`` at one table under ``rules``."""
    rules = rule_set(rules)
    n = len(opponents) + 1
    policies = [make_table_policy(opponent, n, rules=rules, seed=seat_seed(seed, i)) for i, opponent in enumerate(opponents)]
    names = list(opponents)
    policies.insert(seat, model_policy(model, name, n, rules))
    names.insert(seat, name)
    return run_table(policies, names, games, seed, rules)


# -- reports --------------------------------------------------------------------------------------


def print_tournament(result: TournamentResult) -> None:
    """Print the standings of ``result`` as a table."""
    from rich.table import Table

    from yacht_env.render import report_console

    n = len(result.table)
    console = report_console()
    title = (
        f"{result.rules}: {result.games:,} games at a table of {n} ({result.deals:,} deals x {n} seatings, seeds "
        f"{result.seed}..{result.seed + result.deals - 1}); a shared first place counts 1/k of a win"
    )
    table = Table(title=title)
    graded = all(s.loss_per_game_pp is not None for s in result.standings)
    columns = ["policy", "win rate [95% CI]", "sole wins", "shared wins", "mean score [95% CI]"]
    if graded:
        columns += ["loss per decision, pp", "loss per game, pp [95% CI]"]
    for column in columns:
        table.add_column(column, justify="left" if column == "policy" else "right")
    for s in result.standings:
        cells = [
            s.policy,
            f"{100 * s.win_rate:.2f}% [{100 * s.win_rate_ci95[0]:.2f}, {100 * s.win_rate_ci95[1]:.2f}]",
            f"{s.sole_wins:,}",
            f"{s.shared_wins:,}",
            f"{s.mean_score:.2f} [{s.mean_score_ci95[0]:.2f}, {s.mean_score_ci95[1]:.2f}]",
        ]
        if graded and s.loss_per_game_pp_ci95 is not None:
            low, high = s.loss_per_game_pp_ci95
            cells += [f"{s.loss_per_decision_pp:.4f}", f"{s.loss_per_game_pp:.3f} [{low:.3f}, {high:.3f}]"]
        table.add_row(*cells)
    console.print(table)
    if result.grading:
        console.print(
            result.grading
            + (
                ": a decision's loss is the drop in its chance of winning (percentage points) from the best action's,"
                " when both play to win from there on"
                if graded
                else ""
            )
        )
    matrix = Table(
        title=f"{result.rules}: head to head: how often the row policy finished above the column policy (ties half) [95% CI]"
    )
    matrix.add_column("row above column", justify="left")
    for name in result.table:
        matrix.add_column(name, justify="right")
    for i, name in enumerate(result.table):
        cells = []
        for j in range(n):
            rate, ci = result.head_to_head[i][j], result.head_to_head_ci95[i][j]
            cells.append("—" if rate is None or ci is None else f"{100 * rate:.1f}% [{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]")
        matrix.add_row(name, *cells)
    console.print(matrix)


def save_tournament_json(path, result: TournamentResult) -> None:
    """Write ``result`` to ``path`` as JSON."""
    text = json.dumps(asdict(result), indent=2) + "\n"
    write_atomically(path, lambda handle: handle.write(text.encode()))


def save_tournament_plot(path, result: TournamentResult, log: TableLog) -> None:
    """Plot the games of ``log`` for ``result`` and save the figure to ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = len(result.table)
    figure, (rates, scores) = plt.subplots(1, 2, figsize=(12, 5))
    positions = np.arange(n)
    win_rates = np.array([s.win_rate for s in result.standings])
    errors = np.array([[s.win_rate - s.win_rate_ci95[0], s.win_rate_ci95[1] - s.win_rate] for s in result.standings]).T
    rates.bar(positions, 100 * win_rates, yerr=100 * errors, capsize=6, color="tab:blue")
    rates.axhline(100 / n, color="black", linestyle="--", label=f"fair share {100 / n:.1f}%")
    rates.set_xticks(positions, result.table, rotation=15)
    rates.set_ylabel("win rate, % (95% CI)")
    rates.set_title(f"{result.rules}: win rate at one table, {result.games:,} games")
    rates.legend()
    bins = np.arange(math.floor(log.totals.min()) - 0.5, math.ceil(log.totals.max()) + 5.5, 5)
    for i, name in enumerate(result.table):
        label = f"{name} (mean {log.totals[:, i].mean():.1f})"
        scores.hist(log.totals[:, i], bins=bins, histtype="step", linewidth=1.6, label=label)
    scores.set_xlabel("final score")
    scores.set_ylabel("games")
    scores.set_title("final scores")
    scores.legend()
    figure.tight_layout()
    write_atomically(path, lambda handle: figure.savefig(handle, format="png", dpi=120))
    plt.close(figure)


def main_table(
    table: str,
    games: int,
    seed: int,
    batch_size: int,
    json_path=None,
    plot_path=None,
    show_progress=True,
    on_ray=False,
    rules: RuleSet | str | None = None,
    grade: bool = True,
) -> TournamentResult:
    """``python -m agents.evaluate --table a,b,... [--rules NAME]``: play, print, and write the JSON and plot.

    At a table of two, decisions are graded in chance of winning when the solved game is on disk (``grade``).
    """
    names = [name.strip() for name in table.split(",") if name.strip()]
    result, log = tournament(
        names, games, seed, rules=rules, batch_size=batch_size, show_progress=show_progress, on_ray=on_ray, grade=grade
    )
    print_tournament(result)
    if json_path:
        save_tournament_json(json_path, result)
    if plot_path:
        save_tournament_plot(plot_path, result, log)
    return result
