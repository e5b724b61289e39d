"""What a person types at the Yacht prompt, turned into actions, and choices phrased back for people.

Commands (case does not matter; commas and spaces are interchangeable):

- ``k 3 3`` / ``keep 33`` / ``k33``: keep these dice *values* and re-roll the others
  (``k none`` re-rolls everything);
- ``r 1 4`` / ``reroll 14`` / ``r14``: re-roll the dice at these *positions* 1..5 (``r all``);
- ``s 9`` / ``score full_house`` / ``s full`` / ``s fh``: score a row by its number (1..12 in Yacht), its
  name, a unique start of its name, or a short alias (``fh``, ``ss``, ``ls``, ``3k``, ``y``, ...);
- ``?`` help, ``q`` quit.

Anything else raises :class:`CommandError` with a one-line message saying what is allowed.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

import numpy as np

from yacht_env.actions import ActionLayout
from yacht_env.option_values import WHOLE
from yacht_env.rules import RuleSet

HELP_WORDS = {"?", "h", "help"}
QUIT_WORDS = {"q", "quit", "exit"}
KEEP_WORDS = {"k", "keep"}
REROLL_WORDS = {"r", "reroll", "re-roll", "roll"}
SCORE_WORDS = {"s", "score"}
ALL_WORDS = {"all", "*"}
NONE_WORDS = {"none", "nothing", "-"}
ROW_ALIASES = {  # short names; the first row of the list that the rules have
    "3k": ("three_of_a_kind",),
    "tk": ("three_of_a_kind",),
    "4k": ("four_of_a_kind",),
    "fk": ("four_of_a_kind",),
    "fh": ("full_house",),
    "ls": ("little_straight", "large_straight"),
    "bs": ("big_straight",),
    "ss": ("small_straight",),
    "1p": ("one_pair",),
    "2p": ("two_pairs",),
    "y": ("yacht", "yahtzee", "yatzy"),
}

USAGE = "k DICE keeps dice (k 3 3), r POSITIONS re-rolls (r 1 4), s ROW scores (s 9, s full_house), ? help, q quit"
SCORE_ONLY = "no re-rolls left this turn: score a row, e.g. s 9 or s full_house"

HELP = """\
Commands:
  k 3 3   keep    keep the dice showing these values, re-roll the others   (also: keep 33, k33; k none re-rolls all)
  r 1 4   re-roll re-roll the dice at these positions (1 = leftmost)        (also: reroll 14, r14; r all)
  s 9     score   write the dice into a row, by number or name               (also: s full_house, s full, s fh)
  ?       help    this text
  q       quit    stop now; the game is saved and `yacht play --resume FILE` continues it (Ctrl-C too)
