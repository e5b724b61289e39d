"""Every env plays every named rule set: bonuses, extra Yahtzees and jokers, against the rule book.

The transition (compiled, :mod:`yacht_env.game`) and the rule book's own scoring
(:meth:`RuleSet.score_on`, pure Python) are written apart; here they must agree on every scoring
action of many games, on dice rigged to roll Yahtzees often so that jokers and extra-Yahtzee
bonuses happen, and the envs' observations, masks and rewards must show the same sheet.
"""

from __future__ import annotations

import inspect
import re

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env, data_equivalence
from gymnasium.vector import AutoresetMode, SyncVectorEnv
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.yacht_env.test_vector_env import play_against_sync
from yacht_env import IllegalActionError, YachtEnv
from yacht_env.encoding import ENCODINGS, Encoding
from yacht_env.render import render_position
from yacht_env.rules import RULE_SETS, YAHTZEE, YAHTZEE_FORCED_JOKER, YATZY, Category, RuleSet, rule_set
from yacht_env.vector_env import YachtVectorEnv

NAMES = list(RULE_SETS)
SHEET_NAMES = [name for name, rules in RULE_SETS.items() if rules.has_bonus_or_joker]


def rigged_faces(rules, seed: int, alike_rate: float) -> np.ndarray:
    """A dice stream whose first roll is five alike on about ``alike_rate`` of the turns."""
    rng = np.random.default_rng(seed)
    faces = rng.integers(1, rules.num_faces + 1, size=(rules.num_turns, rules.rolls_per_turn, rules.num_dice))
    alike = rng.random(rules.num_turns) < alike_rate
    faces[alike, 0, :] = rng.integers(1, rules.num_faces + 1, size=(int(alike.sum()), 1))
    return faces.astype(np.int8)


def score_part(env: YachtEnv, mask: np.ndarray) -> int:
    """The score actions of a mask as a bit set of rows."""
    return sum(1 << c for c, legal in enumerate(mask[env.layout.first_score_action :]) if legal)


@pytest.mark.parametrize("name", SHEET_NAMES)
@given(seed=st.integers(0, 2**32 - 1), alike_rate=st.sampled_from([0.0, 0.5, 0.9]))
@settings(max_examples=25, deadline=None)
def test_transition_scores_every_action_as_the_rule_book_does(name, seed, alike_rate):
    rules = rule_set(name)
    env = YachtEnv(rules=name, observation_encoding="flat")
    obs, info = env.reset(options={"faces": rigged_faces(rules, seed, alike_rate)})
    rng = np.random.default_rng(seed)
    sheet = rules.new_sheet()
    rewards = 0.0
    terminated = False
    while not terminated:
        hand, rolls_left, open_bits = env.state
        # The mask's rows are exactly the rows the rule book lets these dice go in.
        rows, joker = rules.scoring_options(hand, open_bits)
        assert score_part(env, info["action_mask"]) == rows
        np.testing.assert_array_equal(info["action_mask"], env.action_masks().astype(np.int8))
        # The observation shows the sheet state the rule book keeps (the subtotal capped at the threshold).
        upper, full = env.encoding.decode_sheet_batch(obs[None])
        assert upper[0] == min(sheet.upper_total, rules.upper_cap)
        assert full[0] == (int(bool(sheet.yahtzee_box)) if rules.tracks_yahtzee_box else 0)
        assert env.sheet_state == (sheet.upper_total, int(bool(sheet.yahtzee_box)) if rules.yahtzee_row else 0)
        # Score at random among the legal rows half the time, else re-roll when allowed.
        if rolls_left and rng.random() < 0.5:
            action = int(rng.integers(1, env.layout.first_score_action))
            obs, reward, terminated, _, info = env.step(action)
            assert reward == 0.0
            continue
        row = int(rng.choice([c for c in range(rules.num_rows) if rows >> c & 1]))
        expected = rules.score_on(sheet, hand, row)
        obs, reward, terminated, _, info = env.step(env.layout.score_action(row))
        assert not info["illegal_action"]
        assert reward == expected.reward
        assert env.sheet[row] == expected.points
        sheet = expected.sheet
        rewards += reward
        assert info["total"] == rewards
    # Rewards sum to the final total: the rows plus every bonus.
    assert env.total == rewards == sum(env.sheet) + sum(env.unwrapped._game.bonuses(0, 0))


