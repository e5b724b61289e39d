"""The multi-player envs play every named rule set: bonuses, extra Yahtzees and jokers at a table.

The PettingZoo env and ``YachtTable-v0`` step every seat through the shared transition; here every
seat's scoring must agree with the rule book's own (:meth:`RuleSet.score_on`, pure Python) on dice
rigged to roll Yahtzees often, the masks must be the rows the rule book allows (the forced joker
included), the observations must show each seat's sheet state, and the rewards must sum to the
totals, bonuses included.
"""

from __future__ import annotations

import re

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from hypothesis import given, settings
from hypothesis import strategies as st
from pettingzoo.test import api_test, seed_test

from agents.registry import make_opponents
from tests.yacht_env.test_multiplayer import PETTINGZOO_DICT_WARNINGS
from tests.yacht_env.test_rule_set_envs import NAMES, SHEET_NAMES, faces_with_first_rolls, rigged_faces
from yacht_env import IllegalActionError
from yacht_env.rules import YAHTZEE, YAHTZEE_FORCED_JOKER, RuleSet, rule_set
from yacht_env.table import pettingzoo_env as multiplayer
from yacht_env.table.env import YachtTableEnv

pytestmark = PETTINGZOO_DICT_WARNINGS

OWN_RULES = RuleSet(
    "mini_yahtzee",
    categories=tuple(
        YAHTZEE.categories[YAHTZEE.category_index[name]]
        for name in ("ones", "twos", "threes", "fours", "fives", "sixes", "yahtzee", "chance")
    ),
    bonus_threshold=30,
    bonus_points=20,
    yahtzee_row="yahtzee",
    yahtzee_bonus=100,
    joker="forced",
)
"""A user's own rule set with every rule that ties rows together: 8 rows, 20 at 30, extra Yahtzees, forced joker."""


def table_faces(rules, seed: int, num_players: int, alike_rate: float) -> np.ndarray:
    """Every seat's dice, rigged so that first rolls are five alike on about ``alike_rate`` of the turns."""
    return np.stack([rigged_faces(rules, seed + 1000 * seat, alike_rate) for seat in range(num_players)])


def score_bits(rules, mask) -> int:
    """The score actions of a mask as a bit set of rows."""
    first = len(mask) - rules.num_rows
    return sum(1 << c for c, legal in enumerate(mask[first:]) if legal)


def check_sheet_state_shown(rules, encoding, observation, sheet) -> None:
    """The observation shows the seat's sheet state as the rule book keeps it (upper subtotal capped)."""
    upper, full = encoding.decode_sheet_batch(observation[None])
    assert upper[0] == min(sheet.upper_total, rules.upper_cap)
    assert full[0] == (int(bool(sheet.yahtzee_box)) if rules.tracks_yahtzee_box else 0)


# -- conformance, every rule set ----------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("num_players", [1, 3])
def test_pettingzoo_api_test_for_every_rule_set(name, num_players):
    api_test(multiplayer.env(num_players=num_players, rules=name), num_cycles=1000)


@pytest.mark.parametrize("name", NAMES)
def test_pettingzoo_seed_test_for_every_rule_set(name):
    seed_test(lambda: multiplayer.env(num_players=2, rules=name), num_cycles=500)


@pytest.mark.parametrize("name", SHEET_NAMES)
def test_pettingzoo_api_test_for_every_rule_set_in_score_mode_and_dict(name):
    api_test(multiplayer.env(num_players=2, rules=name, reward_mode="score", observation_encoding="dict"), num_cycles=500)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("encoding", ["flat", "dict"])
@pytest.mark.filterwarnings("error")
def test_table_env_passes_check_env_for_every_rule_set(name, encoding):
    opponents = make_opponents(["greedy", "random"], rules=name)
    env = gym.make("YachtTable-v0", rules=name, opponents=opponents, observation_encoding=encoding, render_mode="ansi")
    assert env.unwrapped.rules is rule_set(name)
    assert env.action_space == gym.spaces.Discrete(32 + rule_set(name).num_rows)
    check_env(env.unwrapped)