Dice are shown sorted; positions 1..5 count from the left. Each turn has up to two re-rolls; after the
third roll you must score. A row the dice do not fit scores 0. The "now" column shows what each open
row would score with the dice as they are; under Yahtzee rules it follows the joker rule: where a
Yahtzee rolled with its box filled may go, and at which points (a joker's 25, 30 or 40)."""


class CommandError(ValueError):
    """Input that is not a command allowed now; the message is one line for the person."""


@dataclass(frozen=True)
class Command:
    """A parsed command: ``kind`` is ``action`` (with the ``Yacht-v0`` action), ``help`` or ``quit``."""

    kind: str
    action: int | None = None


def split_command(text: str) -> tuple[str, str]:
    """``"k 3 3"`` -> ``("k", "3 3")``; single letters may run into digits: ``"k33"`` -> ``("k", "33")``."""
    text = text.strip()
    parts = text.split(None, 1)
    word = parts[0].lower() if parts else ""
    rest = parts[1] if len(parts) > 1 else ""
    glued = re.fullmatch(r"([krs])([0-9][0-9,]*)", word)
    if glued:
        word, rest = glued.group(1), glued.group(2)
    return word, rest


def digits(rest: str, what: str) -> list[int]:
    """Every digit in ``rest`` (``"3 3"``, ``"33"``, ``"3,3"``), or ``CommandError``."""
    values = []
    for token in re.split(r"[\s,]+", rest.strip()):
        if not token:
            continue
        if not WHOLE.fullmatch(token):  # ASCII digits: str.isdigit also takes "٣" and "²"
            raise CommandError(f"{token!r} is not a {what}: {USAGE}")
        values.extend(int(ch) for ch in token)
    return values


def dice_text(dice) -> str:
    """Dice as a person reads them: ``2 2 4 5 6``."""
    return " ".join(str(int(d)) for d in dice)


def keep_mask(values: list[int], dice: tuple[int, ...], rules: RuleSet) -> int:
    """Re-roll mask that keeps dice showing ``values`` (the leftmost matching dice) and re-rolls the rest."""
    wanted = Counter(values)
    have = Counter(dice)
    for face, count in sorted(wanted.items()):
        if not 1 <= face <= rules.num_faces:
            raise CommandError(f"{face} is not a die face (1..{rules.num_faces}); k takes dice values, r takes positions")
        if have[face] < count:
            raise CommandError(f"cannot keep {dice_text(sorted(values))}: your dice are {dice_text(dice)}")
    if sum(wanted.values()) == len(dice):
        raise CommandError("keeping every die is not a re-roll: score a row instead, e.g. s 9 or s full_house")
    mask = 0
    for position, face in enumerate(dice):
        if wanted[face] > 0:
            wanted[face] -= 1
        else:
            mask |= 1 << position
    return mask


def reroll_mask(positions: list[int], num_dice: int) -> int:
    """Re-roll mask of the dice at 1-based ``positions``, or ``CommandError`` naming a bad one."""
    mask = 0
    for position in positions:
        if not 1 <= position <= num_dice:
            raise CommandError(f"there is no die at position {position}: positions are 1 to {num_dice}, left to right")
        mask |= 1 << (position - 1)
    return mask


def normalized(name: str) -> str:
    """A row name as it is matched: lower case, letters and digits only."""
    return re.sub(r"[^a-z0-9]", "", name.lower())


def find_row(text: str, rules: RuleSet) -> int:
    """Row index for a number 1..rows, a name or title, a unique start of one, or an alias."""
    text = text.strip()
    if not text:
        raise CommandError(f"s needs a row: a number 1 to {rules.num_rows} or a name, e.g. s 9 or s full_house")
    if WHOLE.fullmatch(text):
        number = int(text)
        if not 1 <= number <= rules.num_rows:
            raise CommandError(f"there is no row {number}: rows are numbered 1 to {rules.num_rows}")
        return number - 1
    key = normalized(text)
    names = {normalized(c.name): i for i, c in enumerate(rules.categories)}
    names.update({normalized(c.title): i for i, c in enumerate(rules.categories)})
    if key in names:
        return names[key]
    for alias in ROW_ALIASES.get(key, ()):
        if alias in rules.category_index:
            return rules.category_index[alias]
    starts = sorted({i for name, i in names.items() if key and name.startswith(key)})
    if len(starts) == 1:
        return starts[0]
    if len(starts) > 1:
        candidates = ", ".join(rules.category_names[i] for i in starts)
        raise CommandError(f"{text!r} could be {candidates}: type more of the name, or the row number")
    raise CommandError(
        f"there is no row called {text!r}: use a number 1 to {rules.num_rows} or a name like "
        f"{', '.join(rules.category_names[c] for c in (0, len(rules.categories) // 2, -1))}"
    )


def parse_command(text: str, dice: tuple[int, ...], rolls_left: int, open_bits: int, rules: RuleSet) -> Command:
    """The command ``text`` asks for in this position, or ``CommandError`` saying what is allowed."""
    word, rest = split_command(text)
    if not word:
        raise CommandError(USAGE)
    if word in HELP_WORDS:
        return Command("help")
    if word in QUIT_WORDS:
        return Command("quit")
    if word in KEEP_WORDS or word in REROLL_WORDS:
        if rolls_left == 0:
            raise CommandError(SCORE_ONLY)
        argument = rest.strip().lower()
        if word in KEEP_WORDS:
            if argument in NONE_WORDS:
                return Command("action", (1 << len(dice)) - 1)
            values = digits(rest, "die value")
            if not values:
                raise CommandError("k needs the dice values to keep, e.g. k 3 3 (k none re-rolls all five)")
            return Command("action", keep_mask(values, dice, rules))
        if argument in ALL_WORDS:
            return Command("action", (1 << len(dice)) - 1)
        positions = digits(rest, "die position")
        if not positions:
            raise CommandError("r needs the positions to re-roll, e.g. r 1 4 (r all re-rolls all five)")
        return Command("action", reroll_mask(positions, len(dice)))
    if word in SCORE_WORDS:
        row = find_row(rest, rules)
        if not open_bits >> row & 1:
            open_rows = " ".join(str(c + 1) for c in range(rules.num_rows) if open_bits >> c & 1)
            raise CommandError(f"{rules.categories[row].title} is already filled; open rows: {open_rows}")
        layout = ActionLayout(rules)
        action = layout.score_action(row)
        if layout.why_illegal(action, rolls_left, open_bits, rules.hand(list(dice))) is not None:  # the forced joker rule
            allowed, _ = rules.scoring_options(list(dice), open_bits)
            rows = [c for c in range(rules.num_rows) if allowed >> c & 1]
            where = (
                f"{rules.categories[rows[0]].title} ({rows[0] + 1})"
                if len(rows) == 1
                else "rows " + " ".join(str(c + 1) for c in rows)
            )  # one line on 80 columns
            title = rules.categories[row].title
            raise CommandError(f"{title} cannot take this Yahtzee: the forced joker rule sends it to {where}")
        return Command("action", action)
    raise CommandError(f"unknown command {word!r}: {USAGE}")


def open_bits_of(open_rows, rules: RuleSet) -> int:
    """The open-row bit set of ``open_rows``: a bit set already, or row names (as records hold them)."""
    if isinstance(open_rows, (int, np.integer)):
        return int(open_rows)
    return sum(1 << rules.category_index[name] for name in open_rows)


def row_points(row: int, dice, rules: RuleSet, open_rows=None) -> int:
    """What ``dice`` write in ``row``: at joker values when the joker rule makes them a joker with
    ``open_rows`` open (a bit set or names; without it, the usual points).
    """
    hand = rules.hand(list(dice))
    table = rules.hand_scores
    if open_rows is not None and rules.joker != "none":
        bits = open_bits_of(open_rows, rules)
        if bits and rules.scoring_options(hand, bits)[1]:
            table = rules.joker_hand_scores
    return int(table[hand, row])


def choice_label(action: int, dice, rules: RuleSet, open_rows=None) -> str:
    """A choice as people say it, without positions: ``keep 3 3``, ``re-roll all``, ``score Full House (19)``.

    Re-rolls that keep the same dice get the same label: they are the same choice. A row's points
    are those the row takes (at joker values for a joker, given ``open_rows``), bonuses aside.
    """
    first_score = rules.dice.num_rerolls
    if action >= first_score:
        row = action - first_score
        return f"score {rules.categories[row].title} ({row_points(row, dice, rules, open_rows)})"
    positions = rules.dice.reroll_positions[action]
    if len(positions) == len(dice):
        return "re-roll all"
    return "keep " + dice_text(d for i, d in enumerate(dice) if i not in positions)


def decision_label(record: dict, rules: RuleSet) -> str:
    """:func:`choice_label` of a decision record (its action, dice and open rows)."""
    return choice_label(record["action"], record["dice"], rules, record["open"])


def describe_choice(action: int, dice, rules: RuleSet, open_rows=None) -> str:
    """:func:`choice_label` plus the positions a partial re-roll picks up: ``keep 3 3 (re-roll 1,4,5)``."""
    label = choice_label(action, dice, rules, open_rows)
    positions = rules.dice.reroll_positions[action] if action < rules.dice.num_rerolls else ()
    if 0 < len(positions) < len(dice):
        label += f" (re-roll {','.join(str(p + 1) for p in positions)})"
    return label
