"""One seat-seeding convention: the policy in seat s of a table seeded with S is seeded with S + s."""

import numpy as np

from agents.evaluation.tournament import play_table
from yacht_env.encoding import make_encoding
from yacht_env.rules import YACHT
from yacht_env.seeding import seat_seed
from yacht_env.table.env import YachtTableEnv


class SeedRecorder:
    """A policy that scores the first open row and remembers every seed it is reset with."""

    name = "recorder"

    def __init__(self):
        self.rules = YACHT
        self.encoding = make_encoding("flat", YACHT)
        self.seeds = []

    def reset(self, seed=None):
        self.seeds.append(seed)

    def act_batch(self, observations, action_masks):
        return np.argmax(np.asarray(action_masks)[:, 32:], axis=1) + 32


def test_seat_seed_is_the_table_seed_plus_the_seat():
    assert [seat_seed(40, seat) for seat in range(5)] == [40, 41, 42, 43, 44]


def test_the_table_env_seeds_each_opponent_by_its_seat():
    before, after = SeedRecorder(), SeedRecorder()
    env = YachtTableEnv(opponents=[before, after], seat=1)
    env.reset(seed=10)
    assert (before.seeds, after.seeds) == ([10], [12])
    env.reset()  # an unseeded reset leaves the opponents' streams alone
    assert (before.seeds, after.seeds) == ([10], [12])


def test_tournaments_seed_policy_i_like_seat_i():
    policies = [SeedRecorder(), SeedRecorder(), SeedRecorder()]
    play_table(policies, games=3, seed=10)
    assert [policy.seeds for policy in policies] == [[10], [11], [12]]
