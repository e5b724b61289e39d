"""Compare policies with the exact optimum on common random numbers.

    python -m agents.evaluate --policy random --policy greedy --policy optimal --games 10000
    python -m agents.evaluate --rules yahtzee --games 10000          # any rule set of yacht_env.rules.RULE_SETS
    python -m agents.evaluate --table optimal,greedy --games 20000   # win rates at one table
    python -m agents.evaluate --games 10000000 --ray                 # the games as Ray tasks (--ray-address: a cluster)
    python -m agents.evaluate --video videos/ --policy optimal          # MP4s of 3 games (video extra)

``--table`` plays full games at one table instead: see :mod:`agents.evaluation.tournament`.

Every policy plays the same games: game ``g`` is ``Yacht-v0`` reset with seed ``seed + g``, which
fixes its whole dice stream (for each turn and roll, the faces re-rolled dice land on, in order),
so the differences between policies are paired and far less noisy than independent runs. Games
are played in batches on the vector env; with ``--ray``, slices of batches run as Ray tasks and
merge into exactly the figures of the local run. Each decision is graded with the DP: its *regret* is
Q*(best action) - Q*(chosen action), the exact expected points that decision gives away (0 for a choice tied with
the best: :func:`agents.solvers.exact_solution.gaps_to_best`, the ties ``optimal`` breaks by its lowest action). Under rules
with bonuses (``--rules yahtzee``, ``yatzy``, ...) the DP's state includes the upper subtotal and the
Yahtzee box, read from the game at every decision, so regret counts the bonuses a decision forgoes.

Figures (per policy): mean final score with standard deviation and 95% confidence interval,
percent of the optimal expected score, the paired difference to ``optimal`` with its 95% CI, mean
regret per decision, and mean regret per game (the sum over a game's decisions) with its 95% CI.
A sheet table gives the median score, how often the upper bonus is earned and the five-alike row
(Yacht, Yahtzee, Yatzy) scores its points, and where the regret is: per re-roll and per row choice,
and per game in each turn. A third table gives each policy's score quantiles and P(score >= t) next to the optimum's exact
distribution (:mod:`agents.solvers.distribution`); ``--plot`` draws the histograms over it. The exact
distribution covers rule sets without bonuses or jokers; for the others both show the games alone.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields

import numpy as np

from agents.evaluation.distributed import check_sendable_rules, cluster_cpus, game_slices, run_tasks
from agents.evaluation.stats import mean_ci
from agents.policies.guard import guard, replacement_note, warn_replaced
from agents.policies.policy import Policy
from agents.registry import default_policies, make_policy, or_list, policy_specs, solitaire_names
from agents.solvers.exact_solution import gaps_to_best
from agents.solvers.optimal import expected_score, solve
from yacht_env.atomic_files import OutputError, write_atomically
from yacht_env.game import MAX_PLAYERS
from yacht_env.option_values import whole_number
from yacht_env.rules import RULE_SETS, RuleSet, rule_set


@dataclass
class GameLog:
    """Per-game figures of one policy over the evaluated games."""

    scores: np.ndarray  # final total of each game
    regret_by_kind: np.ndarray  # (games, 2): summed regret of the re-roll choices, then of the row choices
    decisions_by_kind: np.ndarray  # (games, 2): how many of each
    regret_by_turn: np.ndarray  # (games, turns): summed regret of each turn's decisions
    upper_total: np.ndarray  # the upper rows' points at the end of each game
    five_alike_scored: np.ndarray  # whether the five-alike row (Yacht, Yahtzee) scored its points
    # Decisions of each game that optimal made for the policy: the guard replaces a policy that cannot choose for the
    # rest of its batch, so these games' figures are partly optimal's.
    replaced_decisions: np.ndarray

    @property
    def replaced_games(self) -> int:
        """Games in which optimal made some of the policy's decisions."""
        return int((self.replaced_decisions > 0).sum())

    @property
    def regret(self) -> np.ndarray:
        """Summed regret of each game's decisions."""
        return self.regret_by_kind.sum(axis=1)

    @property
    def decisions(self) -> np.ndarray:
        """Decisions taken in each game."""
        return self.decisions_by_kind.sum(axis=1)


