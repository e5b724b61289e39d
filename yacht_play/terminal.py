"""Play Yacht in a terminal: solitaire, against agents at the same table, or duplicate against an agent.

    yacht play                                    # solitaire on a random seed
    yacht play --vs optimal --vs ppo:yacht        # a shipped model, by name from any folder
    yacht play --duplicate optimal --seed 7 --coach
    yacht play --resume games/20261130-101500-seed7.jsonl
    yacht play --rules yahtzee --coach              # any rule set: yatzy, yahtzee_forced_joker, ...

Modes:
  solitaire        you alone.
  --vs AGENT       agents join the table (repeatable: random, greedy, optimal, a shipped model such as
                   ppo:yacht or plan:yacht, or ppo:PATH for a model file of yours). Seats take whole
                   turns in rotation, you first; seat s plays the dice of seed SEED + s. You see the
                   agents' turns: their dice and choices. The highest total wins; ties share it.
  --duplicate AGENT
                   you and the agent play the same dice (seed SEED, game SEED of
                   `python -m agents.evaluate --seed SEED`); the agent plays after you, unseen, and the
                   end screen compares your games turn by turn.
  --coach          after each of your decisions, show the optimal choice and the expected final
                   score of yours, of the best and of the other options.
  --rules NAME     the rule set (default yacht): the sheet shows its bonus lines, totals count
                   every bonus, and the coach and grades value decisions on the whole sheet.

Every decision is appended to the record file (JSON lines, see yacht_play.records) as it is made, so
`q`, Ctrl-C or a crash lose nothing: `yacht play --resume FILE` continues where the game stopped.
At the end you get your grade: the expected points each decision lost against the optimum;
`yacht analyze FILE` gives the details.
"""

from __future__ import annotations

import argparse
import secrets
import shutil
import sys
import textwrap
import time
from datetime import datetime
from functools import partial
from pathlib import Path

import numpy as np

from yacht_env.option_values import whole_number
from yacht_env.render import render_dice, render_sheet
from yacht_env.rules import YACHT, RuleSet, rule_set
from yacht_env.safe_text import unsafe_character
from yacht_env.table.outcome import unique_names
from yacht_play.coach import LEARNED_LABEL, Coaching, Grader, coach_decision, coaching_of, two_player_grading
from yacht_play.commands import HELP, CommandError, decision_label, dice_text, parse_command
from yacht_play.match import Match, Player, Seat, agent_name, load_games, load_policy
from yacht_play.options import add_rules_option
from yacht_play.records import MAX_SEATS, NAME_LENGTH, RecordError, RecordWriter

RULE = "-" * 72
COACH_OPTIONS = "       options:"  # how the coach's line of options starts
PROFICIENT = 0.2  # points lost per decision that proficiency tests ask players to stay under


class QuitGame(Exception):
    """The person stopped the game; every decision made so far is in the record."""


# -- consoles: where text goes and typed lines come from ---------------------------------------


class TerminalConsole:
    """The terminal: lines typed on stdin, text shown on stdout."""

    def __init__(self, stdin=None, stdout=None):
        self.stdin = stdin or sys.stdin
        self.stdout = stdout or sys.stdout
        self.interactive = self.stdin.isatty()

    @property
    def width(self) -> int:
        """The terminal's width in columns."""
        return shutil.get_terminal_size((80, 24)).columns

    @property
    def height(self) -> int | None:
        """The terminal's height in lines (None when output is not a terminal: nothing scrolls away)."""
        return shutil.get_terminal_size((80, 24)).lines if self.interactive else None

    def show(self, text: str = "") -> None:
        """Show ``text`` on a line."""
        print(text, file=self.stdout, flush=True)

    def ask(self, prompt: str) -> str | None:
        """A typed line, or None at end of input (Ctrl-D)."""
        try:
            return input(prompt)
        except EOFError:
            self.show()
            return None


class ScriptedConsole:
    """Typed lines from a list, everything shown kept in ``output``: the game without a terminal."""

    interactive = False
    width = 80

    def __init__(self, lines, height: int | None = None):
        self.lines = list(lines)
        self.output: list[str] = []
        self.height = height

    def show(self, text: str = "") -> None:
        """Show ``text`` on a line (kept in ``output``)."""
        self.output.append(text)

    def ask(self, prompt: str) -> str | None:
        """The next scripted line after ``prompt``, or None when the lines run out."""
        self.output.append(prompt)
        return self.lines.pop(0) if self.lines else None

    @property
    def text(self) -> str:
        """Everything shown, one line each."""
        return "\n".join(self.output)


