"""The ``Yacht-v0`` env: API, masks, bad input, seeding, and a real MaskablePPO smoke run."""

import copy
import io
import re
from contextlib import redirect_stdout

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from hypothesis import example, given, settings
from hypothesis import strategies as st

import yacht_env
from yacht_env import CATEGORIES, GameOverError, IllegalActionError, YachtEnv, score
from yacht_env.encoding import ENCODINGS, make_encoding

SCORE = 32  # first scoring action


def worked_example_faces():
    """RULES.md's worked example: 1-2-2-4-6, re-roll three to 4-4-6, re-roll three to 1-4-4."""
    faces = np.ones((12, 3, 5), dtype=np.int8)
    faces[0, 0] = [1, 2, 2, 4, 6]
    faces[0, 1, :3] = [4, 4, 6]
    faces[0, 2, :3] = [1, 4, 4]
    return faces


def play_random(env, rng, steps=None, games=None):
    """Random legal play; yields (info-before, action, step result)."""
    obs, info = env.reset(seed=int(rng.integers(2**31)))
    done_games = 0
    taken = 0
    while (steps is None or taken < steps) and (games is None or done_games < games):
        action = int(rng.choice(np.flatnonzero(info["action_mask"])))
        result = env.step(action)
        yield info, action, result
        taken += 1
        obs, reward, terminated, truncated, info = result
        if terminated or truncated:
            done_games += 1
            obs, info = env.reset()


def test_worked_example_scores_17():
    env = YachtEnv()
    obs, info = env.reset(options={"faces": worked_example_faces()})
    assert obs[:5].tolist() == [1, 2, 2, 4, 6]
    # Keep the 2s (positions 1, 2): re-roll positions 0, 3, 4.
    obs, reward, *_ = env.step(0b11001)
    assert obs[:5].tolist() == [2, 2, 4, 4, 6] and reward == 0 and obs[5] == 1
    # Keep the 4s (positions 2, 3): re-roll positions 0, 1, 4.
    obs, reward, *_ = env.step(0b10011)
    assert obs[:5].tolist() == [1, 4, 4, 4, 4] and obs[5] == 0
    obs, reward, terminated, truncated, info = env.step(SCORE + CATEGORIES.index("four_of_a_kind"))
    assert reward == 17 and info["total"] == 17 and info["turn"] == 2 and not terminated


@pytest.mark.parametrize("env_id", ["Yacht-v0", "yacht_env:Yacht-v0"])
def test_gymnasium_make(env_id):
    env = gym.make(env_id)
    obs, info = env.reset(seed=3)
    assert env.observation_space.contains(obs)
    assert env.action_space == gym.spaces.Discrete(44)
    assert isinstance(env.unwrapped, YachtEnv)


@pytest.mark.parametrize("encoding", sorted(ENCODINGS))
@pytest.mark.filterwarnings("error")
def test_check_env_passes(encoding):
    check_env(YachtEnv(observation_encoding=encoding), skip_render_check=True)
    check_env(gym.make("Yacht-v0", observation_encoding=encoding, render_mode="ansi").unwrapped)


def test_observation_layout_and_info():
    env = YachtEnv()
    obs, info = env.reset(seed=11)
    assert obs.dtype == np.float32 and obs.shape == (18,)
    assert list(obs[:5]) == sorted(obs[:5])
    assert obs[5] == 2 and obs[6:].tolist() == [1.0] * 12
    assert info["action_mask"].dtype == np.int8 and info["action_mask"].shape == (44,)
    assert info["total"] == 0 and info["turn"] == 1 and info["illegal_action"] is False
    np.testing.assert_array_equal(env.action_masks(), info["action_mask"].astype(bool))
    assert env.action_masks().dtype == bool
    for rolls_left in (1, 0):
        obs, reward, *_, info = env.step(31)
        assert obs[5] == rolls_left and reward == 0.0
        assert list(obs[:5]) == sorted(obs[:5])
    assert info["action_mask"][:32].sum() == 0 and info["action_mask"][32:].sum() == 12