def play_scripted(rules, faces, rows_in_order):
    """Play ``faces`` scoring each turn's first roll in the given rows; returns the env and rewards."""
    env = YachtEnv(rules=rules, illegal_action="raise")
    env.reset(options={"faces": faces})
    rewards = []
    for row in rows_in_order:
        rewards.append(env.step(env.layout.score_action(rules.category_index[row]))[1])
    return env, rewards


def faces_with_first_rolls(rules, first_rolls) -> np.ndarray:
    faces = np.ones((rules.num_turns, rules.rolls_per_turn, rules.num_dice), dtype=np.int8)
    faces[:, :, :] = np.array([1, 2, 3, 4, 6], dtype=np.int8)  # scores little anywhere, never alike
    for turn, roll in enumerate(first_rolls):
        faces[turn, 0] = roll
    return faces


def test_forced_joker_sends_a_yahtzee_to_its_upper_row_then_to_lower_rows_at_joker_values():
    rules = YAHTZEE_FORCED_JOKER
    faces = faces_with_first_rolls(rules, [[6] * 5, [6] * 5, [6] * 5])
    env, rewards = play_scripted(rules, faces, ["yahtzee", "sixes"])
    assert rewards == [50, 30 + 100]  # the upper row of sixes, the extra-Yahtzee bonus on top
    # Sixes filled: any open lower row, at joker values; the upper rows are closed to it.
    mask = env.action_masks()
    lower = {
        rules.category_index[name]
        for name in ("three_of_a_kind", "four_of_a_kind", "full_house", "small_straight", "large_straight", "chance")
    }
    assert score_part(env, mask) == sum(1 << c for c in lower)
    with pytest.raises(IllegalActionError, match="forced joker rule sends this Yahtzee to"):
        env.step(env.layout.score_action(rules.category_index["ones"]))
    assert env.step(env.layout.score_action(rules.category_index["large_straight"]))[1] == 40 + 100


def test_forced_joker_goes_to_an_open_upper_row_for_zero_when_the_lower_rows_are_full():
    rules = YAHTZEE_FORCED_JOKER
    lower = ["three_of_a_kind", "four_of_a_kind", "full_house", "small_straight", "large_straight", "chance"]
    faces = faces_with_first_rolls(rules, [[2] * 5] * 9)
    env, rewards = play_scripted(rules, faces, ["yahtzee", "twos", *lower])
    assert rewards[:2] == [50, 10 + 100]
    assert rewards[2:] == [10 + 100, 10 + 100, 25 + 100, 30 + 100, 40 + 100, 10 + 100]  # 3K/4K/chance: the dice
    upper_open = {rules.category_index[name] for name in ("ones", "threes", "fours", "fives", "sixes")}
    assert score_part(env, env.action_masks()) == sum(1 << c for c in upper_open)
    assert env.step(env.layout.score_action(rules.category_index["fives"]))[1] == 0 + 100


def test_free_joker_scores_usual_points_while_its_upper_row_is_open_and_joker_values_after():
    rules = YAHTZEE
    faces = faces_with_first_rolls(rules, [[3] * 5] * 4)
    # Yahtzee box 50; the threes row open: full house takes the usual 0 (five alike is not a full house).
    env, rewards = play_scripted(rules, faces, ["yahtzee", "full_house", "threes", "small_straight"])
    assert rewards == [50, 0 + 100, 15 + 100, 30 + 100]


def test_no_extra_bonus_once_the_yahtzee_box_holds_zero():
    rules = YAHTZEE
    faces = faces_with_first_rolls(rules, [[1, 2, 3, 4, 6], [5] * 5, [5] * 5])
    env, rewards = play_scripted(rules, faces, ["yahtzee", "fives", "large_straight"])
    assert rewards == [0, 25, 40]  # box zeroed: no bonus, but still a joker (Verhoeff's rule)
    assert env.sheet_state[1] == 0


def test_upper_bonus_is_paid_once_on_the_score_that_reaches_the_threshold():
    rules = YAHTZEE
    first_rolls = [[6, 6, 6, 6, 1], [5, 5, 5, 5, 1], [4, 4, 4, 4, 1], [3, 3, 3, 3, 1], [2, 2, 2, 2, 1], [1, 1, 1, 1, 2]]
    env, rewards = play_scripted(
        rules, faces_with_first_rolls(rules, first_rolls), ["sixes", "fives", "fours", "threes", "twos", "ones"]
    )
    # 24 + 20 + 16 = 60, then 12 reaches 72 >= 63: the bonus comes with the threes.
    assert rewards == [24, 20, 16, 12 + 35, 8, 4]
    assert env.sheet_state == (84, 0)
    text = render_position(rules, None, 0, env.sheet, rules.num_turns, total=env.total)
    assert re.search(r"Upper subtotal +84/63\n +Bonus \(35\) +35\n", text) and text.endswith(f" {env.total}")


