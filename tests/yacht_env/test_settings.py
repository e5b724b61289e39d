"""What every Yacht env shares (yacht_env.settings): the constructor arguments and their defaults, the refusals of
unknown ones and of render modes, and rendering by mode, on the real envs."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from yacht_env.env import YachtEnv
from yacht_env.rules import YACHT, rule_set
from yacht_env.settings import GameArguments, GameOverError, GameSettings, _either
from yacht_env.table.env import YachtTableEnv
from yacht_env.table.pettingzoo_env import YachtMultiplayerEnv
from yacht_env.vector_env import YachtVectorEnv

ENVS = [YachtEnv, YachtTableEnv, YachtMultiplayerEnv]
ARGUMENTS = "render_mode, rules, observation_encoding, illegal_action, illegal_action_penalty, max_illegal_actions"


def test_the_shared_arguments_are_those_the_envs_document():
    assert list(GameArguments.__annotations__) == ARGUMENTS.split(", ")[1:]
    assert all(issubclass(env, GameSettings) for env in [*ENVS, YachtVectorEnv])


def test_the_defaults_are_yacht_a_flat_observation_and_a_penalty_of_one_for_at_most_100_illegal_actions():
    env = YachtEnv()
    assert env.rules == YACHT and env.render_mode is None
    assert env.encoding.name == "flat" and env.layout.num_actions == 44
    assert (env.illegal_action, env.illegal_action_penalty, env.max_illegal_actions) == ("penalize", 1.0, 100)


@pytest.mark.parametrize("env_class", ENVS)
def test_an_unknown_argument_is_refused_naming_the_env_and_every_argument_it_takes(env_class):
    with pytest.raises(TypeError) as error:
        env_class(rule="yahtzee")
    assert str(error.value) == (
        f"{env_class.__name__}() got an unexpected keyword argument 'rule'; its arguments are {ARGUMENTS} (and its own)"
    )


def test_of_several_unknown_arguments_the_first_is_named():
    with pytest.raises(TypeError, match="unexpected keyword argument 'rule';"):
        YachtEnv(rule="yahtzee", encoding="flat")


@pytest.mark.parametrize("env_class", ENVS)
def test_a_render_mode_the_env_does_not_list_is_refused_naming_those_it_does(env_class):
    modes = env_class.metadata["render_modes"]
    with pytest.raises(ValueError) as error:
        env_class(render_mode="rgb")
    allowed = ", ".join(repr(mode) for mode in [None, *modes])
    assert str(error.value) == f"render_mode 'rgb' is not supported; expected one of {allowed}"
    for mode in [None, *modes]:
        assert env_class(render_mode=mode).render_mode == mode


def test_the_given_arguments_are_taken():
    env = YachtEnv(rules="yatzy", observation_encoding="dict", illegal_action="raise", max_illegal_actions=7)
    assert env.rules == rule_set("yatzy") and env.encoding.name == "dict" and env.layout.num_actions == 32 + 15
    assert env.illegal_action == "raise" and env.max_illegal_actions == 7
    env = YachtEnv(illegal_action_penalty=2.5)
    assert env.illegal_action_penalty == 2.5


def test_either_lists_names_as_a_sentence():
    assert _either(["ansi"]) == "'ansi'"
    assert _either(["ansi", "human"]) == "'ansi' or 'human'"
    assert _either(["ansi", "human", "rgb_array"]) == "'ansi', 'human' or 'rgb_array'"


@pytest.mark.parametrize("env_class", ENVS)
def test_rendering_without_a_mode_warns_with_the_env_s_modes_and_draws_nothing(env_class):
    env = env_class()
    env.reset(seed=1)
    with pytest.warns(UserWarning) as warned:
        assert env.render() is None
    modes = _either(env_class.metadata["render_modes"])
    # gymnasium's logger wraps the text in colour codes: WARN: ... in yellow
    assert f"WARN: render() called without a render_mode; pass render_mode={modes} to the env\x1b" in str(warned[0].message)


@pytest.mark.parametrize("env_class", ENVS)
def test_rendering_before_the_first_reset_asks_for_one(env_class):
    with pytest.raises(GameOverError, match=r"^render\(\) needs a game: call reset\(\) first$"):
        env_class(render_mode="ansi").render()
    assert issubclass(GameOverError, RuntimeError)


def test_ansi_returns_the_text_human_prints_it_at_each_reset_and_step_and_rgb_array_draws_it(capsys):
    ansi = YachtEnv(render_mode="ansi")
    ansi.reset(seed=3)
    text = ansi.render()
    assert text.startswith("Turn 1/12   rolls left 2   total 0\nDice ") and capsys.readouterr().out == ""
    human = YachtEnv(render_mode="human")
    human.reset(seed=3)
    assert capsys.readouterr().out == text + "\n\n"  # the same game, printed once by reset
    assert human.render() is None and capsys.readouterr().out == text + "\n\n"
    human.step(32)  # score ones
    printed = capsys.readouterr().out
    assert printed.startswith("Turn 2/12") and printed.count("Turn ") == 1
    frame = YachtEnv(render_mode="rgb_array")
    frame.reset(seed=3)
    picture = frame.render()
    assert picture.dtype == np.uint8 and picture.ndim == 3 and picture.shape[2] == 3 and capsys.readouterr().out == ""


def test_gymnasium_make_passes_the_shared_arguments_through():
    env = gym.make("Yacht-v0", rules="yahtzee", illegal_action="raise")
    assert env.unwrapped.rules == rule_set("yahtzee") and env.unwrapped.illegal_action == "raise"