def test_mask_matches_rules_from_first_principles():
    rng = np.random.default_rng(0)
    env = YachtEnv()
    for info, action, (obs, *_, next_info) in play_random(env, rng, steps=3000):
        mask = next_info["action_mask"]
        rolls_left = int(obs[5])
        open_flags = obs[6:]
        expected = np.zeros(44, dtype=np.int8)
        expected[1:32] = rolls_left > 0
        expected[32:] = open_flags
        np.testing.assert_array_equal(mask, expected)


@settings(max_examples=25)
@given(seed=st.integers(0, 2**31 - 1), steps=st.integers(0, 40))
def test_mask_is_exactly_the_set_of_legal_actions(seed, steps):
    """Every action the mask allows is accepted; every action it forbids raises in raise mode."""
    env = YachtEnv(illegal_action="raise")
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed)
    for _ in range(steps):
        obs, reward, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        if terminated:
            obs, info = env.reset()
    for action in range(44):
        probe = copy.deepcopy(env)
        if info["action_mask"][action]:
            probe.step(action)
        else:
            with pytest.raises(IllegalActionError):
                probe.step(action)
            assert probe.state == env.state


def test_100k_random_masked_steps_play_whole_games():
    env = YachtEnv()
    rng = np.random.default_rng(1)
    scoring_steps = episode_reward = games = 0
    for info, action, (obs, reward, terminated, truncated, next_info) in play_random(env, rng, steps=100_000):
        assert not next_info["illegal_action"] and not truncated
        episode_reward += reward
        if action >= SCORE:
            scoring_steps += 1
            assert next_info["turn"] == min(scoring_steps + 1, 12)
        if terminated:
            assert scoring_steps == 12
            assert next_info["total"] == episode_reward == sum(env.sheet)
            assert all(points is not None for points in env.sheet)
            scoring_steps = episode_reward = 0
            games += 1
    assert games > 3000


def test_rewards_are_the_rule_book_scores():
    env = YachtEnv()
    rng = np.random.default_rng(5)
    obs, info = env.reset(seed=5)
    for _ in range(2000):
        action = int(rng.choice(np.flatnonzero(info["action_mask"])))
        dice = obs[:5].astype(int).tolist()
        obs, reward, terminated, truncated, info = env.step(action)
        assert reward == (score(dice, action - SCORE) if action >= SCORE else 0)
        if terminated:
            obs, info = env.reset()


def test_same_seed_same_game_and_other_seeds_differ():
    def trajectory(seed):
        env = YachtEnv()
        obs, info = env.reset(seed=seed)
        rng = np.random.default_rng(99)
        out = [obs.tolist()]
        for _ in range(200):
            obs, reward, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
            out.append((obs.tolist(), reward))
            if terminated:
                obs, info = env.reset()
        return out

    assert trajectory(7) == trajectory(7)
    assert trajectory(7) != trajectory(8)


def test_dice_stream_does_not_depend_on_actions():
    """The same seed gives the same first roll of every turn, whatever the agent re-rolls."""
    first_rolls = []
    for reroll in (False, True):
        env = YachtEnv()
        obs, info = env.reset(seed=21)
        rolls = []
        for turn in range(12):
            rolls.append(obs[:5].tolist())
            if reroll:
                obs, *_, info = env.step(31)
            category = int(np.flatnonzero(info["action_mask"][SCORE:])[0])
            obs, reward, terminated, truncated, info = env.step(SCORE + category)
        first_rolls.append(rolls)
    assert first_rolls[0] == first_rolls[1]


@pytest.mark.parametrize("action", [44, -1, 2.5, None, "3", np.array([1, 2]), np.array([3]), True, np.float32(3)])
def test_action_outside_the_space_raises_and_changes_nothing(action):
    env = YachtEnv()
    env.reset(seed=4)
    before = (env.state, env.sheet, env.total)
    with pytest.raises(ValueError, match=r"action .* not in the action space.*0\.\.43"):
        env.step(action)
    assert (env.state, env.sheet, env.total) == before


