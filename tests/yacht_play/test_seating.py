"""One seed, one deal: seat s gets the same dice in every multi-player game of the project."""

import gymnasium as gym
import numpy as np
import pytest

from agents.evaluation.tournament import deal_dice
from agents.registry import make_opponents
from yacht_env import YACHT, yacht_v0
from yacht_play.match import Match, Player


@pytest.mark.parametrize("num_players", [2, 3, 5])
@pytest.mark.parametrize("seed", [0, 12345])
def test_every_table_deals_seat_s_the_same_dice(num_players, seed):
    pettingzoo = yacht_v0.env(num_players=num_players)
    pettingzoo.reset(seed=seed)
    dealt = pettingzoo.unwrapped.tables.faces[0]

    table_env = gym.make("YachtTable-v0", opponents=make_opponents(["random"] * (num_players - 1)))
    table_env.reset(seed=seed)
    np.testing.assert_array_equal(table_env.unwrapped.tables.faces[0], dealt)

    np.testing.assert_array_equal(deal_dice(seed, 1, num_players, YACHT)[0], dealt)

    players = [Player("ana")] + [Player(f"greedy{s}", "agent", "greedy") for s in range(1, num_players)]
    match = Match.new(players, seed=seed, mode="table")
    np.testing.assert_array_equal(np.stack([seat.faces for seat in match.seats]), dealt)

    solitaire = gym.make("Yacht-v0")
    solitaire.reset(seed=seed)
    first_roll = sorted(dealt[0, 0, 0].tolist())
    assert solitaire.unwrapped.dice.tolist() == first_roll  # seat 0 plays Yacht-v0's game of the seed


@pytest.mark.parametrize("mode, agents", [("table", ["target:150", "win"]), ("duplicate", ["target:150"])])
def test_agents_that_read_the_table_play_whole_matches(mode, agents):
    players = [Player(f"agent{s}", "agent", name) for s, name in enumerate(agents)]
    if mode == "duplicate":
        players = [Player("greedy", "agent", "greedy"), *players]
    match = Match.new(players, seed=3, mode=mode)
    while not match.finished:
        match.play_agent()
    assert all(seat.finished for seat in match.seats)