@dataclass
class Summary:
    """One policy's figures over the games: score, its CI, the paired difference to optimal, regret."""

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
    median: float
    regret_per_reroll_decision: float
    regret_per_row_decision: float
    regret_by_turn: list[float]  # mean regret per game in turn 1, 2, ...
    upper_bonus_rate: float | None  # None where the rules have no upper bonus
    upper_bonus_ci95: tuple[float, float] | None
    five_alike_rate: float | None  # None where the rules have no row for five alike
    five_alike_ci95: tuple[float, float] | None
    replaced_games: int = 0  # games in which the policy could not choose and optimal played for it: figures partly optimal's
    replaced_decisions: int = 0  # the decisions optimal made in its place


def five_alike_row(rules: RuleSet) -> int:
    """The row that pays for five alike and nothing else (Yacht, Yahtzee, Yatzy), or -1."""
    alike = rules.alike_hands
    for row in range(rules.num_rows):
        column = rules.hand_scores[:, row]
        if (column[alike] > 0).all() and (column[~alike] == 0).all():
            return row
    return -1


def merge_logs(logs: list[GameLog]) -> GameLog:
    """The logs of consecutive slices of games, as one log."""
    return GameLog(*(np.concatenate([getattr(log, field.name) for log in logs]) for field in fields(GameLog)))


def play_games(
    policy: Policy,
    games: int,
    seed: int = 0,
    rules: RuleSet | None = None,
    batch_size: int = 4096,
    progress=None,
) -> GameLog:
    """Play ``games`` games (seeds ``seed .. seed + games - 1``) and grade every decision with the DP.

    Batch ``[first, first + n)`` re-seeds the policy with ``seed + first``, so a run of whole
    batches plays the same wherever it runs: ``play_games(p, n, seed + first)`` on a slice that
    starts on a batch boundary gives exactly those games of the whole run.
    """
    return merge_logs([play_batch(policy, size, seed + first, rules, progress) for first, size in game_slices(games, batch_size)])


def play_batch(policy: Policy, games: int, seed: int, rules: RuleSet | None = None, progress=None) -> GameLog:
    """Games ``seed .. seed + games - 1`` at once on one vector env, every decision graded with the DP."""
    from yacht_env.vector_env import YachtVectorEnv

    rules = rule_set(rules)
    solution = solve(rules)
    scores = np.zeros(games)
    regret_by_kind = np.zeros((games, 2))
    decisions_by_kind = np.zeros((games, 2), dtype=np.int64)
    regret_by_turn = np.zeros((games, rules.num_turns))
    upper_total = np.zeros(games, dtype=np.int64)
    five_alike_scored = np.zeros(games, dtype=bool)
    first_row_action, alike_row = rules.dice.num_rerolls, five_alike_row(rules)
    upper_rows = np.array([category.upper for category in rules.categories])
    every_game = np.arange(games)
    replaced_decisions = np.zeros(games, dtype=np.int64)
    policy = guard(policy)  # a policy that cannot choose is replaced by optimal for these games, and the log says so
    policy.reset(seed)
    reads_table = getattr(policy, "table_encoding", None)
    if reads_table is not None and reads_table.num_players != 1:
        raise ValueError(f"policy {policy.name!r} plays at tables of {reads_table.num_players}; evaluate it with --table")
    env = YachtVectorEnv(num_envs=games, rules=rules, observation_encoding=policy.encoding.name)
    obs, infos = env.reset(seed=seed)
    playing = np.ones(games, dtype=bool)
    while playing.any():
        masks = infos["action_mask"]
        position = policy.encoding.decode_batch(obs)
        if reads_table is None:
            actions = policy.act_batch(obs, masks)
        else:  # a policy that reads its own total (target:T) sees a table of one
            totals = scores.astype(np.int64)[:, None]
            actions = policy.act_batch(reads_table.encode_batch(*position, totals, position[2][:, None]), masks)
        if policy.replaced is not None:  # the fallback chose this step's actions (and will choose the rest)
            replaced_decisions += playing
        # The sheet state (upper subtotal, Yahtzee box) is the game's own, whatever the policy reads.
        q = (
            solution.q_values_batch(*position, *env.sheet_state)
            if rules.has_bonus_or_joker
            else solution.q_values_batch(*position)
        )
        actions = np.asarray(actions)
        lost = np.where(playing, 0.0 - gaps_to_best(q)[every_game, actions], 0.0)
        is_row = actions >= first_row_action
        regret_by_kind[every_game, is_row.astype(np.int64)] += lost
        decisions_by_kind[every_game, is_row.astype(np.int64)] += playing
        regret_by_turn[every_game, env.turn - 1] += lost
        row = np.where(is_row, actions - first_row_action, 0)
        placed = playing & is_row
        # A row's points come from the hand alone for the upper rows and the five-alike row (a joker changes others).
        points = rules.hand_scores[position[0], row]
        upper_total += np.where(placed & upper_rows[row], points, 0)
        five_alike_scored |= placed & (row == alike_row) & (points > 0)
        obs, rewards, terminations, truncations, infos = env.step(actions)
        scores += np.where(playing, rewards, 0.0)
        playing &= ~(terminations | truncations)
    env.close()
    if progress is not None:
        progress.update(games)
    return GameLog(scores, regret_by_kind, decisions_by_kind, regret_by_turn, upper_total, five_alike_scored, replaced_decisions)


