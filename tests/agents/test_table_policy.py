"""Table policies: which encoding a model's observation space is, and what a model trained at a table is asked."""

import gymnasium as gym
import numpy as np
import pytest

from agents.learned.model_files import ModelLoadError
from agents.learned.table_policy import TablePPOPolicy, is_solitaire_space, model_policy, table_encoding_of
from yacht_env.encoding import ENCODINGS, make_encoding
from yacht_env.rules import YACHT, rule_set
from yacht_env.table.encoding import make_table_encoding

OTHER_SPACE = gym.spaces.Box(0.0, 1.0, (3,), dtype=np.float32)


class FakeModel:
    """A model of a given observation space that records what it is asked and answers action 7 for each row."""

    def __init__(self, observation_space):
        self.observation_space = observation_space
        self.calls = []

    def predict(self, observations, action_masks, deterministic):
        self.calls.append((observations, action_masks, deterministic))
        return np.full(len(action_masks), 7), None


@pytest.mark.parametrize("name", list(ENCODINGS))
@pytest.mark.parametrize("num_players", [2, 3])
def test_a_table_space_is_told_apart_by_its_encoding_and_table_size(name, num_players):
    space = make_table_encoding(name, num_players, YACHT).space
    encoding = table_encoding_of(space, num_players, YACHT)
    assert encoding.name == name and encoding.num_players == num_players and encoding.space == space
    assert table_encoding_of(space, 5 - num_players, YACHT) is None
    assert not is_solitaire_space(space, YACHT)


@pytest.mark.parametrize("name", list(ENCODINGS))
def test_a_solitaire_space_is_no_table_s(name):
    space = make_encoding(name, YACHT).space
    assert is_solitaire_space(space, YACHT)
    assert table_encoding_of(space, 2, YACHT) is None


def test_a_space_of_no_encoding_is_neither():
    assert table_encoding_of(OTHER_SPACE, 2, YACHT) is None
    assert not is_solitaire_space(OTHER_SPACE, YACHT)


def test_a_table_model_plays_by_default_the_likeliest_action_at_a_table_of_two_in_its_own_encoding():
    model = FakeModel(make_table_encoding("onehot", 2, YACHT).space)
    policy = TablePPOPolicy(model)
    assert (policy.name, policy.deterministic, policy.rules, policy.model) == ("ppo", True, YACHT, model)
    assert policy.table_encoding.name == "onehot" and policy.table_encoding.num_players == 2
    assert policy.encoding.name == "onehot"
    masks = np.array([[0, 1, 1], [1, 0, 2]])
    actions = policy.act_batch("observations", masks)
    assert actions.tolist() == [7, 7]
    ((observations, passed, deterministic),) = model.calls
    assert observations == "observations" and deterministic is True
    np.testing.assert_array_equal(passed, masks != 0)


def test_a_table_model_samples_when_asked_to():
    model = FakeModel(make_table_encoding("flat", 3, YACHT).space)
    policy = TablePPOPolicy(model, "ppo:m", num_players=3, deterministic=False)
    policy.act_batch("observations", np.ones((1, 3)))
    assert policy.deterministic is False and model.calls[0][2] is False


def test_a_model_that_reads_no_table_of_the_size_is_refused_naming_it():
    model = FakeModel(make_table_encoding("flat", 2, YACHT).space)
    with pytest.raises(ModelLoadError) as error:
        TablePPOPolicy(model, "ppo:m", num_players=3)
    assert str(error.value) == f"model ppo:m's observation space {model.observation_space} is no table observation of 3 players"


class Solitaire:
    """Stands for a solitaire policy class: records how it was built."""

    def __init__(self, model, name, rules):
        self.model, self.name, self.rules = model, name, rules


def test_a_model_of_a_solitaire_space_gets_the_solitaire_policy_and_one_of_a_table_s_the_table_policy():
    solitaire = FakeModel(make_encoding("counts", YACHT).space)
    policy = model_policy(solitaire, "ppo:s", 3, solitaire=Solitaire)
    assert isinstance(policy, Solitaire) and (policy.model, policy.name, policy.rules) == (solitaire, "ppo:s", YACHT)
    at_table = FakeModel(make_table_encoding("counts", 3, YACHT).space)
    policy = model_policy(at_table, "ppo:t", 3, solitaire=Solitaire)
    assert isinstance(policy, TablePPOPolicy) and policy.name == "ppo:t" and policy.table_encoding.num_players == 3
    exercism = rule_set("yacht_exercism")
    assert model_policy(solitaire, "ppo:s", 2, rules="yacht_exercism", solitaire=Solitaire).rules == exercism
