"""What the table envs share (yacht_env.table.settings): the table arguments, the deal (given or drawn) and the
judge of an action at a seat, on the real PettingZoo and Gymnasium table envs."""

from __future__ import annotations

import numpy as np
import pytest

from yacht_env.game import MAX_PLAYERS
from yacht_env.rules import YACHT
from yacht_env.table.env import YachtTableEnv
from yacht_env.table.pettingzoo_env import YachtMultiplayerEnv
from yacht_env.table.settings import TableSettings


def table_faces(num_players: int, seed: int = 0) -> np.ndarray:
    """Every seat's dice for a whole game: (seats, turns, rolls, dice), faces 1 to 6."""
    shape = (num_players, YACHT.num_turns, YACHT.rolls_per_turn, YACHT.num_dice)
    return np.random.default_rng(seed).integers(1, 7, shape)


def test_both_table_envs_are_table_settings():
    assert issubclass(YachtMultiplayerEnv, TableSettings) and issubclass(YachtTableEnv, TableSettings)


@pytest.mark.parametrize("num_players", range(1, MAX_PLAYERS + 1))
def test_the_table_has_its_number_of_players_and_their_encoding(num_players):
    env = YachtMultiplayerEnv(num_players, reward_mode="score")
    assert env.num_players == num_players and env.reward_mode == "score"
    assert env.tables.num_players == num_players and env.encoding.num_players == num_players


@pytest.mark.parametrize("num_players", [0, MAX_PLAYERS + 1])
def test_a_table_size_outside_one_to_five_is_refused(num_players):
    with pytest.raises(ValueError, match=f"num_players.*{num_players}"):
        YachtMultiplayerEnv(num_players)


def test_a_bad_reward_mode_is_refused():
    with pytest.raises(ValueError, match="reward_mode"):
        YachtMultiplayerEnv(2, reward_mode="points")


@pytest.mark.parametrize("num_players", [2, 3])
def test_given_faces_are_the_dice_each_seat_rolls(num_players):
    faces = table_faces(num_players, seed=num_players)
    env = YachtMultiplayerEnv(num_players)
    env.reset(seed=5, options={"faces": faces})
    for seat in range(num_players):
        hand, rolls_left, _ = (int(part[0]) for part in env.tables.position([0], [seat]))
        assert tuple(YACHT.dice.hands[hand]) == tuple(sorted(faces[seat, 0, 0])) and rolls_left == 2


def test_dice_not_given_are_drawn_from_the_seed():
    first, again, other = YachtMultiplayerEnv(3), YachtMultiplayerEnv(3), YachtMultiplayerEnv(3)
    first.reset(seed=11)
    again.reset(seed=11)
    other.reset(seed=12)
    hands = [[int(env.tables.position([0], [s])[0][0]) for s in range(3)] for env in (first, again, other)]
    assert hands[0] == hands[1] and hands[0] != hands[2]
    assert first._started


def test_faces_of_the_wrong_shape_are_refused_naming_the_shape_wanted():
    env = YachtMultiplayerEnv(2)
    with pytest.raises(ValueError) as error:
        env.reset(seed=0, options={"faces": table_faces(3)})
    assert str(error.value) == (
        "faces must be an integer array of shape (2, 12, 3, 5) (one dice stream per seat), got shape (3, 12, 3, 5)"
    )
    env.reset(seed=0, options={})  # options without faces: drawn


def test_an_action_is_judged_for_the_seat_that_plays_it():
    faces = table_faces(2)
    env = YachtMultiplayerEnv(2, illegal_action="raise")
    env.reset(seed=0, options={"faces": faces})
    assert env._why_illegal(32, 0) is None and env._why_illegal(5, 0) is None
    assert env._why_illegal(0, 1) == "action 0 re-rolls no dice, which is never allowed; keep all dice by scoring instead"
    env.step(32)  # seat 0 scores ones
    assert env._why_illegal(32, 0) == "action 32 scores 'ones', which is already filled"
    assert env._why_illegal(32, 1) is None  # seat 1's ones are still open


def test_the_text_view_names_the_seats():
    env = YachtMultiplayerEnv(3, render_mode="ansi")
    env.reset(seed=2)
    text = env.render()
    assert all(name in text for name in ("player_0", "player_1", "player_2"))


def test_the_forced_joker_is_judged_on_the_seat_s_own_dice():
    from yacht_env.rules import rule_set

    forced = rule_set("yahtzee_forced_joker")
    names = list(forced.category_names)
    faces = np.random.default_rng(1).integers(1, 7, (2, forced.num_turns, forced.rolls_per_turn, forced.num_dice))
    faces[0, 0, 0] = faces[0, 1, 0] = 3  # seat 0 rolls a Yahtzee of threes on its first two turns
    env = YachtMultiplayerEnv(2, rules=forced)
    env.reset(seed=0, options={"faces": faces})
    env.step(32 + names.index("yahtzee"))  # seat 0 fills its Yahtzee box
    env.step(32 + names.index("chance"))  # seat 1
    chance = 32 + names.index("chance")
    assert env._why_illegal(chance, 0) == (
        f"action {chance} scores 'chance', but the forced joker rule sends this Yahtzee to threes"
    )
    assert env._why_illegal(32 + names.index("threes"), 0) is None