def summarize(name: str, log: GameLog, optimal: GameLog, optimum: float, rules: RuleSet | None = None) -> Summary:
    """The figures of one policy's games, paired game by game with the optimal policy's on the same dice."""
    rules = rule_set(rules)
    mean, low, high = mean_ci(log.scores)
    bonus_rate: float | None = None
    bonus_ci: tuple[float, float] | None = None
    alike_rate: float | None = None
    alike_ci: tuple[float, float] | None = None
    if rules.bonus_points > 0:
        bonus_rate, bonus_low, bonus_high = mean_ci(log.upper_total >= rules.bonus_threshold, clip=(0, 1))
        bonus_ci = (bonus_low, bonus_high)
    if five_alike_row(rules) >= 0:
        alike_rate, alike_low, alike_high = mean_ci(log.five_alike_scored, clip=(0, 1))
        alike_ci = (alike_low, alike_high)
    kind_regret, kind_decisions = log.regret_by_kind.sum(axis=0), log.decisions_by_kind.sum(axis=0)
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
        median=float(np.median(log.scores)),
        regret_per_reroll_decision=float(kind_regret[0] / max(kind_decisions[0], 1)),
        regret_per_row_decision=float(kind_regret[1] / max(kind_decisions[1], 1)),
        regret_by_turn=[float(v) for v in log.regret_by_turn.mean(axis=0)],
        upper_bonus_rate=bonus_rate,
        upper_bonus_ci95=bonus_ci,
        five_alike_rate=alike_rate,
        five_alike_ci95=alike_ci,
        replaced_games=log.replaced_games,
        replaced_decisions=int(log.replaced_decisions.sum()),
    )


