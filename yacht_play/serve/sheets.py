"""What a page sees of a rule set and of a score sheet: the rows, the bonus lines, what the dice would score now.

The server's views (:mod:`yacht_play.serve.games`) put these into their JSON. Every figure comes
from the game itself (:class:`yacht_env.game.GameBatch` through the match's seats) or from the rules
(:meth:`yacht_env.rules.RuleSet.scoring_options` for where a joker may go and at which values), so
the page only draws.
"""

from __future__ import annotations

from yacht_env.echo import echoed
from yacht_env.rules import RULE_SETS, RuleSet


def rule_set_title(name: str) -> str:
    """The rule set ``name`` as the pages call it (its name, for one without a title)."""
    return RULE_SETS[name].title if name in RULE_SETS else name


def rules_view(rules: RuleSet) -> dict:
    """The rule set as a page draws it: its name and title, its rows (the upper ones first) and its bonuses."""
    return {
        "name": rules.name,
        "title": rules.title,
        "rows": [{"name": c.name, "title": c.title, "upper": c.upper} for c in rules.categories],
        "rolls_per_turn": rules.rolls_per_turn,
        "bonus_threshold": rules.bonus_threshold,
        "bonus_points": rules.bonus_points,
        "yahtzee_bonus": rules.yahtzee_bonus,
    }


def sheet_view(seat) -> dict:
    """One seat's sheet: the points in each row, the upper subtotal (0 under rules without an upper bonus, as the
    decision's sheet state has it), the bonuses earned and the total (bonuses in).
    """
    upper_bonus, yahtzee_bonus = seat.bonuses
    return {
        "seat": seat.index,
        "cells": list(seat.sheet),
        "total": seat.total,
        "upper_subtotal": seat.sheet_state[0],
        "upper_bonus": upper_bonus,
        "yahtzee_bonus": yahtzee_bonus,
    }


def now_points(rules: RuleSet, dice, open_bits: int) -> dict[str, int]:
    """What ``dice`` would write in each row they may go in now (at joker values for a joker), by row name.

    Under the forced joker rule a Yahtzee may go in fewer rows than are open: only those are given.
    """
    return {rules.category_names[c]: points for c, points in rules.scores_now(list(dice), open_bits).items()}


def rules_from_request(value, default: RuleSet) -> RuleSet:
    """The rule set a request names (``default`` when it names none); ``ValueError`` naming the allowed ones."""
    if value is None:
        return default
    if not isinstance(value, str) or value not in RULE_SETS:
        raise ValueError(f"rules {echoed(value)} is not a rule set; choose one of {', '.join(RULE_SETS)}")
    return RULE_SETS[value]