def test_yatzy_scores_its_edge_cases_through_the_env():
    rules = YATZY
    # Two pairs from four alike is no two pairs; one pair scores the highest pair; the straights are patterns.
    faces = faces_with_first_rolls(rules, [[4, 4, 4, 4, 2], [4, 4, 4, 4, 2], [1, 2, 3, 4, 5], [2, 3, 4, 5, 6], [3, 3, 5, 5, 5]])
    _, rewards = play_scripted(rules, faces, ["two_pairs", "one_pair", "small_straight", "large_straight", "full_house"])
    assert rewards == [0, 8, 15, 20, 21]


@pytest.mark.parametrize("name", NAMES)
def test_check_env_passes_for_every_rule_set_and_encoding(name):
    for encoding in ENCODINGS:
        check_env(YachtEnv(rules=name, observation_encoding=encoding), skip_render_check=True)


@pytest.mark.parametrize("env_id, name", [("Yahtzee-v0", "yahtzee"), ("Yatzy-v0", "yatzy")])
def test_registered_ids_are_yacht_v0_with_their_rule_set(env_id, name):
    env = gym.make(env_id)
    assert env.unwrapped.rules is RULE_SETS[name]
    assert env.action_space == gym.spaces.Discrete(32 + RULE_SETS[name].num_rows)
    venv = gym.make_vec(env_id, num_envs=2, vectorization_mode="vector_entry_point")
    assert isinstance(venv, YachtVectorEnv) and venv.rules is RULE_SETS[name]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("encoding", ["flat", "features", "dict"])
def test_vector_env_equals_sync_vector_env_for_every_rule_set(name, encoding):
    kwargs = dict(rules=name, observation_encoding=encoding, max_illegal_actions=2)
    venv = YachtVectorEnv(6, **kwargs)
    sync = SyncVectorEnv([lambda: YachtEnv(**kwargs)] * 6, autoreset_mode=AutoresetMode.SAME_STEP)
    assert play_against_sync(venv, sync, steps=200, illegal_rate=0.1) >= 6


def test_vector_env_masks_follow_the_forced_joker():
    rules = YAHTZEE_FORCED_JOKER
    faces = faces_with_first_rolls(rules, [[6] * 5, [6] * 5])
    venv = YachtVectorEnv(2, rules=rules)
    single = YachtEnv(rules=rules)
    obs, infos = venv.reset(options={"faces": faces})
    single.reset(options={"faces": faces})
    action = single.layout.score_action(rules.category_index["yahtzee"])
    venv.step(np.array([action, action]))
    single.step(action)
    masks = venv.action_masks()
    assert score_part(single, masks[0]) == 1 << rules.category_index["sixes"]
    np.testing.assert_array_equal(masks[0], single.action_masks())
    with pytest.raises(IllegalActionError, match="sub-env 0"):
        venv.unwrapped.illegal_action = "raise"
        venv.step(np.array([single.layout.score_action(0)] * 2))
    assert data_equivalence(venv.action_masks(), masks)


@pytest.mark.parametrize("name", SHEET_NAMES)
def test_observation_encodings_round_trip_the_sheet_state(name):
    rules = rule_set(name)
    for encoding_name, encoding_class in ENCODINGS.items():
        encoding = encoding_class(rules)
        hands = np.array([0, 5, 100, rules.dice.num_hands - 1])
        rolls = np.array([0, 1, 2, 0])
        open_bits = np.array([1, 3, rules.all_open, 6])
        upper = np.array([0, 17, 63, 90])
        full = np.array([0, 1, 1, 0])
        obs = encoding.encode_batch(hands, rolls, open_bits, upper, full)
        decoded_upper, decoded_full = encoding.decode_sheet_batch(obs)
        assert decoded_upper.tolist() == np.minimum(upper, rules.upper_cap).tolist(), encoding_name
        assert decoded_full.tolist() == (full if rules.tracks_yahtzee_box else 0 * full).tolist(), encoding_name
        assert [x.tolist() for x in encoding.decode_batch(obs)] == [hands.tolist(), rolls.tolist(), open_bits.tolist()]
        batched = gym.vector.utils.batch_space(encoding.space, 4)
        assert all(encoding.space.contains(o) for o in gym.vector.utils.iterate(batched, obs))