def evaluate_policies(
    policies: Mapping[str, Policy | str],
    games: int = 10_000,
    seed: int = 0,
    rules: RuleSet | None = None,
    batch_size: int = 4096,
    show_progress: bool = False,
    on_ray: bool = False,
) -> tuple[list[Summary], dict[str, GameLog]]:
    """Play every policy on the same games; ``optimal`` is played too when absent, as the paired reference.

    The games are cut into slices of whole batches, played here one after the other or, with
    ``on_ray``, as Ray tasks (:mod:`agents.evaluation.distributed`; policies are then given by name and built
    in the workers); the slices' logs are merged in order, so both give the same figures.
    """
    rules = rule_set(rules)
    to_play = dict(policies)
    if "optimal" not in to_play:
        to_play["optimal"] = "optimal" if on_ray else make_policy("optimal", rules=rules)
    if on_ray and not all(isinstance(policy, str) for policy in to_play.values()):
        raise ValueError("policies played on Ray are given by name (random, greedy, optimal, ppo:PATH), not as objects")
    if on_ray:
        check_sendable_rules(rules)
    batches_per_slice = 1
    if on_ray:  # about four tasks per CPU: enough to balance the load, few enough to keep the overhead small
        batches = math.ceil(games / batch_size) * len(to_play)
        batches_per_slice = max(1, math.ceil(batches / (4 * cluster_cpus())))
    slices = game_slices(games, batches_per_slice * batch_size)
    tasks = [(policy, length, seed + first, rules, batch_size) for policy in to_play.values() for first, length in slices]
    progress = None
    if show_progress:
        from tqdm import tqdm

        progress = tqdm(total=games * len(to_play), unit="game", desc="evaluating", file=sys.stderr)
    try:
        advance = None if progress is None else (lambda index: progress.update(tasks[index][1]))
        results = run_tasks(play_slice, tasks, on_ray, progress=advance)
    finally:
        if progress is not None:
            progress.close()
    logs = {name: merge_logs(results[i * len(slices) : (i + 1) * len(slices)]) for i, name in enumerate(to_play)}
    optimum = expected_score(rules)
    return [summarize(name, logs[name], logs["optimal"], optimum, rules) for name in policies], logs


def play_slice(policy: Policy | str, games: int, seed: int, rules: RuleSet | None, batch_size: int) -> GameLog:
    """One task of :func:`evaluate_policies`: ``play_games`` for a policy object, or one built here by name."""
    if isinstance(policy, str):
        policy = make_policy(policy, rules=rules)
    return play_games(policy, games, seed, rules, batch_size)


def evaluate(
    policy_names: list[str], games: int = 10_000, seed: int = 0, rules: RuleSet | None = None, on_ray: bool = False, **kwargs
):
    """Evaluate policies given by name (``random``, ``greedy``, ``optimal``, ``ppo:PATH``), here or on Ray."""
    names = list(dict.fromkeys(policy_names))
    rules = rule_set(rules)
    if on_ray:
        check_sendable_rules(rules)
        for name in names:  # a bad name or model fails here with its own message, before any task starts
            make_policy(name, rules=rules)
        return evaluate_policies({name: name for name in names}, games, seed, rules, on_ray=True, **kwargs)
    policies = {name: make_policy(name, rules=rules, seed=seed) for name in names}
    return evaluate_policies(policies, games, seed, rules, **kwargs)


def evaluate_model(
    model, encoding: str, games: int, seed: int, reference=(), name: str = "ppo", rules: RuleSet | str | None = None
) -> list[Summary]:
    """Evaluate an in-memory MaskablePPO model (and the named reference policies) against the optimum under ``rules``."""
    from agents.learned.ppo import PPOPolicy

    rules = rule_set(rules)
    policies = {name: PPOPolicy(model, name, rules=rules, encoding=encoding)}
    policies.update({ref: make_policy(ref, rules=rules, seed=seed) for ref in reference})
    summaries, _ = evaluate_policies(policies, games, seed, rules)
    return summaries


# The widest policy name a report table shows as it is: rich cuts a wider cell to fit the terminal
# ("ppo:runs/quick/model.safeten…"), so a longer name is listed in full under the table instead.
POLICY_CELL_WIDTH = 20


def policy_labels(names: list[str]) -> tuple[list[str], list[str]]:
    """The table's label for each policy name, and the notes that give the cut names in full.

    A name up to POLICY_CELL_WIDTH characters is its own label; a longer one is labelled by its
    kind (the part before ``:``) and a note number, ``ppo [1]``, and note ``[1] ppo:PATH`` names it.
    """
    labels: list[str] = []
    notes: list[str] = []
    for name in names:
        if len(name) <= POLICY_CELL_WIDTH:
            labels.append(name)
            continue
        number = len(notes) + 1
        kind = name.split(":", 1)[0][: POLICY_CELL_WIDTH - 6]
        labels.append(f"{kind} [{number}]")
        notes.append(f"[{number}] {name}")
    return labels, notes