@pytest.mark.parametrize("action", [np.int64(31), np.array(31), np.int8(31), 31])
def test_integer_like_actions_are_accepted(action):
    env = YachtEnv()
    env.reset(seed=4)
    obs, *_ = env.step(action)
    assert obs[5] == 1


def _exhaust_rolls(env):
    env.step(31)
    env.step(31)


@pytest.mark.parametrize(
    "setup, action, reason",
    [
        (lambda env: None, 0, "re-rolls no dice"),
        (_exhaust_rolls, 5, "no rolls are left"),
        (lambda env: env.step(SCORE + 3), SCORE + 3, "'fours', which is already filled"),
    ],
)
def test_illegal_action_is_penalized_and_changes_nothing(setup, action, reason):
    env = YachtEnv(illegal_action_penalty=2.5)
    env.reset(seed=9)
    setup(env)
    before = (env.state, env.sheet, env.total)
    obs, reward, terminated, truncated, info = env.step(action)
    assert reward == -2.5 and info["illegal_action"] is True and reason in info["illegal_reason"]
    assert not terminated and not truncated
    assert (env.state, env.sheet, env.total) == before

    strict = YachtEnv(illegal_action="raise")
    strict.reset(seed=9)
    setup(strict)
    with pytest.raises(IllegalActionError, match=reason) as error:
        strict.step(action)
    assert isinstance(error.value, ValueError)
    assert (strict.state, strict.sheet, strict.total) == before


def test_only_illegal_actions_truncate_the_episode():
    env = YachtEnv(max_illegal_actions=7)
    env.reset(seed=0)
    for i in range(1, 8):
        obs, reward, terminated, truncated, info = env.step(0)
        assert truncated == (i == 7) and not terminated
    with pytest.raises(GameOverError):
        env.step(31)


def test_step_after_the_game_ends_raises():
    env = YachtEnv()
    obs, info = env.reset(seed=2)
    for category in range(12):
        obs, reward, terminated, truncated, info = env.step(SCORE + category)
    assert terminated and info["turn"] == 12
    assert obs[5] == 0 and not obs[6:].any() and not info["action_mask"].any()
    with pytest.raises(GameOverError, match="reset"):
        env.step(SCORE)
    with pytest.raises(GameOverError):
        YachtEnv().step(31)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"observation_encoding": "pixels"}, "'pixels'"),
        ({"illegal_action": "ignore"}, "'ignore'"),
        ({"render_mode": "rgb"}, "'rgb'"),
        ({"max_illegal_actions": 0}, "0"),
    ],
)
def test_bad_constructor_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        YachtEnv(**kwargs)


def test_bad_faces_option_is_rejected_before_anything_changes():
    env = YachtEnv()
    env.reset(seed=1)
    before = env.state
    with pytest.raises(ValueError, match="shape"):
        env.reset(options={"faces": np.ones((12, 3, 4), dtype=int)})
    bad = worked_example_faces()
    bad[3, 1, 2] = 7
    with pytest.raises(ValueError, match="face 7"):
        env.reset(options={"faces": bad})
    assert env.state == before


def test_render_modes_show_dice_rolls_and_the_whole_sheet():
    env = YachtEnv(render_mode="ansi")
    env.reset(options={"faces": worked_example_faces()})
    env.step(SCORE + CATEGORIES.index("twos"))
    text = env.render()
    assert "Turn 2/12" in text and "rolls left 2" in text and "1:[1]" in text
    for category in yacht_env.YACHT.categories:
        assert category.title in text
    twos_row = text.splitlines()[4]
    assert twos_row.split() == ["2", "Twos", "4"]  # written score, nothing "now"

    human = YachtEnv(render_mode="human")
    out = io.StringIO()
    with redirect_stdout(out):
        human.reset(seed=0)
        human.step(31)
    assert out.getvalue().count("Turn 1/12") == 2


