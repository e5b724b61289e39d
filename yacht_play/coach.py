"""The coach: decisions graded against the exact optimum, for the terminal, the browser and ``yacht analyze``.

The *loss* of a decision is ``max_a Q*(s, a) - Q*(s, chosen)``, with ``Q*`` the exact expected points still to
come under optimal play (:func:`agents.solvers.optimal.solve`): what the choice gives away in expectation, whatever the
dice do afterwards. An optimal player loses exactly 0: a choice tied with the best within the solver's rounding
(:func:`agents.solvers.exact_solution.gaps_to_best`) is a best one, and the best action is the lowest of them.

- A decision as it is made: :func:`coach_decision` gives its :class:`Coaching` (every option with its expected
  final score and chance, the best, the loss), which ``yacht play --coach`` writes as text and ``yacht serve``
  sends as the coach's card, so both grade a position alike.
- Recorded decisions: :class:`Grader` grades them in one batch (end screens, the game-over page, the report),
  :func:`report_players` and :func:`grade_chances` sum them up per player, as ``yacht analyze`` prints them.

At a table of two under rules without bonuses or jokers, decisions are also graded in chances of winning, from
the solved two-player game (:func:`two_player_grading`). Where a table planner is shipped for the rules
(``planN:<rules>``), each option at a table also carries its chance of winning as that planner learned it
(:func:`learned_chances`): beside the exact or ``win`` chance, or under bonus rules as the only one. Nothing here
prints or reads a command line: the programs show what it returns.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from yacht_env.actions import ActionLayout
from yacht_env.rules import YACHT, RuleSet, Sheet
from yacht_play.commands import choice_label, describe_choice
from yacht_play.records import GameRecord, RecordError

if TYPE_CHECKING:
    from agents.two_player.grading import TwoPlayerGrader, TwoPlayerGrades
    from yacht_play.match import Match


# -- the optimum's values ---------------------------------------------------------------------


@dataclass
class Graded:
    """Per-decision grades, aligned with the decisions graded."""

    q: np.ndarray  # (N, num_actions) Q* of every action, -inf where illegal
    chosen: np.ndarray  # (N,) Q* of the chosen action
    best_action: np.ndarray  # (N,) the optimal action (lowest index on ties, agents.solvers.exact_solution.best_actions)
    loss: np.ndarray  # (N,) Q*(best) - Q*(chosen) >= 0: exactly 0 for a choice tied with the best


class Grader:
    """Q-values of the DP optimum for recorded positions; solves the rules once, on creation."""

    def __init__(self, rules: RuleSet | None = None):
        from agents.solvers.optimal import solve

        self.rules = rules or YACHT
        self.solution = solve(self.rules)

    def open_bits(self, names) -> int:
        """The bit set of the open categories ``names``."""
        from agents.solvers.optimal import open_bits_from

        return open_bits_from(names, self.rules)

    def q_values(self, dice, rolls_left, open_bits, upper_totals=0, yahtzee_full=0) -> np.ndarray:
        """The optimal Q-values of the states, shape (N, num_actions).

        ``upper_totals`` and ``yahtzee_full`` (the sheet state, see :func:`sheet_states`) count
        only for rules with bonuses or jokers.
        """
        if self.rules.has_bonus_or_joker:
            return self.solution.q_values_batch(dice, rolls_left, open_bits, upper_totals, yahtzee_full)
        return self.solution.q_values_batch(dice, rolls_left, open_bits)

    def grade(self, decisions: list[dict]) -> Graded:
        """Grade decision records, all in one batch."""
        if not decisions:
            empty = np.zeros(0)
            return Graded(np.zeros((0, self.solution.num_actions)), empty, np.zeros(0, dtype=np.int64), empty)
        try:
            dice = np.array([d["dice"] for d in decisions], dtype=np.int64)
            rolls_left = np.array([d["rolls_left"] for d in decisions], dtype=np.int64)
            open_bits = np.array([self.open_bits(d["open"]) for d in decisions], dtype=np.int64)
            actions = np.array([d["action"] for d in decisions], dtype=np.int64)
            q = self.q_values(dice, rolls_left, open_bits, *sheet_states(decisions, self.rules))
        except (KeyError, ValueError, TypeError) as error:
            raise RecordError(f"a decision record does not describe a position: {error}") from None
        if ((actions < 0) | (actions >= q.shape[1])).any():
            raise RecordError("a decision record holds an action outside 0..%d" % (q.shape[1] - 1))
        rows = np.arange(len(decisions))
        chosen = q[rows, actions]
        illegal = ~np.isfinite(chosen)
        if illegal.any():
            bad = decisions[int(np.flatnonzero(illegal)[0])]
            raise RecordError(
                f"game {bad.get('game_id')}: turn {bad.get('turn')}, roll {bad.get('roll')} "
                f"records the illegal action {bad.get('action')}"
            )
        from agents.solvers.exact_solution import best_actions, gaps_to_best

        return Graded(q, chosen, best_actions(q), 0.0 - gaps_to_best(q)[rows, actions])  # 0.0 - 0.0: no "-0.00"


def sheet_states(decisions: list[dict], rules: RuleSet) -> tuple[np.ndarray, np.ndarray]:
    """The sheet state before each decision: ``(upper_totals, yahtzee_full)``, each (N,) int64.

    What a decision depends on beyond its open rows under rules with bonuses or jokers: the upper
    subtotal and whether the Yahtzee box holds its full points. Rebuilt by scoring each seat's rows
    in the order the decisions wrote them (:meth:`RuleSet.score_on`, the rules' own scoring), so
    every seat's decisions must be there from the start of its game (in order; games may
    interleave). Zeros for rules without a sheet state.
    """
    upper = np.zeros(len(decisions), dtype=np.int64)
    full = np.zeros(len(decisions), dtype=np.int64)
    if not rules.has_bonus_or_joker:
        return upper, full
    from agents.solvers.optimal import open_bits_from

    layout = ActionLayout(rules)
    sheets: dict[tuple, Sheet] = {}
    for i, decision in enumerate(decisions):
        key = (decision["game_id"], decision["seat"])
        sheet = sheets.get(key) or rules.new_sheet()
        if open_bits_from(decision["open"], rules) != sheet.open_bits:
            raise RecordError(
                f"game {decision['game_id']}, seat {decision['seat']}: turn {decision['turn']} comes without "
                "the decisions before it, so its sheet (upper subtotal, Yahtzee box) is unknown"
            )
        upper[i] = sheet.upper_total
        full[i] = int(bool(sheet.yahtzee_box) and rules.tracks_yahtzee_box)
        if not layout.is_reroll(decision["action"]):
            try:
                sheets[key] = rules.score_on(sheet, decision["dice"], layout.category(decision["action"])).sheet
            except ValueError as error:
                raise RecordError(f"game {decision['game_id']}: turn {decision['turn']}: {error}") from None
    return upper, full


def two_player_grading(rules: RuleSet, mode: str, num_players: int) -> TwoPlayerGrader | str | None:
    """How a game's decisions are also graded in chances of winning: None where they are not (solitaire, duplicate,
    tables of 3 or more, rules with bonuses or jokers), a :class:`agents.two_player.grading.TwoPlayerGrader` at a
    two-player table whose solved game is in the cache folder, else one line saying how to compute it.
    """
    if mode != "table" or num_players != 2 or rules.has_bonus_or_joker:
        return None
    from agents.two_player.grading import two_player_grader

    return two_player_grader(rules, 2)


LEARNED_LABEL = "learned win"  # the chances of a shipped table planner: learned in self-play, not exact


def learned_chances(match: Match, seat) -> np.ndarray | None:
    """Each action's chance of winning for ``seat`` (to move) at its table, from the shipped table planner of the
    match's rules (``planN:<rules>``, :mod:`agents.learned.planN`): learned, not exact. None where none is shipped
    for those rules and that table size.
    """
    from agents.learned.planN import Tables, shipped_planner

    planner = shipped_planner(match.rules, len(match.seats))
    if planner is None:
        return None
    at = match.seats.index(seat)
    order = match.seats[at:] + match.seats[:at]  # from the mover, in play order
    upper, full = (np.array([[s.sheet_state[i] for s in order]], dtype=np.int64) for i in (0, 1))
    upper = np.minimum(upper, match.rules.upper_cap)
    full = full if match.rules.tracks_yahtzee_box else np.zeros_like(full)
    tables = Tables(np.array([[s.open_bits for s in order]]), upper, full, np.array([[s.total for s in order]]))
    return planner.action_values(tables, [seat.hand], [seat.rolls_left])[0]


def seat_chances(grader: TwoPlayerGrader, seats, seat) -> np.ndarray:
    """Each action's chance of winning for ``seat`` (a :class:`yacht_play.match.Seat` of a two-player table ``seats``)
    at its decision now, from ``grader`` (:func:`two_player_grading`'s), shape (num_actions,); ``-inf`` where illegal.
    """
    other = next(s for s in seats if s is not seat)
    return grader.chances([seat.open_bits], [other.open_bits], [seat.total - other.total], [seat.hand], [seat.rolls_left])[0]


# -- one decision, as the coach shows it -------------------------------------------------------


@dataclass(frozen=True)
class Option:
    """One choice the coach lists, named as people say it (every action of the same name is one option)."""

    label: str  # ``keep 3 3``, ``score Fours (12)``: see :func:`yacht_play.commands.choice_label`
    expected: float  # the expected final score it leads to: the total before the decision plus its Q*
    chance: float | None  # its chance of winning, or of reaching the target, in [0, 1]; None without chances
    chosen: bool  # whether it is the person's choice
    # beside ``chance``: its chance of winning as the shipped table planner learned it in self-play (not exact,
    # ``LEARNED_LABEL``); None where none is shipped, or where ``chance`` is already that planner's
    learned_chance: float | None = None


@dataclass(frozen=True)
class WinGrade:
    """At a table of two: a decision against the solved two-player game (chances of winning, in [0, 1])."""

    chosen_chance: float
    best_action: int  # the decision of the highest chance (lowest index on ties)
    best: str  # its label
    best_chance: float
    loss: float  # the chance of winning the decision gave away: ``best_chance - chosen_chance``


@dataclass(frozen=True)
class Coaching:
    """The coach on one decision: what was chosen, what was best, what it cost, and the options to list.

    Expected final scores count the total before the decision. ``options`` holds every legal choice once,
    best first (ties in the order of the actions), the chosen one marked: a screen lists as many as it has
    room for, from the first.
    """

    dice: tuple[int, ...]
    action: int
    chosen: str  # the chosen option's label
    chosen_expected: float
    chosen_chance: float | None  # None without chances
    best_action: int  # the optimal action (lowest index on ties)
    best: str  # its label
    best_expected: float
    loss: float  # expected points given away: the best option's value minus the chosen one's, >= 0
    options: tuple[Option, ...]
    chances_label: str = "win"  # what the chances are of: ``win`` (winning the game) or ``>=T`` (reaching T points)
    win_grade: WinGrade | None = None  # at a table of two whose solved game is computed
    win_note: str | None = None  # at a table of two whose solved game is not: the line saying how to compute it
    chosen_learned_chance: float | None = None  # the chosen option's ``learned_chance``, None where options have none

    @property
    def optimal(self) -> bool:
        """Whether the choice gave nothing away (another option may be as good)."""
        return self.loss <= 0


def coaching_of(
    q: np.ndarray,
    action: int,
    dice,
    total: int,
    rules: RuleSet,
    chances: np.ndarray | None = None,
    chances_label: str = "win",
    open_rows=None,
    win_grades: TwoPlayerGrades | None = None,
    win_note: str | None = None,
    learned: np.ndarray | None = None,
) -> Coaching:
    """The coach on ``action`` at a position whose actions' Q-values are ``q`` (``-inf`` where illegal).

    ``total``: the points before the decision. ``chances``: each action's chance of winning (or of reaching
    a target, ``chances_label`` ``>=T``), None without. ``open_rows``: the rows open before the decision, so
    that a joker's rows are labelled with joker values. ``win_grades``: at a table of two, the decision graded
    against the solved game (:meth:`agents.two_player.grading.TwoPlayerGrader.grade`, ``chances`` its chances).
    ``learned``: each action's chance of winning learned by a shipped table planner (:func:`learned_chances`), a
    second figure beside ``chances``: each option's ``learned_chance``.
    """

    def label(a: int) -> str:
        return choice_label(a, dice, rules, open_rows)

    from agents.solvers.exact_solution import best_actions, gaps_to_best

    gaps = gaps_to_best(q[None])[0]  # ties within the solver's rounding are ties: in action order, and lose nothing
    best = int(best_actions(q[None])[0])
    chosen = label(action)
    options: dict[str, Option] = {}
    for a in np.argsort(-gaps, kind="stable"):  # best first; actions of one label are one option, at its best value
        if np.isfinite(q[a]) and label(int(a)) not in options:
            chance = None if chances is None else float(chances[a])
            learned_chance = None if learned is None else float(learned[a])
            options[label(int(a))] = Option(label(int(a)), float(total + q[a]), chance, label(int(a)) == chosen, learned_chance)
    win_grade = None
    if win_grades is not None:
        win_best = int(win_grades.best_action[0])
        win_grade = WinGrade(
            chosen_chance=float(win_grades.chosen[0]),
            best_action=win_best,
            best=label(win_best),
            best_chance=float(win_grades.chances[0, win_best]),
            loss=float(win_grades.loss[0]),
        )
    return Coaching(
        dice=tuple(int(d) for d in dice),
        action=int(action),
        chosen=chosen,
        chosen_expected=float(total + q[action]),
        chosen_chance=None if chances is None else float(chances[action]),
        best_action=best,
        best=label(best),
        best_expected=float(total + q[best]),
        loss=float(0.0 - gaps[action]),  # a tie's gap is 0.0, and -0.0 would print as "-0.00"
        options=tuple(options.values()),
        chances_label=chances_label,
        win_grade=win_grade,
        win_note=win_note,
        chosen_learned_chance=None if learned is None else float(learned[action]),
    )


def coach_decision(
    grader: Grader, match: Match, action: int, target: int | None = None, two_player: TwoPlayerGrader | str | None = None
) -> Coaching:
    """The coach on ``action``, the decision of the seat to move in ``match``, before it is played.

    ``grader`` (of the match's rules) values the options. The chances shown with them: at a table of two,
    ``two_player``'s (:func:`two_player_grading`), exact, and the decision graded in them; else at a table of
    several under rules without bonuses or jokers, the chance of winning the game at hand
    (:func:`agents.solvers.win_chances.win_probabilities`); else at a table of several under rules with bonuses or jokers,
    the chance of winning learned by the shipped table planner of those rules (:func:`learned_chances`, labelled
    ``LEARNED_LABEL``) where one is shipped; else, with ``target`` (solitaire), the chance of finishing on at
    least ``target`` points (:func:`agents.solvers.target.target_probabilities`). At a table whose chances are
    exact or ``win``'s, a shipped table planner's learned chances come as a second figure beside them (each option's
    ``learned_chance``). A ``two_player`` line (its solved game not computed) comes back as the coaching's ``win_note``.
    """
    seat, rules = match.current, match.rules
    if seat is None:
        raise ValueError("the game is over: there is no decision to coach")
    q = grader.q_values(np.array([seat.dice]), seat.rolls_left, seat.open_bits, *seat.sheet_state)[0]
    chances, chances_label, win_grades = None, "win", None
    at_table = match.mode == "table" and len(match.seats) > 1
    learned = learned_chances(match, seat) if at_table else None
    if two_player is not None and not isinstance(two_player, str):
        chances = seat_chances(two_player, match.seats, seat)
        win_grades = two_player.grade(chances[None], [action])
    elif at_table and not rules.has_bonus_or_joker:
        from agents.solvers.win_chances import win_probabilities

        others = [(s.total, s.open_names) for s in match.seats if s is not seat]
        chances = win_probabilities(seat.dice, seat.rolls_left, seat.open_names, seat.total, others, rules)
    elif learned is not None:  # the only chances there are: shown as the chances, not twice
        chances, chances_label, learned = np.where(np.isfinite(learned), learned, 0.0), LEARNED_LABEL, None
    elif target is not None:
        from agents.solvers.target import target_probabilities

        chances = target_probabilities(seat.dice, seat.rolls_left, seat.open_names, target - seat.total, rules)
        chances_label = f">={target}"
    note = two_player if isinstance(two_player, str) else None
    return coaching_of(q, action, seat.dice, seat.total, rules, chances, chances_label, seat.open_bits, win_grades, note, learned)


# -- players over recorded games ---------------------------------------------------------------


@dataclass
class PlayerReport:
    """The figures of one player over the games graded."""

    name: str
    kind: str
    source: str  # "records", or "replay" for an agent replayed on the recorded dice
    games: int = 0
    finished_games: int = 0
    decisions: int = 0
    reroll_decisions: int = 0
    row_decisions: int = 0
    mean_score: float = math.nan  # over finished games
    scores: list[int] = field(default_factory=list)
    loss_per_decision: float = math.nan
    loss_per_reroll: float = math.nan
    loss_per_row: float = math.nan
    loss_per_game: float = math.nan  # mean over finished games of the summed loss
    losses_per_game: list[float] = field(default_factory=list)
    by_turn: list[dict] = field(default_factory=list)
    worst: list[dict] = field(default_factory=list)
    # at two-player tables, graded against the solved game: the drop in chance of winning, percentage points
    win_decisions: int = 0
    win_loss_per_decision: float = math.nan
    win_loss_per_game: float = math.nan  # mean over finished games of the summed loss
    win_worst: list[dict] = field(default_factory=list)

    @property
    def label(self) -> str:
        """The player's name as shown, marked if the games are replays."""
        return f"{self.name} (replay)" if self.source == "replay" else self.name


def mean(values: np.ndarray) -> float:
    """The mean of ``values``, NaN if there are none."""
    return float(values.mean()) if len(values) else math.nan


def report_players(games: list[GameRecord], grader: Grader, source: str = "records", worst: int = 5) -> list[PlayerReport]:
    """One report per player (by name) over every decision of ``games``, in order of first appearance."""
    decisions = [d for game in games for d in game.decisions]
    graded = grader.grade(decisions)
    rules = grader.rules
    reports: dict[str, PlayerReport] = {}
    rows_of: dict[str, list[int]] = {}
    for i, decision in enumerate(decisions):
        name = decision["player"]
        if name not in reports:
            reports[name] = PlayerReport(name, decision.get("kind", "human"), source)
            rows_of[name] = []
        rows_of[name].append(i)
    for name, report in reports.items():
        rows = np.array(rows_of[name])
        fill(
            report,
            [decisions[i] for i in rows],
            graded.loss[rows],
            graded.chosen[rows],
            graded.q[rows],
            graded.best_action[rows],
            rules,
            worst,
        )
    return list(reports.values())


def grade_chances(reports: list[PlayerReport], games: list[GameRecord], rules: RuleSet, worst: int = 5) -> str | None:
    """Add to ``reports`` the grades in chances of winning of their decisions at two-player tables of ``games``.

    Returns None, or the line saying why those decisions are not graded so (the solved game is not computed).
    """
    tables = [game for game in games if two_player_grading(rules, game.header["mode"], len(game.players)) is not None]
    if not tables:
        return None
    grader = two_player_grading(rules, "table", 2)
    if grader is None or isinstance(grader, str):
        return grader
    decisions = [d for game in tables for d in game.decisions]
    try:
        graded = grader.grade_decisions(decisions)
    except (KeyError, TypeError, ValueError) as error:
        raise RecordError(f"a decision record does not describe a two-player position: {error}") from None
    by_name = {report.name: report for report in reports if report.source == "records"}
    for name, report in by_name.items():
        rows = np.array([i for i, d in enumerate(decisions) if d["player"] == name], dtype=np.int64)
        if not len(rows):
            continue
        loss = 100 * graded.loss[rows]
        report.win_decisions = len(rows)
        report.win_loss_per_decision = mean(loss)
        seat_games: dict[tuple, list[int]] = {}
        for j, i in enumerate(rows):
            seat_games.setdefault((decisions[i]["game_id"], decisions[i]["seat"]), []).append(j)
        is_row = np.array([decisions[i]["points"] is not None for i in rows])
        report.win_loss_per_game = mean(
            np.array([loss[js].sum() for js in seat_games.values() if is_row[js].sum() == rules.num_rows])
        )
        report.win_worst = [
            {
                "game_id": decisions[i]["game_id"],
                "turn": decisions[i]["turn"],
                "roll": decisions[i]["roll"],
                "dice": decisions[i]["dice"],
                "chosen": describe_choice(decisions[i]["action"], decisions[i]["dice"], rules, decisions[i]["open"]),
                "best": describe_choice(int(graded.best_action[i]), decisions[i]["dice"], rules, decisions[i]["open"]),
                "chance_chosen": 100 * float(graded.chosen[i]),
                "chance_best": 100 * float(graded.chances[i, graded.best_action[i]]),
                "loss": float(loss[j]),
            }
            for j, i in ((j, int(rows[j])) for j in np.argsort(-loss, kind="stable")[:worst])
            if loss[j] > 0
        ]
    return None


def fill(
    report: PlayerReport,
    decisions: list[dict],
    loss: np.ndarray,
    chosen: np.ndarray,
    q: np.ndarray,
    best_action: np.ndarray,
    rules: RuleSet,
    worst: int,
) -> None:
    """Fill ``report`` from the player's graded decisions: games, scores, points lost, and the ``worst`` decisions."""
    is_row = np.array([d["points"] is not None for d in decisions])
    turns = np.array([d["turn"] for d in decisions])
    seat_games: dict[tuple, list[int]] = {}
    for i, d in enumerate(decisions):
        seat_games.setdefault((d["game_id"], d["seat"]), []).append(i)
    finished = [rows for rows in seat_games.values() if is_row[rows].sum() == rules.num_rows]
    report.games = len(seat_games)
    report.finished_games = len(finished)
    report.decisions = len(decisions)
    report.row_decisions = int(is_row.sum())
    report.reroll_decisions = report.decisions - report.row_decisions
    report.scores = [int(decisions[rows[-1]]["total"]) for rows in finished]
    report.mean_score = mean(np.array(report.scores, dtype=float))
    report.loss_per_decision = mean(loss)
    report.loss_per_reroll = mean(loss[~is_row])
    report.loss_per_row = mean(loss[is_row])
    report.losses_per_game = [float(loss[rows].sum()) for rows in finished]
    report.loss_per_game = mean(np.array(report.losses_per_game))
    report.by_turn = [
        {
            "turn": turn,
            "decisions": int((turns == turn).sum()),
            "loss_per_decision": mean(loss[turns == turn]),
            "loss_per_game": float(loss[turns == turn].sum()) / len(seat_games),
        }
        for turn in range(1, rules.num_turns + 1)
    ]
    order = np.argsort(-loss, kind="stable")
    report.worst = [
        worst_entry(decisions[i], float(loss[i]), float(chosen[i]), q[i], int(best_action[i]), rules)
        for i in order[:worst]
        if loss[i] > 0
    ]


def worst_entry(decision: dict, loss: float, chosen: float, q: np.ndarray, best: int, rules: RuleSet) -> dict:
    """One of the worst decisions, as a dict for the report."""
    before = decision["total"] - (decision["points"] or 0)  # Q* counts points still to come
    return {
        "game_id": decision["game_id"],
        "seat": decision["seat"],
        "seed": decision.get("seed"),
        "turn": decision["turn"],
        "roll": decision["roll"],
        "dice": decision["dice"],
        "open": decision["open"],
        "action": decision["action"],
        "chosen": describe_choice(decision["action"], decision["dice"], rules, decision["open"]),
        "best_action": best,
        "best": describe_choice(best, decision["dice"], rules, decision["open"]),
        "expected_final_chosen": before + chosen,
        "expected_final_best": before + float(q[best]),
        "loss": loss,
    }