def print_policy_notes(console, notes: list[str]) -> None:
    """The long policy names in full, one a line, never cut or folded (a path is copied from here)."""
    for note in notes:
        console.print(note, soft_wrap=True, markup=False, highlight=False)


def print_table(summaries: list[Summary], optimum: float, games: int, seed: int, rules: RuleSet | None = None) -> None:
    """The summaries as a rich table on the terminal, with the policy names too long for it in full beneath."""
    from rich.table import Table
    from rich.text import Text

    from yacht_env.render import report_console

    rules = rule_set(rules)
    labels, notes = policy_labels([s.policy for s in summaries])
    table = Table(title=f"{rules.name}: {games:,} games, seeds {seed}..{seed + games - 1}; optimal expected score {optimum:.4f}")
    columns = (
        "policy",
        "mean ± sd",
        "95% CI",
        "% of optimum",
        "diff to optimal [95% CI]",
        "regret/decision",
        "regret/game [95% CI]",
    )
    for column in columns:
        table.add_column(column, justify="left" if column == "policy" else "right")
    for s, label in zip(summaries, labels):
        table.add_row(
            Text(label),
            f"{s.mean:.2f} ± {s.std:.2f}",
            f"[{s.ci95[0]:.2f}, {s.ci95[1]:.2f}]",
            f"{s.percent_of_optimal:.2f}%",
            f"{s.diff_to_optimal:+.2f} [{s.diff_ci95[0]:+.2f}, {s.diff_ci95[1]:+.2f}]",
            f"{s.regret_per_decision:.4f}",
            f"{s.regret_per_game:.3f} [{s.regret_per_game_ci95[0]:.3f}, {s.regret_per_game_ci95[1]:.3f}]",
        )
    console = report_console()
    console.print(table)
    print_policy_notes(console, notes + replacement_notes(summaries))


def replacement_notes(summaries: list[Summary]) -> list[str]:
    """A line for each policy that optimal played for in some games (its figures are partly optimal's)."""
    return [replacement_note(s.policy, s.replaced_games, s.games, s.replaced_decisions) for s in summaries if s.replaced_games]


def print_sheet_table(summaries: list[Summary], rules: RuleSet | None = None) -> None:
    """Median, bonus and five-alike rates, and where the regret is: per kind of choice, and per turn."""
    from rich.table import Table
    from rich.text import Text

    from yacht_env.render import report_console

    rules = rule_set(rules)
    labels, notes = policy_labels([s.policy for s in summaries])
    alike = five_alike_row(rules)
    table = Table(title=f"{rules.name}: the sheet, and where the points are lost (regret: exact expected points given away)")
    columns = ["policy", "median"]
    if rules.bonus_points > 0:
        columns.append("upper bonus [95% CI]")
    if alike >= 0:
        columns.append(f"{rules.categories[alike].title} scored [95% CI]")
    columns += ["regret/re-roll choice", "regret/row choice"]
    for column in columns:
        table.add_column(column, justify="left" if column == "policy" else "right")
    for s, label in zip(summaries, labels):
        cells: list[str | Text] = [Text(label), f"{s.median:.0f}"]
        for rate, ci in ((s.upper_bonus_rate, s.upper_bonus_ci95), (s.five_alike_rate, s.five_alike_ci95)):
            if rate is not None and ci is not None:
                cells.append(f"{100 * rate:.2f}% [{100 * ci[0]:.2f}, {100 * ci[1]:.2f}]")
        table.add_row(*cells, f"{s.regret_per_reroll_decision:.4f}", f"{s.regret_per_row_decision:.4f}")
    by_turn = Table(title=f"{rules.name}: regret per game in each turn")
    by_turn.add_column("policy", justify="left")
    for turn in range(rules.num_turns):
        by_turn.add_column(str(turn + 1), justify="right")
    for s, label in zip(summaries, labels):
        by_turn.add_row(Text(label), *(f"{v:.3f}" for v in s.regret_by_turn))
    console = report_console()
    console.print(table)
    console.print(by_turn)
    print_policy_notes(console, notes)