@pytest.mark.parametrize("name", NAMES)
def test_table_env_builds_by_rule_set_name_with_its_default_opponent(name):
    env = gym.make("YachtTable-v0", rules=name)
    obs, info = env.reset(seed=0)
    assert env.observation_space.contains(obs) and info["action_mask"].shape == (32 + rule_set(name).num_rows,)


def test_a_users_own_rule_set_plays_at_a_table():
    api_test(multiplayer.env(num_players=2, rules=OWN_RULES, reward_mode="score"), num_cycles=500)
    env = gym.make("YachtTable-v0", rules=OWN_RULES, opponents=make_opponents(["optimal"], rules=OWN_RULES))
    check_env(env.unwrapped, skip_render_check=True)
    assert env.action_space == gym.spaces.Discrete(32 + 8)


def test_table_env_refuses_opponents_of_other_rules():
    with pytest.raises(ValueError, match="plays other rules than the env's 'yahtzee'"):
        gym.make("YachtTable-v0", rules="yahtzee", opponents=make_opponents(["greedy"], rules="yatzy"))
    with pytest.raises(ValueError, match="unknown rule set 'yahtze'; expected a RuleSet or one of yacht, "):
        multiplayer.env(rules="yahtze")


# -- the rule book, seat by seat ------------------------------------------------------------------


@pytest.mark.parametrize("name", SHEET_NAMES)
@given(seed=st.integers(0, 2**31), alike_rate=st.sampled_from([0.3, 0.8]))
@settings(max_examples=6, deadline=None)
def test_pettingzoo_scores_every_seat_as_the_rule_book_does(name, seed, alike_rate):
    rules = rule_set(name)
    num_players = 3
    env = multiplayer.env(num_players=num_players, rules=name, reward_mode="score", render_mode="ansi")
    env.reset(options={"faces": table_faces(rules, seed, num_players, alike_rate)})
    raw = env.unwrapped
    rng = np.random.default_rng(seed)
    sheets = {agent: rules.new_sheet() for agent in env.possible_agents}
    gained = dict.fromkeys(env.possible_agents, 0)
    returns = dict.fromkeys(env.possible_agents, 0.0)
    for agent in env.agent_iter():
        observation, reward, termination, truncation, info = env.last()
        returns[agent] += reward
        if termination or truncation:
            env.step(None)
            continue
        seat = raw.possible_agents.index(agent)
        hand, rolls_left, open_bits = (int(part[0]) for part in raw.tables.position([0], [seat]))
        rows, joker = rules.scoring_options(hand, open_bits)
        assert score_bits(rules, observation["action_mask"]) == rows  # the forced joker's rows, where it applies
        assert [int(part[0]) for part in raw.encoding.decode_batch(observation["observation"][None])] == [
            hand,
            rolls_left,
            open_bits,
        ]
        check_sheet_state_shown(rules, raw.encoding, observation["observation"], sheets[agent])
        if rolls_left and rng.random() < 0.5:
            env.step(int(rng.integers(1, 32)))
            assert raw.rewards[agent] == 0.0
            continue
        row = int(rng.choice([c for c in range(rules.num_rows) if rows >> c & 1]))
        expected = rules.score_on(sheets[agent], hand, row)
        env.step(32 + row)
        assert raw.rewards[agent] == expected.reward
        assert raw.sheets[agent][row] == expected.points
        sheets[agent] = expected.sheet
        gained[agent] += expected.reward
        assert raw.infos[agent]["total"] == gained[agent] == raw.totals[agent]
    text = env.render()
    for seat, agent in enumerate(env.possible_agents):
        # Each seat's rewards sum to its final total: its rows plus every bonus it earned.
        assert returns[agent] == gained[agent] == raw.totals[agent]
        assert raw.totals[agent] == sum(raw.sheets[agent]) + sum(raw.tables.bonuses(0, seat))
        assert f"{agent}  Game over. Final score {raw.totals[agent]}" in text
    if rules.yahtzee_bonus:
        extras = [raw.tables.bonuses(0, seat)[1] for seat in range(num_players)]
        shown = [int(value) if value else 0 for value in re.findall(r"Yahtzee bonus \(\d+\) +(\d*)\n", text + "\n")]
        assert shown == extras


