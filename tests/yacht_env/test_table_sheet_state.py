"""Under bonus rules a table observation shows every player's sheet state, not only the observer's.

What another player can still score depends on their upper subtotal and Yahtzee box as much as on their
open rows, so each other player's block carries them, in every encoding, laid out as the own sheet part.
The checks play real games (the PettingZoo env and ``YachtTable-v0``) and compare each observation with
the sheets the game holds.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from pettingzoo.test import api_test

from agents.registry import make_opponents
from yacht_env.encoding import ENCODINGS, make_encoding
from yacht_env.rules import rule_set
from yacht_env.table import pettingzoo_env as multiplayer
from yacht_env.table.encoding import make_table_encoding


def sheet_state(rules, sheet) -> tuple[int, int, int]:
    """``(upper subtotal capped at the threshold, bonus reached, Yahtzee box full)`` from a player's written rows."""
    upper = sum(points for row, points in enumerate(sheet) if points is not None and rules.categories[row].upper)
    threshold = rules.bonus_threshold
    yahtzee = rules.yahtzee_row_index
    full = int(rules.tracks_yahtzee_box and sheet[yahtzee] is not None and sheet[yahtzee] > 0)
    return min(upper, threshold), int(upper >= threshold), full


def others_shown(rules, encoding, observation, num_players: int) -> list[tuple[int, int, int]]:
    """Each other player's ``(upper subtotal, bonus reached, Yahtzee box full)`` as the observation shows it."""
    own = make_encoding(encoding, rules)
    if encoding == "dict":
        assert ("other_yahtzee_box_full" in observation) == rules.tracks_yahtzee_box
        return [
            (
                int(observation["other_upper_totals"][i]),
                int(observation["other_bonus_reached"][i]),
                int(observation["other_yahtzee_box_full"][i]) if rules.tracks_yahtzee_box else 0,
            )
            for i in range(num_players - 1)
        ]
    width = own.space.shape[0]
    block = 1 + own.rules.num_rows + own.sheet_width
    shown = []
    for i in range(num_players - 1):
        part = observation[width + 1 + i * block + 1 + own.rules.num_rows :][: own.sheet_width]
        upper, full = own._decode_sheet_part(part[None], getattr(own, "scale_sheet", True))
        shown.append((int(upper[0]), int(upper[0] >= own.rules.bonus_threshold), int(full[0])))
    return shown


@pytest.mark.parametrize("rules_name", ["yahtzee", "yatzy"])
@pytest.mark.parametrize("encoding", ENCODINGS)
def test_every_other_players_sheet_state_is_shown_as_the_game_holds_it(rules_name, encoding):
    rules = rule_set(rules_name)
    env = multiplayer.raw_env(num_players=3, rules=rules_name, observation_encoding=encoding)
    env.reset(seed=11)
    rng = np.random.default_rng(4)
    checked = set()
    while not all(env.terminations.values()):
        agent = env.agent_selection
        observation = env.observe(agent)["observation"]
        seat = env.possible_agents.index(agent)
        order = [env.possible_agents[(seat + k) % 3] for k in (1, 2)]
        sheets = env.sheets
        expected = [sheet_state(rules, sheets[other]) for other in order]
        assert others_shown(rules, encoding, observation, 3) == expected
        assert env.observation_space(agent)["observation"].contains(observation)
        checked.update(expected)
        mask = env.observe(agent)["action_mask"]
        env.step(int(rng.choice(np.flatnonzero(mask))))
    if rules.bonus_points:
        assert any(state[0] > 0 for state in checked)  # not all zeros: the subtotals were seen growing


def test_yacht_keeps_its_layouts():
    for encoding in ENCODINGS:
        table = make_table_encoding(encoding, 2, rule_set("yacht"))
        if encoding == "dict":
            assert not any(key.startswith("other_upper") or key.startswith("other_yahtzee") for key in table.space.spaces)
        else:
            own = make_encoding(encoding, rule_set("yacht")).space.shape[0]
            assert table.space.shape == (own + 1 + 13,)


def test_the_pettingzoo_api_holds_under_bonus_rules_with_the_sheet_state():
    api_test(multiplayer.env(num_players=3, rules="yahtzee", observation_encoding="dict"), num_cycles=300)


def test_yacht_table_env_shows_the_opponents_sheet_state():
    env = gym.make(
        "YachtTable-v0", rules="yatzy", opponents=make_opponents(["optimal"], rules="yatzy"), observation_encoding="dict"
    )
    observation, info = env.reset(seed=3)
    rng = np.random.default_rng(0)
    seen = 0
    terminated = False
    while not terminated:
        table = env.unwrapped.tables
        upper = int(table.upper_totals[0, 1])
        assert observation["other_upper_totals"][0] == min(upper, 63)
        assert observation["other_bonus_reached"][0] == int(upper >= 63)
        seen = max(seen, upper)
        observation, _, terminated, _, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
    assert seen > 0