QUANTILES = (0.1, 0.25, 0.5, 0.75, 0.9)


def score_thresholds(optimum: float) -> tuple[int, int, int]:
    """The scores ``t`` of the P(score >= t) columns: the multiple of 50 at or above the optimum and its neighbours.

    150, 200, 250 for Yacht (optimum 169.8); 250, 300, 350 for Yahtzee (254.6); 200, 250, 300 for Yatzy (248.4).
    """
    top = 50 * math.ceil(optimum / 50)
    return (top - 50, top, top + 50)


def distribution_rows(logs: dict[str, GameLog], names: list[str], rules: RuleSet | None = None) -> list[dict]:
    """Score quantiles and P(score >= t) of each policy's games, then of the exact optimal distribution.

    The exact distribution (:mod:`agents.solvers.distribution`) covers rule sets whose rows score on their
    own; under rules with bonuses or jokers the rows are the games' alone.
    """
    from agents.solvers.distribution import at_least, quantiles, score_distribution

    rules = rule_set(rules)
    thresholds = score_thresholds(expected_score(rules))
    rows = []
    for name in names:
        scores = logs[name].scores
        rows.append(
            {
                "policy": name,
                "exact": False,
                "quantiles": {str(q): float(np.quantile(scores, q, method="inverted_cdf")) for q in QUANTILES},
                "at_least": {str(t): float((scores >= t).mean()) for t in thresholds},
            }
        )
    if rules.has_bonus_or_joker:
        return rows
    pmf = score_distribution(rules=rules)
    rows.append(
        {
            "policy": "optimal (exact)",
            "exact": True,
            "quantiles": {str(q): float(v) for q, v in zip(QUANTILES, quantiles(pmf, QUANTILES))},
            "at_least": {str(t): float(v) for t, v in zip(thresholds, at_least(pmf, thresholds))},
        }
    )
    return rows


def print_distribution_table(rows: list[dict], games: int, rules: RuleSet | None = None) -> None:
    """Each policy's score quantiles and P(score >= t), next to the optimum's exact distribution, under ``rules``."""
    from rich.table import Table

    from yacht_env.render import report_console

    exact = any(row["exact"] for row in rows)
    title = f"{rule_set(rules).name}: final-score distribution over the {games:,} games" + (
        ", and the optimum's exact distribution" if exact else ""
    )
    table = Table(title=title)
    thresholds = list(rows[0]["at_least"])
    table.add_column("policy", justify="left")
    for q in QUANTILES:
        table.add_column(f"q{round(100 * q)}", justify="right")
    for t in thresholds:
        table.add_column(f"P(≥{t})", justify="right")
    for row in rows:
        table.add_row(
            row["policy"],
            *(f"{row['quantiles'][str(q)]:.0f}" for q in QUANTILES),
            *(f"{100 * row['at_least'][t]:.2f}%" for t in thresholds),
        )
    report_console().print(table)


def save_json(
    path,
    summaries: list[Summary],
    optimum: float,
    games: int,
    seed: int,
    distribution: list[dict] | None = None,
    rules: RuleSet | None = None,
) -> None:
    """Every figure as JSON, written atomically."""
    report = {
        "rules": rule_set(rules).name,
        "games": games,
        "seed": seed,
        "optimal_expected_score": optimum,
        "policies": [asdict(s) for s in summaries],
    }
    if distribution is not None:
        report["score_distribution"] = distribution
    write_atomically(path, lambda handle: handle.write(json.dumps(report, indent=2).encode() + b"\n"))