@pytest.mark.parametrize("name", [name for name in SHEET_NAMES if rule_set(name).bonus_points > 0])
def test_every_encoding_shows_the_bonus_reached_exactly_from_the_threshold_on(name):
    rules = rule_set(name)
    threshold = rules.bonus_threshold
    upper = np.array([0, threshold - 1, threshold, threshold + 1, threshold + 30])
    n = len(upper)
    for encoding_name, encoding_class in ENCODINGS.items():
        encoding = encoding_class(rules)
        obs = encoding.encode_batch(np.arange(n), np.zeros(n, np.int64), np.full(n, rules.all_open), upper, np.zeros(n, np.int64))
        if isinstance(obs, dict):
            shown = obs["bonus_reached"]
        else:
            shown = obs[:, obs.shape[1] - encoding.sheet_width + 1]
        assert np.asarray(shown).tolist() == [0, 0, 1, 1, 1], encoding_name


@pytest.mark.parametrize("encoding_name", ["onehot", "features"])
@pytest.mark.parametrize("name", NAMES)
def test_onehot_and_features_observations_lie_in_the_unit_box(name, encoding_name):
    """Their space is exactly [0, 1] in every entry, as a network's input normalisation expects."""
    space = ENCODINGS[encoding_name](rule_set(name)).space
    assert space.low.tolist() == [0.0] * space.shape[0]
    assert space.high.tolist() == [1.0] * space.shape[0]


@pytest.mark.parametrize("rolls_per_turn", [1, 3, 9])
@pytest.mark.parametrize("encoding_name", ["flat", "counts"])
def test_flat_and_counts_spaces_reach_exactly_the_largest_value_an_observation_holds(encoding_name, rolls_per_turn):
    """Their Box's high is the largest die, count or rolls left there is: with 9 rolls a turn, the rolls left (8)."""
    rules = RuleSet("rolls", categories=YAHTZEE.categories[:6], rolls_per_turn=rolls_per_turn)
    encoding = ENCODINGS[encoding_name](rules)
    hands = np.arange(rules.dice.num_hands)
    obs = encoding.encode_batch(hands, np.full_like(hands, rules.rolls_per_turn - 1), np.full_like(hands, rules.all_open))
    assert encoding.space.high.max() == obs.max()
    assert all(encoding.space.contains(o) for o in obs)


@pytest.mark.parametrize("name", NAMES)
def test_features_show_each_face_count_over_the_number_of_dice(name):
    rules = rule_set(name)
    encoding = ENCODINGS["features"](rules)
    hands = np.arange(rules.dice.num_hands)
    obs = encoding.encode_batch(hands, np.zeros_like(hands), np.full_like(hands, rules.all_open))
    dice_width = rules.num_dice * rules.num_faces
    shown = obs[:, dice_width : dice_width + rules.num_faces]
    for hand, row in zip(hands, shown):
        counts = np.bincount(rules.dice.hands[hand].astype(np.int64), minlength=rules.num_faces + 1)[1:]
        assert np.allclose(row, counts / rules.num_dice), rules.dice.hands[hand]


@pytest.mark.parametrize("name", ["yacht", "yahtzee"])
def test_decoding_dice_that_are_no_hand_is_refused_naming_the_observation(name):
    rules = rule_set(name)
    flat, counts = ENCODINGS["flat"](rules), ENCODINGS["counts"](rules)
    hands = np.array([3, 7, 11])
    rolls, open_bits = np.array([2, 1, 0]), np.full(3, rules.all_open)
    for encoding, bad_parts, said in (
        (flat, ([0, 1, 2, 3, 4], [2, 3, 4, 5, 7]), "dice {} are not 5 faces of 1..6"),
        (counts, ([1, 1, 1, 1, 0, 0], [6, 0, 0, 0, 0, -1], [1, 1, 1, 1, 1, 1]), "face counts {} are not a hand of 5 dice"),
    ):
        obs = encoding.encode_batch(hands, rolls, open_bits)
        assert encoding.decode_batch(obs)[0].tolist() == hands.tolist()
        for part in bad_parts:
            broken = obs.copy()
            broken[1, : len(part)] = part
            with pytest.raises(ValueError, match=re.escape("observation 1: " + said.format(part))):
                encoding.decode_batch(broken)


@pytest.mark.parametrize("name", SHEET_NAMES)
def test_a_position_given_without_sheet_state_shows_a_fresh_sheet(name):
    """``encode`` without a subtotal or a Yahtzee box shows a fresh sheet: upper subtotal 0, Yahtzee box not full."""
    rules = rule_set(name)
    for encoding_name, encoding_class in ENCODINGS.items():
        encoding = encoding_class(rules)
        obs = encoding.encode(5, 1, rules.all_open)
        batch = {k: np.asarray(v)[None] for k, v in obs.items()} if isinstance(obs, dict) else obs[None]
        positions = [x.tolist() for x in encoding.decode_positions(batch)]
        assert positions == [[5], [1], [rules.all_open], [0], [0]], encoding_name