@pytest.mark.parametrize("name", SHEET_NAMES)
@given(seed=st.integers(0, 2**31))
@settings(max_examples=4, deadline=None)
def test_table_env_scores_the_learner_as_the_rule_book_does(name, seed):
    rules = rule_set(name)
    opponents = make_opponents(["optimal", "greedy"], rules=rules)
    env = YachtTableEnv(opponents, rules=rules, seat=1)
    obs, info = env.reset(seed=seed, options={"faces": table_faces(rules, seed, 3, 0.6)})
    rng = np.random.default_rng(seed)
    sheet = rules.new_sheet()
    rewards = 0.0
    terminated = False
    while not terminated:
        hand, rolls_left, open_bits = (int(part[0]) for part in env.tables.position([0], [1]))
        rows, _ = rules.scoring_options(hand, open_bits)
        assert score_bits(rules, info["action_mask"]) == rows
        check_sheet_state_shown(rules, env.encoding, obs, sheet)
        if rolls_left and rng.random() < 0.5:
            obs, reward, terminated, _, info = env.step(int(rng.integers(1, 32)))
            assert reward == 0.0
            continue
        row = int(rng.choice([c for c in range(rules.num_rows) if rows >> c & 1]))
        expected = rules.score_on(sheet, hand, row)
        obs, reward, terminated, _, info = env.step(32 + row)
        assert reward == expected.reward and env.sheets[1][row] == expected.points
        sheet = expected.sheet
        rewards += reward
        assert info["total"] == rewards == info["totals"][1]
    for seat in range(3):
        assert info["totals"][seat] == sum(env.sheets[seat]) + sum(env.tables.bonuses(0, seat))


def test_forced_joker_masks_at_a_table():
    """Seat 1 of the PettingZoo env: after its Yahtzee and sixes, five sixes may go only in a lower row."""
    rules = YAHTZEE_FORCED_JOKER
    sixes = faces_with_first_rolls(rules, [[6] * 5] * 3)
    faces = np.stack([faces_with_first_rolls(rules, []), sixes])
    env = multiplayer.env(num_players=2, rules=rules, reward_mode="score", illegal_action="raise")
    env.reset(options={"faces": faces})
    yahtzee, ones = 32 + rules.category_index["yahtzee"], 32 + rules.category_index["ones"]
    for action in (32 + rules.category_index["chance"], yahtzee, 32 + rules.category_index["twos"]):
        env.step(action)
    # player_1 rolled five sixes again: sixes is open, so the forced joker sends them there and only there.
    assert env.agent_selection == "player_1"
    assert score_bits(rules, env.observe("player_1")["action_mask"]) == 1 << rules.category_index["sixes"]
    env.step(32 + rules.category_index["sixes"])
    assert env.unwrapped.rewards["player_1"] == 30 + 100
    env.step(32 + rules.category_index["threes"])
    lower = ("three_of_a_kind", "four_of_a_kind", "full_house", "small_straight", "large_straight", "chance")
    assert score_bits(rules, env.observe("player_1")["action_mask"]) == sum(1 << rules.category_index[n] for n in lower)
    with pytest.raises(IllegalActionError, match="forced joker rule sends this Yahtzee to"):
        env.step(ones)
    env.step(32 + rules.category_index["large_straight"])
    assert env.unwrapped.rewards["player_1"] == 40 + 100
    assert env.unwrapped.totals["player_1"] == 50 + 30 + 100 + 40 + 100