def save_plot(path, logs: dict[str, GameLog], names: list[str], optimum: float, rules: RuleSet | None = None) -> None:
    """Histograms of the final scores over the optimum's exact distribution (where there is one), as a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(9, 5))
    low = min(logs[name].scores.min() for name in names)
    high = max(logs[name].scores.max() for name in names)
    bins = np.arange(math.floor(low) - 0.5, math.ceil(high) + 5.5, 5)
    for name in names:
        label = f"{name} (mean {logs[name].scores.mean():.1f})"
        # matplotlib's hints leave out the arrays hist documents and takes for bins
        axes.hist(logs[name].scores, bins=bins, histtype="step", linewidth=1.6, label=label)  # type: ignore[arg-type]
    rules = rule_set(rules)
    if not rules.has_bonus_or_joker:  # the exact distribution covers rows that score on their own
        from agents.solvers.distribution import score_distribution

        pmf = score_distribution(rules=rules)
        games = len(logs[names[0]].scores)
        edges = np.ceil(bins[:-1]).astype(np.int64)  # bin i holds scores edges[i] .. edges[i] + 4
        cumulative = np.concatenate(([0.0], np.cumsum(pmf)))
        per_bin = cumulative[np.clip(edges + 5, 0, len(pmf))] - cumulative[np.clip(edges, 0, len(pmf))]
        axes.stairs(games * per_bin, bins, color="black", linewidth=1.2, label="optimal, exact distribution")
    axes.axvline(optimum, color="black", linestyle="--", label=f"optimal expected score {optimum:.2f}")
    axes.set_xlabel("final score")
    axes.set_ylabel("games")
    axes.set_title(f"{rules.name} final scores over {len(next(iter(logs.values())).scores):,} common-random-number games")
    axes.legend()
    figure.tight_layout()
    write_atomically(path, lambda handle: figure.savefig(handle, format="png", dpi=120))
    plt.close(figure)


def rules_value(text: str) -> RuleSet:
    """``--rules``: a name of ``yacht_env.rules.RULE_SETS`` (argparse names the option in its message)."""
    if text not in RULE_SETS:
        raise argparse.ArgumentTypeError(f"unknown rule set {text!r}; expected one of {', '.join(RULE_SETS)}")
    return RULE_SETS[text]


def policies_help() -> str:
    """The epilog of ``--help``: every policy of :mod:`agents.registry` with its help line."""
    specs = policy_specs()
    width = max(len(spec.help_name) for spec in specs)
    return "policies (--policy, --table):\n" + "\n".join(f"  {spec.help_name:<{width}}  {spec.help}" for spec in specs)


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``python -m agents.evaluate``."""
    parser = argparse.ArgumentParser(
        prog="python -m agents.evaluate",
        description=__doc__,
        epilog=policies_help(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--policy",
        action="append",
        help=f"{or_list(solitaire_names())} (repeatable; default: {', '.join(default_policies())})",
    )
    parser.add_argument(
        "--table",
        help=(
            f"comma-separated policies at one table of 2 to {MAX_PLAYERS} (e.g. win,optimal): "
            "play full games and report win rates"
        ),
    )
    parser.add_argument(
        "--rules",
        type=rules_value,
        default=RULE_SETS["yacht"],
        metavar="NAME",
        help=(f"the rule set played: {', '.join(RULE_SETS)} (default yacht)"),
    )
    parser.add_argument(
        "--games", type=whole_number(), default=10_000, help="games per policy, or games at the --table (default 10000)"
    )
    parser.add_argument(
        "--seed", type=whole_number(), default=0, help="seed of game 0, 0 or more; game g uses seed + g (default 0)"
    )
    parser.add_argument("--batch-size", type=whole_number(), default=4096, help="games played at once (default 4096)")
    parser.add_argument("--json", help="write every figure to this JSON file")
    parser.add_argument("--plot", help="write a PNG of the score distributions to this file")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    parser.add_argument(
        "--no-grade",
        action="store_true",
        help="at a --table of two: do not grade each decision in chance of winning against the solved game (faster)",
    )
    parser.add_argument(
        "--ray",
        action="store_true",
        help=('play the games as Ray tasks (pip install -e ".[distributed]"); same figures as without'),
    )
    parser.add_argument("--ray-address", help="join this Ray cluster (implies --ray; default $RAY_ADDRESS, else Ray starts here)")
    parser.add_argument(
        "--ray-cpus", type=whole_number(least=1), help="CPUs of a Ray started here, 1 or more (default: all of this machine's)"
    )
    parser.add_argument(
        "--video",
        metavar="DIR",
        help=("record games of each --policy as MP4 files in DIR instead of evaluating (needs the video extra)"),
    )
    parser.add_argument(
        "--video-games", type=whole_number(), default=3, help="games recorded per policy with --video (default 3)"
    )
    return parser


def record_videos(parser: argparse.ArgumentParser, args) -> None:
    """``--video``: record games of each policy as MP4 files and print their paths."""
    from agents.evaluation.video import record_games

    if args.table:
        parser.error("--video records single-player games of each --policy; it does not go with --table")
    if args.video_games < 1:
        parser.error(f"--video-games must be at least 1, got {args.video_games}")
    try:
        paths = record_games(args.policy or default_policies(), args.video, args.video_games, args.seed, rules=args.rules)
    except ValueError as error:
        parser.exit(2, f"error: {error}\n")
    print("\n".join(str(path) for path in paths))


def check_run_options(parser: argparse.ArgumentParser, args) -> bool:
    """Refuse options that cannot run (argparse's exit 2, naming them); connect to Ray if asked. Whether on Ray."""
    if args.games < 2:
        parser.error(f"--games must be at least 2 (for a confidence interval), got {args.games}")
    if args.batch_size < 1:
        parser.error(f"--batch-size must be at least 1, got {args.batch_size}")
    from yacht_env.atomic_files import check_outputs

    try:
        check_outputs([args.json, args.plot])  # a device, FIFO or folder: refused before the games, not after
    except OutputError as error:
        parser.exit(2, f"error: {error}\n")
    if args.plot:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            parser.exit(2, "error: --plot needs matplotlib: pip install 'yacht-rl[train]'\n")
    on_ray = args.ray or bool(args.ray_address)
    if args.ray_cpus is not None and not on_ray:
        parser.error("--ray-cpus goes with --ray")
    if on_ray:
        from agents.evaluation.distributed import RayMissingError, connect

        try:
            connect(args.ray_address, args.ray_cpus)
        except (RayMissingError, ValueError) as error:
            parser.exit(2, f"error: {error}\n")
    return on_ray


def play_at_table(parser: argparse.ArgumentParser, args, on_ray: bool) -> None:
    """``--table``: full games at one table, reported by :func:`agents.evaluation.tournament.main_table`."""
    from agents.evaluation.tournament import main_table

    if args.policy:
        parser.error("--table and --policy do not go together: the table names its policies")
    try:
        main_table(
            args.table,
            args.games,
            args.seed,
            args.batch_size,
            args.json,
            args.plot,
            show_progress=not args.no_progress,
            on_ray=on_ray,
            rules=args.rules,
            grade=not args.no_grade,
        )
    except (ValueError, OutputError) as error:  # an output that changed since the check, or a full disk: one line
        parser.exit(2, f"error: {error}\n")


def main(argv=None):
    """``python -m agents.evaluate``: the command line (see the module docstring)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.video:
        record_videos(parser, args)
        return
    on_ray = check_run_options(parser, args)
    if args.table:
        play_at_table(parser, args, on_ray)
        return
    names = args.policy or default_policies()
    try:
        summaries, logs = evaluate(
            names,
            args.games,
            args.seed,
            rules=args.rules,
            batch_size=args.batch_size,
            show_progress=not args.no_progress,
            on_ray=on_ray,
        )
    except ValueError as error:
        parser.exit(2, f"error: {error}\n")
    optimum = expected_score(args.rules)
    print_table(summaries, optimum, args.games, args.seed, args.rules)
    print_sheet_table(summaries, args.rules)
    distribution = distribution_rows(logs, list(dict.fromkeys(names)), args.rules)
    print_distribution_table(distribution, args.games, args.rules)
    warn_replaced(replacement_notes(summaries))
    try:
        if args.json:
            save_json(args.json, summaries, optimum, args.games, args.seed, distribution, args.rules)
        if args.plot:
            save_plot(args.plot, logs, list(dict.fromkeys(names)), optimum, args.rules)
    except OutputError as error:  # an output that changed since the check, or a full disk: one line
        parser.exit(2, f"error: {error}\n")


if __name__ == "__main__":
    main()