# -- screens -----------------------------------------------------------------------------------


def column_label(name: str) -> str:
    """The column label of category ``name``, cut to 10 characters."""
    return name if len(name) <= 10 else name[:9] + "~"


def sheet_lines(rules: RuleSet, seats: list[Seat], now_seat: Seat | None = None) -> list[str]:
    """The score sheet, one column per seat; ``now`` (after ``now_seat``'s column) shows what each
    of its open rows would score with its dice as they are.
    """
    columns = [(column_label(seat.name), seat.sheet, seat.total) for seat in seats]  # totals hold every bonus
    now = next(((index, seat.dice) for index, seat in enumerate(seats) if seat is now_seat), None)
    return render_sheet(rules, columns, now)


def visible_seats(match: Match) -> list[Seat]:
    """Duplicate games hide the other seats until the end: they play the same dice."""
    if match.mode == "duplicate" and not match.finished:
        return [match.current]
    return match.seats


def screen_rows(lines: list[str], width: int | None) -> int:
    """The terminal rows ``lines`` take at ``width`` columns: a line longer than the terminal wraps onto more."""
    if not width:
        return len(lines)
    return sum(max(1, -(-len(line) // width)) for line in lines)


def screen(match: Match, seat: Seat, news: list[str] = (), height: int | None = None, width: int | None = None) -> str:
    """What the person sees before a decision; ``news`` (the other seats' turns since theirs) goes
    under the sheet, next to the prompt, so it does not scroll away.

    ``height``, ``width``: the terminal's lines and columns (a longer line wraps onto more). A screen that
    would not fit with its prompt (the longer sheets of Yahtzee and Yatzy with their bonus lines, the coach
    at a table of two) is packed: dice on the status line, no spacing, then no hint line, then no coach's
    options line, so the dice and the sheet stay in view.
    """
    rules = match.rules
    if seat.rolls_left:
        rolls = f"{seat.rolls_left} re-roll{'s' if seat.rolls_left > 1 else ''} left"
        hint = "k 3 3 keep dice | r 1 4 re-roll positions | s 9, s full_house score | ? | q quit"  # < 80
    else:
        rolls = "no re-rolls left: score a row"
        hint = "s 9 or s full_house score a row | ? help | q quit"
    sheet = sheet_lines(rules, visible_seats(match), seat)
    lines = [
        RULE,
        f"{seat.name}: turn {seat.turn} of {rules.num_turns}, roll {seat.roll} of {rules.rolls_per_turn}, {rolls}",
        f"Dice   {render_dice(seat.dice)}",
        "",
        *sheet,
        *([""] if not news else []),  # on 24 lines, what just happened needs the room
        *news,
        hint,
    ]
    if height is None or screen_rows(lines, width) < height:  # the prompt takes the last line
        return "\n".join(lines)
    status = (
        f"{column_label(seat.name)}: turn {seat.turn}/{rules.num_turns}, roll {seat.roll}/{rules.rolls_per_turn}"
        f"   Dice {render_dice(seat.dice)}"
    )
    news = list(news)
    packed = [status, *sheet, *news, hint]
    if screen_rows(packed, width) >= height:
        packed.pop()  # the hint: ? shows the commands
    if screen_rows(packed, width) >= height:
        packed = [line for line in packed if not line.startswith(COACH_OPTIONS)]
    return "\n".join(packed)


def prompt(seat: Seat) -> str:
    """The prompt for the seat's next input."""
    return f"turn {seat.turn} roll {seat.roll}> "


def agent_turn_line(records: list[dict], rules: RuleSet) -> str:
    """An agent's whole turn in one line: its rolls and choices."""
    first = records[0]
    steps = [f"{first['player']}, turn {first['turn']}: rolled {dice_text(first['dice'])}"]
    for record, after in zip(records, records[1:]):
        steps.append(f"{decision_label(record, rules)} -> {dice_text(after['dice'])}")
    last = records[-1]
    steps.append(f"{decision_label(last, rules)}, total {last['total']}")
    return " | ".join(steps)


def coach_text(
    q: np.ndarray,
    action: int,
    dice,
    total: int,
    rules: RuleSet,
    width: int = 80,
    chances=None,
    chances_label: str = "win",
    open_rows=None,
    win_grades=None,
) -> str:
    """The optimum's view of a decision just made, from the position's Q-values ``q``: :func:`coaching_text` of
    the coach's :func:`yacht_play.coach.coaching_of`.

    ``chances``: each action's probability of winning (``agents.solvers.win_chances.win_probabilities``) or of reaching a target
    (``agents.solvers.target.target_probabilities``), shown by its expected score after ``chances_label``. ``open_rows``:
    the rows open before the decision, so that a joker's rows show joker values. ``win_grades``: at a table of
    two, the decision graded against the solved two-player game
    (:meth:`agents.two_player.grading.TwoPlayerGrader.grade`, with ``chances`` its chances of winning).
    """
    coaching = coaching_of(q, action, dice, total, rules, chances, chances_label, open_rows, win_grades)
    return coaching_text(coaching, width)


def coaching_text(coaching: Coaching, width: int = 80) -> str:
    """The coach's verdict on a decision and its options, in at most three lines of ``width``.

    The verdict (wrapped between words): the expected final scores of the choice and of the best; at a table
    of two, a line says what the choice did to the chance of winning, in percentage points. Then one line of
    options, as many as fit, never cut inside an option, each with its chance when there are chances, and beside
    it, where a table planner is shipped, its chance as that planner learned it (``learned win``).
    """
    chosen = coaching.chosen
    if coaching.optimal:
        line = f"coach: {chosen} is optimal (expected final score {coaching.chosen_expected:.2f})"
    else:
        line = (
            f"coach: you chose {chosen}: expected final score {coaching.chosen_expected:.2f}; best was "
            f"{coaching.best}: {coaching.best_expected:.2f}; you lost {coaching.loss:.2f}"
        )
    verdict = textwrap.wrap(line, width=width, subsequent_indent="       ")
    win = coaching.win_grade
    if win is not None:
        if win.loss <= 0:
            win_line = f"to win: {chosen} is best (chance of winning {100 * win.chosen_chance:.1f}%)"
        else:
            win_line = (
                f"to win: {chosen} {100 * win.chosen_chance:.1f}% against {100 * win.best_chance:.1f}% for "
                f"{win.best}: you lost {100 * win.loss:.1f} pp of your chance of winning"
            )
        verdict += textwrap.wrap(win_line, width=width, initial_indent="       ", subsequent_indent="       ")
    digits = 1 if win is not None else 0  # the solved game tells apart what whole percents would not
    options = COACH_OPTIONS
    for index, option in enumerate(coaching.options):
        figures = [] if option.chance is None else [f"{coaching.chances_label} {100 * option.chance:.{digits}f}%"]
        if option.learned_chance is not None:  # learned in self-play: whole percents, not the solved game's tenths
            figures.append(f"{LEARNED_LABEL} {100 * option.learned_chance:.0f}%")
        chance = f" ({', '.join(figures)})" if figures else ""
        item = f"{' |' if index else ''} {option.label} {option.expected:.2f}{chance}"
        if len(options) + len(item) > width:
            break
        options += item
    return "\n".join([*verdict, options])


def grade_lines(match: Match, losses: np.ndarray) -> list[str]:
    """The grade lines of the end screen: each player's expected points lost against the optimal strategy."""
    lines = [
        f"Grade: expected points lost against the optimal strategy (proficiency tests ask for under {PROFICIENT} a decision)"
    ]
    width = max(len(seat.name) for seat in match.seats)
    for seat in match.seats:
        rows = [i for i, d in enumerate(match.decisions) if d["seat"] == seat.index]
        lost = losses[rows]
        line = (
            f"  {seat.name:<{width}}  {len(rows):>3} decisions  {lost.mean() if rows else 0:.3f} per decision  "
            f"{lost.sum():6.2f} in all"
        )
        if rows and lost.max() > 0:
            worst = match.decisions[rows[int(np.argmax(lost))]]
            label = decision_label(worst, match.rules)
            line += f"  | worst: turn {worst['turn']} roll {worst['roll']}, {label} lost {lost.max():.2f}"
        lines.append(line)
    return lines


def win_grade_lines(match: Match) -> list[str]:
    """At a table of two: each player's chance of winning lost against the solved two-player game, in percentage
    points (or the line saying how to compute it); nothing elsewhere.
    """
    exact = two_player_grading(match.rules, match.mode, len(match.seats))
    if exact is None:
        return []
    if isinstance(exact, str):
        return [exact]
    losses = 100 * exact.grade_decisions(match.decisions).loss
    lines = ["Chance of winning lost against the best decisions (the solved two-player game), percentage points"]
    width = max(len(seat.name) for seat in match.seats)
    for seat in match.seats:
        lost = losses[[i for i, d in enumerate(match.decisions) if d["seat"] == seat.index]]
        per_decision = lost.mean() if len(lost) else 0.0
        lines.append(
            f"  {seat.name:<{width}}  {len(lost):>3} decisions  {per_decision:.2f} pp per decision  {lost.sum():6.2f} pp in all"
        )
    return lines


def duplicate_lines(match: Match, losses: np.ndarray) -> list[str]:
    """Turn by turn: each seat's row, points, running total and the expected points its decisions lost."""
    rules = match.rules
    cells = []  # per seat: turn -> (row and points, total, loss)
    for seat in match.seats:
        by_turn = {}
        for i, d in enumerate(match.decisions):
            if d["seat"] == seat.index:
                row, total, lost = by_turn.get(d["turn"], ("", 0, 0.0))
                if d["points"] is not None:
                    row, total = decision_label(d, rules).removeprefix("score "), d["total"]
                by_turn[d["turn"]] = (row, total, lost + losses[i])
        cells.append(by_turn)
    head = "turn" + "".join(f"  {column_label(seat.name):<22} {'total':>5} {'loss':>5}" for seat in match.seats)
    lines = ["Turn by turn, on the same dice:", head]
    for turn in range(1, rules.num_turns + 1):
        line = f"{turn:>4}"
        for by_turn in cells:
            row, total, lost = by_turn.get(turn, ("", 0, 0.0))
            line += f"  {row:<22} {total:>5} {lost:>5.2f}"
        lines.append(line)
    return lines


def end_screen(match: Match, path: Path | None) -> str:
    """The end screen's text, naming the record file ``path`` if any."""
    losses = Grader(match.rules).grade(match.decisions).loss
    lines = ["=" * 72, "Game over", *sheet_lines(match.rules, match.seats), ""]
    if len(match.seats) > 1:
        winners = match.winners
        best = max(match.totals)
        lines.append(
            f"{winners[0]} wins with {best}" if len(winners) == 1 else f"{' and '.join(winners)} share the win with {best}"
        )
        lines.append("")
    if match.mode == "duplicate":
        lines += [*duplicate_lines(match, losses), ""]
    lines += grade_lines(match, losses)
    lines += win_grade_lines(match)
    if path is not None:
        lines += ["", f"Record: {path}   details: yacht analyze {path}"]
    return "\n".join(lines)


def saved_text(path: Path, match: Match) -> str:
    """The line saying where the game was saved and how to replay it."""
    from agents.registry import resumable_policies

    agents = [seat.player.policy for seat in match.seats if seat.kind == "agent"]
    again = "".join(f" --vs {name}" for name in agents) if set(agents) - set(resumable_policies()) else ""
    return f"Game saved in {path} ({len(match.decisions)} decisions). Continue it with: yacht play --resume {path}{again}"


def game_title(rules: RuleSet) -> str:
    """The game's name for people: ``Yacht``, or ``Yahtzee (yahtzee_forced_joker rules)``."""
    family = next((word for word in ("yahtzee", "yatzy", "yacht") if rules.name.startswith(word)), None)
    if family is None:
        return f"Yacht ({rules.name} rules)"
    return family.capitalize() if family == rules.name else f"{family.capitalize()} ({rules.name} rules)"


def intro(match: Match, path: Path, resumed: bool) -> str:
    """The intro text shown when a match starts or resumes."""
    humans = [seat.name for seat in match.seats if seat.kind == "human"]
    agents = [seat.name for seat in match.seats if seat.kind == "agent"]
    if match.mode == "duplicate":
        what = (
            f"duplicate: {', '.join(humans)} and {', '.join(agents)} play the same dice; "
            f"{', '.join(agents)} plays after you, unseen"
        )
    elif agents:
        what = f"table: {', '.join(seat.name for seat in match.seats)} take turns in this order, each on their own dice"
    else:
        what = "solitaire"
    lines = [f"{game_title(match.rules)}, {what}. Seed {match.seed}. Record: {path}"]
    if resumed:
        lines.append(f"Resumed game {match.game_id}: {len(match.decisions)} decisions replayed.")
    if match.coach:
        lines.append("Coach on: after each decision you see the optimal choice and what yours cost.")
    lines.append("Type ? for help.")
    return "\n".join(lines)


# -- the game loop -----------------------------------------------------------------------------


def human_decision(
    match: Match,
    seat: Seat,
    console,
    grader=None,
    news: list[str] = (),
    after: list[str] | None = None,
    target: int | None = None,
    exact=None,
) -> dict:
    """Ask until the person types a legal command; apply it. ``QuitGame`` if they quit.

    What the decision did (the coach's verdict, the row written) goes to ``after``, for the next
    screen to show under its sheet, where a 24-line terminal keeps it in view; shown now if None.
    With ``target`` (solitaire), the coach shows each option's probability of finishing on at least
    ``target`` points. ``exact``: at a table of two, the grader of the solved two-player game
    (:func:`yacht_play.coach.two_player_grading`): the coach shows its exact chances of winning.
    """
    rules = match.rules
    console.show(screen(match, seat, news, getattr(console, "height", None), getattr(console, "width", None)))
    started = time.monotonic()
    action = ask_action(seat, console, rules)
    coaching = coach_decision(grader, match, action, target, exact) if grader else None  # valued before it is played
    record = match.play(action, time.monotonic() - started)
    lines = [] if coaching is None else coaching_text(coaching, getattr(console, "width", 80)).splitlines()
    if record["points"] is not None:
        lines.append(f"{seat.name}: {decision_label(record, rules)}{bonus_text(record, rules)}, total {record['total']}")
    if after is None:
        for line in lines:
            console.show(line)
    else:
        after.extend(lines)
    return record


def ask_action(seat: Seat, console, rules: RuleSet) -> int:
    """Ask until the person types a legal decision for ``seat``; its action. Help is shown and asked again,
    a mistyped command is explained; ``QuitGame`` if they quit or input is closed for good.
    """
    ends_of_input = 0
    while True:
        text = console.ask(prompt(seat))
        if text is None:
            ends_of_input += 1
            if not console.interactive or ends_of_input > 3:  # input is closed for good
                raise QuitGame
            console.show("Ctrl-D does not end the game: type q to quit (the game stays saved), ? for help")
            continue
        ends_of_input = 0
        try:
            command = parse_command(text, seat.dice, seat.rolls_left, seat.open_bits, rules)
        except CommandError as error:
            console.show(str(error))
            continue
        if command.kind == "help":
            console.show(HELP)
            continue
        if command.kind == "quit":
            raise QuitGame
        if command.action is not None:
            return command.action


def bonus_text(record: dict, rules: RuleSet) -> str:
    """What a scoring decision earned beyond its row (``, +35 upper bonus``), or nothing."""
    extra = record["points"] - row_points_of(record, rules)
    if not extra:
        return ""
    parts = []
    yahtzee = rules.yahtzee_bonus if rules.yahtzee_bonus and extra >= rules.yahtzee_bonus and len(set(record["dice"])) == 1 else 0
    if yahtzee:
        parts.append(f"+{yahtzee} Yahtzee bonus")
    if extra - yahtzee:
        parts.append(f"+{extra - yahtzee} upper bonus")
    return ", " + ", ".join(parts)


def row_points_of(record: dict, rules: RuleSet) -> int:
    """The points a scoring decision wrote in its row (its record's ``points`` also count bonuses)."""
    from yacht_play.commands import row_points

    return row_points(record["action"] - rules.dice.num_rerolls, record["dice"], rules, record["open"])


def play_match(match: Match, console, coach: bool = False, target: int | None = None) -> None:
    """Play until every sheet is full. ``QuitGame`` when the person stops.

    ``target``: in a coached solitaire game, the coach also shows the chance of reaching it.
    """
    grader = exact = None
    if coach:
        grader = Grader(match.rules)
        exact = two_player_grading(match.rules, match.mode, len(match.seats))  # at a table of two: the solved game
        if isinstance(exact, str):
            console.show(f"Coach: {exact}")
            exact = None
    from agents.policies.guard import Replacement, guard  # here, not at the top: importing the terminal stays light

    def replaced(name: str, replacement: Replacement) -> None:
        console.show(f"{name}: {replacement.message}")

    for agent in match.seats:  # an agent that cannot choose is replaced for the rest of the game, and the person told
        if agent.policy is not None:
            agent.policy = guard(agent.policy, partial(replaced, agent.name))
    agent_turn: list[dict] = []
    news: list[str] = []  # what the person has not seen yet: the coach on their last decision, agents' turns
    while not match.finished:
        seat = match.current
        if seat.kind == "human":
            after: list[str] = []
            human_decision(match, seat, console, grader, news, after, target=target, exact=exact)
            news = after
            continue
        if match.mode == "duplicate":  # the agent plays the same dice unseen, after the person
            if seat.rows_filled == 0 and seat.rolls_left == match.rules.rolls_per_turn - 1:
                console.show(f"{seat.name} now plays the same dice ...")
            match.play_agent()
            continue
        agent_turn.append(match.play_agent())
        if agent_turn[-1]["points"] is not None:
            news.append(agent_turn_line(agent_turn, match.rules))
            agent_turn = []
    for line in news:
        console.show(line)


# -- command line ------------------------------------------------------------------------------


def default_record_path(seed: int) -> Path:
    """The default record file for a game from ``seed``: under games/, named by date and seed."""
    return Path("games") / f"{datetime.now():%Y%m%d-%H%M%S}-seed{seed}.jsonl"


def new_match(args) -> tuple[Match, Path]:
    """A new match from the command-line ``args``, and its record file."""
    seed = args.seed if args.seed is not None else secrets.randbelow(1_000_000)
    problem = unsafe_character(args.name or "") or (len(args.name or "") > NAME_LENGTH and f"at most {NAME_LENGTH} characters")
    if problem:  # the record's reader would refuse the name: refused before the game, as the browser refuses it
        raise RecordError(f"--name {ascii(args.name)[:80]}: {problem}; use letters, digits, spaces and punctuation")
    human = Player(args.name or "you", "human")
    policies = [args.duplicate] if args.duplicate else args.vs
    names = unique_names([human.name, *(agent_name(p) for p in policies)])
    players = [human, *(Player(name, "agent", policy) for name, policy in zip(names[1:], policies))]
    mode = "duplicate" if args.duplicate else "table" if args.vs else "solitaire"
    if len(players) > MAX_SEATS:
        raise RecordError(f"a table seats at most {MAX_SEATS} players (you and {MAX_SEATS - 1} agents), got {len(players)}")
    path = Path(args.record) if args.record else default_record_path(seed)
    if path.exists() and not path.is_file():
        raise RecordError(f"--record {str(path)!r} is not a regular file: give a .jsonl file to append the game to")
    if path.exists():
        games = load_games(path).games
        if games and not games[-1].finished:
            raise RecordError(f"{path} ends with an unfinished game: continue it with --resume {path}, or record elsewhere")
    return Match.new(players, seed, mode, rules=rule_set(args.rules or YACHT.name), coach=args.coach), path


def resumed_match(args) -> tuple[Match, Path]:
    """The match recorded in ``args.resume``, and its record file."""
    path = Path(args.resume)
    if path.exists() and not path.is_file():
        raise RecordError(f"--resume {str(path)!r} is not a regular file: give the game's .jsonl record")
    wanted = rule_set(args.rules) if args.rules else None
    games = load_games(path, wanted).games  # every line checked and every game replayed; no policy built yet
    if not games:
        raise RecordError(f"{path} holds no game to resume")
    game = games[-1]
    if game.finished:
        totals = ", ".join(f"{p['name']} {t}" for p, t in zip(game.players, game.end["totals"]))
        raise RecordError(f"the game in {path} is finished ({totals}): nothing to resume")
    agent_seats = [p["seat"] for p in game.players if p["kind"] == "agent"]
    policies = {}
    if args.vs:  # the person names the agents again: the record's names are only labels
        if len(args.vs) != len(agent_seats):
            raise RecordError(
                f"the game in {path} has {len(agent_seats)} agent seat(s); --vs names {len(args.vs)}: "
                "give one --vs per agent, in seat order"
            )
        rules = rule_set(game.header["rules"])
        num_players = 1 if game.header["mode"] == "duplicate" else len(game.players)
        policies = {
            seat: load_policy(name, rules, game.players[seat]["seed"], num_players) for seat, name in zip(agent_seats, args.vs)
        }
    match = Match.resume(game, policies, source=str(path))
    match.coach = match.coach or args.coach
    return match, path


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the arguments of ``yacht play`` to ``parser``."""
    from agents.registry import or_list, policy_names, shipped_policies

    parser.description = __doc__
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    opponents = parser.add_mutually_exclusive_group()
    opponents.add_argument(
        "--vs",
        action="append",
        default=[],
        metavar="AGENT",
        help=f"an agent at the table: {or_list(policy_names())}; the shipped models by name: "
        f"{', '.join(shipped_policies())} (repeatable, up to {MAX_SEATS - 1}); with --resume, the game's agents "
        "named again in seat order",
    )
    opponents.add_argument("--duplicate", metavar="AGENT", help="play the same dice as this agent and compare turn by turn")
    parser.add_argument("--coach", action="store_true", help="after each decision, show the optimal choice and what yours cost")
    parser.add_argument(
        "--target",
        type=whole_number(noun="a whole number of points,"),
        metavar="T",
        help=("with --coach in a solitaire game: also show each option's chance of finishing with at least T points"),
    )
    add_rules_option(parser, "the rule set: {names} (default yacht; with --resume, the record's, which must match)")
    parser.add_argument(
        "--seed",
        type=whole_number(most=2**32 - MAX_SEATS - 1),  # every seat's seed + seat must stay a 32-bit seed
        help="seed of the dice, 0 or more (default: a random one, shown and recorded)",
    )
    parser.add_argument("--name", help="your name in the records (default: you)")
    parser.add_argument(
        "--record", metavar="FILE", help="record file; a new game is appended (default: games/<time>-seed<seed>.jsonl)"
    )
    parser.add_argument("--resume", metavar="FILE", help="continue the unfinished game recorded in FILE")
    parser.set_defaults(run=run)


def run(args, console=None) -> int:
    """Run ``yacht play`` with the parsed ``args``; return the exit status."""
    if args.resume and (args.duplicate or args.seed is not None or args.record or args.name):
        print(
            "yacht play: error: --resume continues the recorded game as it was; it takes no --duplicate, "
            "--seed, --record or --name (only --vs, to name its agents again)",
            file=sys.stderr,
        )
        return 2
    try:
        match, path = resumed_match(args) if args.resume else new_match(args)
    except (RecordError, ValueError, OSError) as error:
        print(f"yacht play: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # while agents load: nothing is recorded yet
        return 130
    if args.target is not None and not (match.coach and match.mode == "solitaire"):
        print(
            f"yacht play: error: --target {args.target} goes with a coached solitaire game (--coach, no --vs or "
            "--duplicate): it shows the chance of reaching the target",
            file=sys.stderr,
        )
        return 2
    if args.target is not None and match.rules.has_bonus_or_joker:
        print(
            f"yacht play: error: --target works for rule sets without bonuses or jokers (yacht, yacht_exercism); "
            f"{match.rules.name} has them: play --coach without --target",
            file=sys.stderr,
        )
        return 2
    console = console or TerminalConsole()
    try:
        writer = RecordWriter(path)
    except OSError as error:
        print(f"yacht play: error: cannot write the record {str(path)!r}: {error.strerror or error}", file=sys.stderr)
        return 2
    try:
        match.record_to(writer, header=not args.resume)
        if args.resume and match.end is not None:  # every decision was saved, the end line was not
            writer.write(match.end)
        console.show(intro(match, path, bool(args.resume)))
        try:
            play_match(match, console, match.coach, target=args.target)
        except QuitGame:
            console.show(saved_text(path, match))
            return 0
        except KeyboardInterrupt:
            console.show()
            console.show(saved_text(path, match))
            return 130
        console.show(end_screen(match, path))
        return 0
    finally:
        writer.close()


def main(argv=None, console=None) -> int:
    """Run ``yacht play`` on ``argv``; return the exit status."""
    parser = argparse.ArgumentParser(prog="yacht play")
    configure(parser)
    args = parser.parse_args(argv)
    return args.run(args, console)


if __name__ == "__main__":
    sys.exit(main())