@pytest.mark.parametrize("name", sorted(ENCODINGS))
@settings(max_examples=60)
@given(hand=st.integers(0, 251), rolls_left=st.integers(0, 2), open_bits=st.integers(1, 4095))
def test_encodings_round_trip(name, hand, rolls_left, open_bits):
    encoding = make_encoding(name, yacht_env.YACHT)
    obs = encoding.encode(hand, rolls_left, open_bits)
    assert encoding.space.contains(obs)
    assert encoding.decode(obs) == (hand, rolls_left, open_bits)


@pytest.mark.parametrize("name", sorted(ENCODINGS))
@given(flags=st.lists(st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0]), min_size=12, max_size=12))
@example(flags=[0.5] * 12)
def test_an_open_flag_of_one_half_reads_as_closed(name, flags):
    """Flags decode to the nearer of closed (0) and open (1); halfway is closed, so no filled row is offered."""
    encoding = make_encoding(name, yacht_env.YACHT)
    obs = encoding.encode(7, 1, yacht_env.YACHT.all_open)
    if name == "dict":
        obs["open_categories"] = np.array(flags)
    else:
        start = encoding.hand_width + encoding.rolls_width
        obs[start : start + 12] = flags
    open_rows = sum(1 << c for c, flag in enumerate(flags) if flag in (0.75, 1.0))
    assert encoding.decode(obs) == (7, 1, open_rows)


@settings(max_examples=60)
@given(counts=st.lists(st.integers(0, 5), min_size=6, max_size=6))
@example(counts=[0, 0, 0, 0, 0, 0])  # no dice at all
@example(counts=[1, 1, 1, 1, 1, 1])  # six dice
@example(counts=[0, 2, 0, 3, 0, 0])  # a full house: a hand
def test_counts_decode_to_their_hand_and_counts_that_are_no_hand_are_refused(counts):
    """Every point of the counts space decodes to its hand, or is refused, naming it, when it is not five dice."""
    encoding = make_encoding("counts", yacht_env.YACHT)
    obs = encoding.encode(0, 2, 5)
    obs[:6] = counts
    assert encoding.space.contains(obs)
    dice = tuple(face for face, n in enumerate(counts, start=1) for _ in range(n))
    if len(dice) == 5:
        assert encoding.decode(obs) == (yacht_env.YACHT.dice.hand_index[dice], 2, 5)
    else:
        with pytest.raises(ValueError, match=re.escape(f"face counts {list(counts)} are not a hand of 5 dice")):
            encoding.decode(obs)


@pytest.mark.parametrize("name", ["onehot", "features"])
def test_onehot_and_features_spaces_are_the_unit_box(name):
    """One-hot dice and rolls, 0/1 flags, counts / 5 and scores / 50 all lie in [0, 1], and the space says so."""
    space = make_encoding(name, yacht_env.YACHT).space
    assert space.low.tolist() == [0.0] * space.shape[0]
    assert space.high.tolist() == [1.0] * space.shape[0]


def test_dict_encoding_works_with_multi_input_policy():
    from sb3_contrib import MaskablePPO

    env = gym.make("Yacht-v0", observation_encoding="dict")
    model = MaskablePPO("MultiInputPolicy", env, n_steps=64, batch_size=32, n_epochs=1, seed=0, device="cpu")
    model.learn(128)


def test_maskable_ppo_smoke_run_on_registered_env():
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.evaluation import evaluate_policy
    from stable_baselines3.common.monitor import Monitor

    env = gym.make("Yacht-v0")
    model = MaskablePPO("MlpPolicy", env, n_steps=128, batch_size=64, n_epochs=2, seed=0, device="cpu")
    model.learn(total_timesteps=384)
    assert model.num_timesteps >= 384
    rewards, lengths = evaluate_policy(model, Monitor(env), n_eval_episodes=2, return_episode_rewards=True)
    assert all(length >= 12 for length in lengths)