def test_every_encoding_documents_a_fresh_sheet_as_the_default_sheet_state():
    """The interface and every encoding agree: a left-out subtotal is 0 and a left-out Yahtzee box is not full."""
    for encoding_class in (Encoding, *ENCODINGS.values()):
        parameters = inspect.signature(encoding_class.encode).parameters
        assert parameters["upper_total"].default == 0, encoding_class.__name__
        assert parameters["yahtzee_full"].default == 0, encoding_class.__name__


def test_features_of_rows_that_never_score_are_zeros():
    """A rule set may have rows that pay nothing for any dice: their score-now features are 0, not 0 / 0."""
    blank = RuleSet("blank", categories=(Category("nothing", lambda dice, counts: 0), Category("naught", lambda dice, counts: 0)))
    encoding = ENCODINGS["features"](blank)
    hands = np.arange(blank.dice.num_hands)
    obs = encoding.encode_batch(hands, np.zeros_like(hands), np.full_like(hands, blank.all_open))
    start = encoding.hand_width + encoding.rolls_width + blank.num_rows
    assert obs[:, start:].tolist() == [[0.0, 0.0]] * len(hands)
    assert all(encoding.space.contains(o) for o in obs)


@pytest.mark.parametrize("name", NAMES)
def test_joker_now_is_scoring_options_joker_for_every_hand(name):
    rules = rule_set(name)
    rng = np.random.default_rng(0)
    hands = np.concatenate([np.flatnonzero(rules.alike_hands).repeat(50), rng.integers(0, rules.dice.num_hands, 200)])
    open_bits = rng.integers(1, rules.all_open + 1, len(hands))
    expected = [rules.scoring_options(int(h), int(o))[1] for h, o in zip(hands, open_bits)]
    assert rules.joker_now(hands, open_bits).tolist() == expected


@pytest.mark.parametrize("name", NAMES)
def test_features_show_what_each_row_would_score_now_jokers_included(name):
    """The features' score-now part is :meth:`RuleSet.scores_now` (joker values where a joker pays) over the scale."""
    rules = rule_set(name)
    encoding = ENCODINGS["features"](rules)
    rng = np.random.default_rng(1)
    hands = np.concatenate([np.flatnonzero(rules.alike_hands).repeat(40), rng.integers(0, rules.dice.num_hands, 200)])
    open_bits = rng.integers(1, rules.all_open + 1, len(hands))
    yahtzee = rules.yahtzee_row_index
    if yahtzee >= 0:  # the Yahtzee box filled half the time, so that jokers come up
        open_bits[::2] &= ~(1 << yahtzee)
        open_bits[open_bits == 0] = 1 << (rules.num_rows - 1 if yahtzee == 0 else 0)
    scale = max(1, int(rules.hand_scores.max()), int(rules.joker_hand_scores.max()))
    rolls = np.zeros(len(hands), dtype=np.int64)
    obs = encoding.encode_batch(hands, rolls, open_bits, np.zeros(len(hands), np.int64), np.ones(len(hands), np.int64))
    start = encoding.hand_width + encoding.rolls_width + rules.num_rows
    shown = np.rint(obs[:, start : start + rules.num_rows] * scale).astype(np.int64)
    jokers = 0
    for k, (hand, bits) in enumerate(zip(hands.tolist(), open_bits.tolist())):
        now = rules.scores_now(hand, bits)
        assert {c: int(shown[k, c]) for c in now} == now, (rules.dice.hands[hand], bits)
        assert all(shown[k, c] == 0 for c in range(rules.num_rows) if not bits >> c & 1)
        jokers += bool(rules.joker_now([hand], [bits])[0])
    assert jokers > 0 or rules.joker == "none"


def test_the_package_keeps_its_submodules_as_attributes():
    # A module-level name of yacht_env/__init__.py that is also a submodule's name hides the submodule.
    import importlib
    import pkgutil
    import types

    import yacht_env

    for module in pkgutil.iter_modules(yacht_env.__path__):
        importlib.import_module(f"yacht_env.{module.name}")
        assert isinstance(getattr(yacht_env, module.name), types.ModuleType), module.name
    import yacht_env.rules as rules

    assert rules.RULE_SETS["yatzy"].name == "yatzy"
