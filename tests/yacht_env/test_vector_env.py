"""YachtVectorEnv: step-for-step equivalence with YachtEnv, the vector API, seeding and bad input."""

from __future__ import annotations

import copy

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import data_equivalence
from gymnasium.utils.passive_env_checker import check_action_space, check_observation_space, data_shares_objects
from gymnasium.vector import AutoresetMode, SyncVectorEnv
from gymnasium.vector.utils import batch_space, iterate

import yacht_env.vector_env as vector_env
from yacht_env import YACHT, GameOverError, IllegalActionError, RuleSet, YachtEnv
from yacht_env.encoding import ENCODINGS
from yacht_env.env import draw_game_dice
from yacht_env.vector_env import YachtVectorEnv, check_actions, sample_legal_actions

# A variant with other dice, fewer rolls and fewer rows, to show nothing assumes the default rules.
EIGHT_FACED = RuleSet("eight_faced", categories=YACHT.categories[:8], num_dice=4, num_faces=8, rolls_per_turn=2)

ENCODING_NAMES = sorted(ENCODINGS)


def mixed_actions(masks: np.ndarray, rng: np.random.Generator, illegal_rate: float) -> np.ndarray:
    """Mostly legal actions drawn from the masks; with probability ``illegal_rate`` any action at all."""
    actions = sample_legal_actions(masks, rng)
    wild = rng.random(len(actions)) < illegal_rate
    actions[wild] = rng.integers(0, masks.shape[1], size=int(wild.sum()))
    return actions


def rows(env: YachtVectorEnv, obs) -> list:
    """The batched observation split into single-env observations."""
    return list(iterate(env.observation_space, obs))


def assert_info_row(infos: dict, i: int, info: dict):
    """Sub-env ``i`` of batched ``infos`` holds exactly the single-env ``info``."""
    for key, value in info.items():
        assert infos[f"_{key}"][i], key
        assert infos[key][i] == value if key == "illegal_reason" else np.array_equal(infos[key][i], value), key
    for key in infos:
        if not key.startswith("_") and key not in ("final_obs", "final_info"):
            assert key in info or not infos[f"_{key}"][i], key


def snapshot(env: YachtVectorEnv):
    """Everything a step or reset could change, including the dice still to come."""
    return env.state, env.total, env.turn, env.sheets, env._faces.copy(), env._illegal_counts.copy()


def play_against_sync(venv: YachtVectorEnv, sync: SyncVectorEnv, steps: int, illegal_rate: float, seed: int = 0):
    """Play the same actions in both; every output must be equal. Returns how many games ended."""
    rng = np.random.default_rng(seed)
    obs, infos = venv.reset(seed=seed)
    assert data_equivalence((obs, infos), sync.reset(seed=seed), exact=True)
    ended = 0
    for _ in range(steps):
        actions = mixed_actions(infos["action_mask"], rng, illegal_rate)
        *results, infos = venv.step(actions)
        assert data_equivalence((*results, infos), sync.step(actions), exact=True)
        ended += int(np.sum(results[2] | results[3]))
    return ended


# -- equivalence with the single env -----------------------------------------------------------


@pytest.mark.parametrize("encoding", ENCODING_NAMES)
def test_every_sub_env_matches_a_single_env_step_for_step(encoding):
    num_envs, seed, steps = 6, 1234, 350
    kwargs = dict(observation_encoding=encoding, max_illegal_actions=3, illegal_action_penalty=2.5)
    venv = YachtVectorEnv(num_envs, **kwargs)
    singles = [YachtEnv(**kwargs) for _ in range(num_envs)]
    rng = np.random.default_rng(seed)

    obs, infos = venv.reset(seed=seed)
    for i, (env, row) in enumerate(zip(singles, rows(venv, obs))):
        single_obs, info = env.reset(seed=seed + i)
        assert data_equivalence(row, single_obs, exact=True)
        assert_info_row(infos, i, info)

    games_ended = truncations_seen = illegal_seen = 0
    for _ in range(steps):
        actions = mixed_actions(infos["action_mask"], rng, illegal_rate=0.08)
        obs, rewards, terminated, truncated, infos = venv.step(actions)
        for i, (env, row) in enumerate(zip(singles, rows(venv, obs))):
            single_obs, reward, term, trunc, info = env.step(int(actions[i]))
            assert rewards[i] == reward and terminated[i] == term and truncated[i] == trunc
            illegal_seen += info["illegal_action"]
            if term or trunc:
                games_ended += 1
                truncations_seen += trunc
                assert infos["_final_obs"][i] and infos["_final_info"][i]
                assert data_equivalence(infos["final_obs"][i], single_obs, exact=True)
                assert_info_row(infos["final_info"], i, info)
                single_obs, info = env.reset()
            else:
                assert "_final_obs" not in infos or not infos["_final_obs"][i]
                assert "_final_info" not in infos or not infos["_final_info"][i]
            assert data_equivalence(row, single_obs, exact=True)
            assert_info_row(infos, i, info)
            assert venv.sheets[i] == env.sheet and venv.total[i] == env.total and venv.turn[i] == env.turn
            assert tuple(int(x[i]) for x in venv.state) == env.state
            np.testing.assert_array_equal(venv.dice[i], env.dice)
        np.testing.assert_array_equal(venv.action_masks(), np.stack([env.action_masks() for env in singles]))

    # The run must have exercised what it claims to test.
    assert games_ended >= 3 * num_envs and truncations_seen >= 1 and illegal_seen >= 20


@pytest.mark.parametrize("encoding", ENCODING_NAMES)
@pytest.mark.parametrize("illegal_rate", [0.0, 0.1])
def test_outputs_equal_gymnasium_sync_vector_env(encoding, illegal_rate):
    """Whole outputs, infos structure included, equal SyncVectorEnv over YachtEnv in SAME_STEP mode."""
    num_envs, seed = (24, 300) if illegal_rate == 0 else (8, 250)
    kwargs = dict(observation_encoding=encoding, max_illegal_actions=2)
    venv = YachtVectorEnv(num_envs, **kwargs)
    sync = SyncVectorEnv([lambda: YachtEnv(**kwargs)] * num_envs, autoreset_mode=AutoresetMode.SAME_STEP)
    assert play_against_sync(venv, sync, steps=300, illegal_rate=illegal_rate, seed=seed) >= 2 * num_envs


def test_rule_variant_matches_sync_vector_env():
    kwargs = dict(rules=EIGHT_FACED, max_illegal_actions=2)
    venv = YachtVectorEnv(6, **kwargs)
    sync = SyncVectorEnv([lambda: YachtEnv(**kwargs)] * 6, autoreset_mode=AutoresetMode.SAME_STEP)
    assert venv.single_action_space == gym.spaces.Discrete(16 + 8)
    assert play_against_sync(venv, sync, steps=200, illegal_rate=0.1) >= 12


@pytest.mark.parametrize("rules", [YACHT, EIGHT_FACED], ids=lambda rules: rules.name)
def test_compiled_dice_draw_is_draw_game_dice(rules):
    exact, bit_generator_type, next_uint32 = vector_env._compiled_draw(rules)
    assert exact and bit_generator_type is np.random.PCG64
    generators = [gym.utils.seeding.np_random(seed)[0] for seed in range(40)]
    twins = [gym.utils.seeding.np_random(seed)[0] for seed in range(40)]
    addresses = np.array([g.bit_generator.ctypes.state_address for g in twins], dtype=np.uint64)
    faces = np.zeros((40, rules.num_turns, rules.rolls_per_turn, rules.num_dice), dtype=np.int8)
    for stride in (1, 2, 3):
        games = np.arange(0, 40, stride)  # some generators skip a game, as sub-envs still playing do
        vector_env._draw_games(next_uint32, addresses, games, faces, rules.num_faces)
        for i in games:
            np.testing.assert_array_equal(faces[i], draw_game_dice(generators[i], rules))
    assert all(g.bit_generator.state == t.bit_generator.state for g, t in zip(generators, twins))


def test_fallback_dice_draw_matches_sync_vector_env(monkeypatch):
    """Where the compiled draw cannot be trusted, each game's dice come from draw_game_dice."""
    monkeypatch.setattr(vector_env, "_compiled_draw", lambda rules: (False, None, None))
    venv = YachtVectorEnv(5, max_illegal_actions=2)
    sync = SyncVectorEnv([lambda: YachtEnv(max_illegal_actions=2)] * 5, autoreset_mode=AutoresetMode.SAME_STEP)
    assert play_against_sync(venv, sync, steps=150, illegal_rate=0.1, seed=9) >= 10
    assert not venv._state_addresses.any()


def test_partial_reset_with_reset_mask_matches_sync_vector_env():
    venv = YachtVectorEnv(5)
    sync = SyncVectorEnv([YachtEnv] * 5, autoreset_mode=AutoresetMode.SAME_STEP)
    rng = np.random.default_rng(3)
    assert data_equivalence(venv.reset(seed=11), sync.reset(seed=11), exact=True)
    for _ in range(7):
        actions = sample_legal_actions(venv.action_masks(), rng)
        assert data_equivalence(venv.step(actions), sync.step(actions), exact=True)
    mask = np.array([True, False, True, False, False])
    assert data_equivalence(
        venv.reset(seed=[None, None, 99, None, None], options={"reset_mask": mask}),
        sync.reset(seed=[None, None, 99, None, None], options={"reset_mask": mask.copy()}),
        exact=True,
    )
    for _ in range(40):
        actions = sample_legal_actions(venv.action_masks(), rng)
        assert data_equivalence(venv.step(actions), sync.step(actions), exact=True)
    with pytest.raises(ValueError, match="reset_mask"):
        venv.reset(options={"reset_mask": np.zeros(5, dtype=bool)})
    with pytest.raises(ValueError, match="reset_mask"):
        venv.reset(options={"reset_mask": np.ones(4, dtype=bool)})


def test_faces_option_plays_given_dice_like_the_single_env():
    rng = np.random.default_rng(4)
    table = rng.integers(1, 7, size=(12, 3, 5))
    venv = YachtVectorEnv(3)
    sync = SyncVectorEnv([YachtEnv] * 3, autoreset_mode=AutoresetMode.SAME_STEP)
    # One table for every sub-env, as SyncVectorEnv hands the same options to each; later games
    # come from the seeded generators.
    assert data_equivalence(
        venv.reset(seed=2, options={"faces": table}), sync.reset(seed=2, options={"faces": table}), exact=True
    )
    for _ in range(60):
        actions = sample_legal_actions(venv.action_masks(), rng)
        assert data_equivalence(venv.step(actions), sync.step(actions), exact=True)

    tables = rng.integers(1, 7, size=(3, 12, 3, 5)).astype(np.int8)
    obs, _ = venv.reset(options={"faces": tables})
    for i in range(3):
        np.testing.assert_array_equal(obs[i], YachtEnv().reset(options={"faces": tables[i]})[0])


def test_faces_option_without_a_seed_draws_later_games_from_fresh_generators():
    venv = YachtVectorEnv(2)
    venv.reset(options={"faces": np.full((12, 3, 5), 6)})
    assert venv.np_random == (None, None)  # as in YachtEnv, no generator is made until one is needed
    for _ in range(12):
        *_, infos = venv.step(32 + venv.turn - 1)  # fill the rows in order: 12 steps end the games
    assert "final_obs" in infos and all(g is not None for g in venv.np_random)


@pytest.mark.parametrize(
    "faces, match",
    [
        (np.full((12, 3, 4), 3), r"got shape \(12, 3, 4\)"),
        (np.full((2, 12, 3, 5), 3), r"got shape \(2, 12, 3, 5\)"),
        (np.full((12, 3, 5), 7), "face 7"),
        (np.full((3, 12, 3, 5), 0), "face 0"),
        (np.full((12, 3, 5), 3.0), "integer"),
    ],
)
def test_bad_faces_raise_and_change_nothing(faces, match):
    env = YachtVectorEnv(3)
    env.reset(seed=1)
    before, seeds = snapshot(env), env.np_random_seed
    with pytest.raises(ValueError, match=match):
        env.reset(seed=50, options={"faces": faces})
    assert data_equivalence(before, snapshot(env), exact=True)
    assert env.np_random_seed == seeds


# -- creation and the vector API ---------------------------------------------------------------


def test_make_vec_returns_the_native_vector_env_with_its_keywords():
    env = gym.make_vec(
        "Yacht-v0",
        num_envs=3,
        vectorization_mode="vector_entry_point",
        observation_encoding="counts",
        illegal_action="raise",
        illegal_action_penalty=2.5,
        max_illegal_actions=7,
        render_mode="ansi",
    )
    assert isinstance(env, YachtVectorEnv) and env.num_envs == 3
    assert env.encoding.name == "counts" and env.illegal_action == "raise"
    assert env.illegal_action_penalty == 2.5 and env.max_illegal_actions == 7 and env.render_mode == "ansi"
    assert env.spec.id == "Yacht-v0"
    assert env.metadata["autoreset_mode"] is AutoresetMode.SAME_STEP
    # With no mode given, make_vec prefers the registered vector entry point.
    assert isinstance(gym.make_vec("Yacht-v0", num_envs=2), YachtVectorEnv)


@pytest.mark.parametrize("encoding", ENCODING_NAMES)
def test_spaces_and_return_types(encoding):
    """The vector counterparts of gymnasium's env_checker checks (gymnasium 1.4 has none for vector envs)."""
    n = 4
    env = YachtVectorEnv(n, observation_encoding=encoding)
    single = YachtEnv(observation_encoding=encoding)
    check_action_space(env.single_action_space)
    check_observation_space(env.single_observation_space)
    assert env.single_action_space == single.action_space == gym.spaces.Discrete(44)
    assert env.single_observation_space == single.observation_space
    assert env.action_space == batch_space(env.single_action_space, n)
    assert env.observation_space == batch_space(env.single_observation_space, n)

    obs, infos = env.reset(seed=0)
    assert env.observation_space.contains(obs) and isinstance(infos, dict)
    assert all(env.single_observation_space.contains(row) for row in rows(env, obs))
    rng = np.random.default_rng(0)
    calls = [(obs, infos)]
    for _ in range(60):
        obs, rewards, terminated, truncated, infos = env.step(sample_legal_actions(infos["action_mask"], rng))
        assert env.observation_space.contains(obs)
        for array, dtype in ((rewards, np.float64), (terminated, np.bool_), (truncated, np.bool_)):
            assert isinstance(array, np.ndarray) and array.dtype == dtype and array.shape == (n,)
        assert infos["action_mask"].dtype == np.int8 and infos["action_mask"].shape == (n, 44)
        assert infos["total"].dtype == np.int64 and infos["turn"].dtype == np.int64
        assert infos["illegal_action"].dtype == np.bool_
        if "final_obs" in infos:
            ended = infos["_final_obs"]
            np.testing.assert_array_equal(ended, terminated | truncated)
            assert all(env.single_observation_space.contains(o) for o in infos["final_obs"][ended])
            assert all(o is None for o in infos["final_obs"][~ended])
        calls.append((obs, infos))
    # Everything handed out is fresh: keeping an earlier result is safe.
    for (obs_1, info_1), (obs_2, info_2) in zip(calls, calls[1:]):
        assert not data_shares_objects(obs_1, obs_2) and not data_shares_objects(info_1, info_2)
    masks = env.action_masks()
    assert masks.dtype == np.bool_ and masks.shape == (n, 44)
    np.testing.assert_array_equal(masks, infos["action_mask"].astype(bool))
    env.close()
    assert env.closed


def test_render_ansi_lists_each_sub_env_as_the_single_env_renders_it():
    env = YachtVectorEnv(3, render_mode="ansi")
    singles = [YachtEnv(render_mode="ansi") for _ in range(3)]
    env.reset(seed=5)
    for i, single in enumerate(singles):
        single.reset(seed=5 + i)
    rng = np.random.default_rng(1)
    for _ in range(20):
        actions = sample_legal_actions(env.action_masks(), rng)
        env.step(actions)
        for single, action in zip(singles, actions):
            if single.step(int(action))[2]:
                single.reset()
        texts = env.render()
        assert isinstance(texts, list) and texts == [single.render() for single in singles]


def test_render_without_mode_warns_and_returns_none():
    env = YachtVectorEnv(2)
    env.reset(seed=0)
    with pytest.warns(UserWarning, match="render_mode"):
        assert env.render() is None


def test_step_before_reset_raises():
    env = YachtVectorEnv(2)
    with pytest.raises(GameOverError, match="reset"):
        env.step(np.array([32, 32]))


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(num_envs=0), "num_envs"),
        (dict(num_envs=2.0), "num_envs"),
        (dict(num_envs=2, render_mode="human"), "render_mode"),
        (dict(num_envs=2, illegal_action="ignore"), "illegal_action"),
        (dict(num_envs=2, max_illegal_actions=0), "max_illegal_actions"),
        (dict(num_envs=2, observation_encoding="pixels"), "observation encoding"),
    ],
)
def test_bad_constructor_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        YachtVectorEnv(**kwargs)


# -- bad input and illegal actions -------------------------------------------------------------

N = 4


@pytest.mark.parametrize(
    "actions, match",
    [
        (np.full(N + 1, 32), r"shape \(4,\).*got shape \(5,\)"),
        (np.full((N, 1), 32), r"got shape \(4, 1\)"),
        (np.int64(32), r"got shape \(\)"),
        (32, r"got shape \(\)"),
        (np.full(N, 32.0), "got dtype float64"),
        (np.ones(N, dtype=bool), "got dtype bool"),
        ([None] * N, "got dtype object"),
        ("32", "got dtype <U2"),
        ([32, 33, [1, 2], 34], "integer array"),
        (np.array([32, 33, 44, 34]), r"actions\[2\] = 44 .*0\.\.43"),
        (np.array([-1, 33, 34, 35]), r"actions\[0\] = -1 .*0\.\.43"),
        (np.array([32, 33, 34, 2**64 - 1], dtype=np.uint64), r"actions\[3\] = 18446744073709551615"),
    ],
)
def test_bad_actions_raise_value_error_and_change_nothing(actions, match):
    env, twin = YachtVectorEnv(N), YachtVectorEnv(N)
    env.reset(seed=8)
    twin.reset(seed=8)
    before = snapshot(env)
    with pytest.raises(ValueError, match=match):
        env.step(actions)
    assert data_equivalence(before, snapshot(env), exact=True)
    good = np.array([1, 31, 32, 43])
    assert data_equivalence(env.step(good), twin.step(good), exact=True)


def test_a_batch_of_actions_of_the_wrong_form_is_told_the_whole_form_allowed():
    for actions in (np.full(N + 1, 32), np.full(N, 32.0), [True] * N, [32, 33, [1, 2], 34]):
        with pytest.raises(ValueError) as error:
            check_actions(actions, N, 44)
        assert str(error.value).startswith("actions must be an integer array of shape (4,) with values in 0..43, got ")


def test_check_actions_accepts_any_integer_array_of_the_right_shape():
    for dtype in (np.int8, np.uint8, np.int32, np.int64, np.uint64):
        out = check_actions(np.array([0, 43, 7], dtype=dtype), 3, 44)
        assert out.dtype == np.int64 and out.tolist() == [0, 43, 7]
    assert check_actions([1, 2, 3], 3, 44).tolist() == [1, 2, 3]


def test_raise_mode_names_the_sub_env_and_leaves_every_sub_env_unchanged():
    env = YachtVectorEnv(N, illegal_action="raise")
    twin = YachtVectorEnv(N, illegal_action="raise")
    env.reset(seed=21)
    twin.reset(seed=21)
    before = snapshot(env)
    with pytest.raises(IllegalActionError, match=r"sub-env 2: action 0 re-rolls no dice"):
        env.step(np.array([32, 33, 0, 34]))
    assert data_equivalence(before, snapshot(env), exact=True)

    for e in (env, twin):
        e.step(np.array([32, 32, 32, 32]))  # every sub-env fills "ones"
    before = snapshot(env)
    with pytest.raises(ValueError, match=r"sub-env 1: action 32 scores 'ones', which is already filled"):
        env.step(np.array([33, 32, 33, 33]))  # IllegalActionError is a ValueError
    assert data_equivalence(before, snapshot(env), exact=True)
    for _ in range(2):
        for e in (env, twin):
            e.step(np.array([31, 31, 31, 31]))  # use up the re-rolls
    with pytest.raises(IllegalActionError, match=r"sub-env 3: action 5 re-rolls dice, but no rolls are left"):
        env.step(np.array([33, 33, 33, 5]))
    good = np.array([33, 34, 35, 36])
    assert data_equivalence(env.step(good), twin.step(good), exact=True)


def test_penalize_mode_truncates_after_max_illegal_actions():
    env = YachtVectorEnv(3, max_illegal_actions=2, illegal_action_penalty=0.5)
    env.reset(seed=2)
    obs_before, rewards, terminated, truncated, infos = env.step(np.array([0, 32, 0]))
    np.testing.assert_array_equal(rewards[[0, 2]], [-0.5, -0.5])
    np.testing.assert_array_equal(infos["illegal_action"], [True, False, True])
    np.testing.assert_array_equal(infos["_illegal_reason"], [True, False, True])
    assert not truncated.any() and not terminated.any()
    obs, rewards, terminated, truncated, infos = env.step(np.array([0, 33, 33]))
    np.testing.assert_array_equal(truncated, [True, False, False])
    np.testing.assert_array_equal(infos["illegal_action"], [False, False, False])  # sub-env 0 restarted
    assert infos["final_info"]["illegal_action"][0] and "re-rolls no dice" in infos["final_info"]["illegal_reason"][0]
    np.testing.assert_array_equal(infos["final_obs"][0], obs_before[0])
    assert infos["turn"][0] == 1 and infos["total"][0] == 0


# -- seeding -----------------------------------------------------------------------------------


def test_int_seed_gives_sub_env_i_the_seed_plus_i():
    env = YachtVectorEnv(5, observation_encoding="dict")
    obs, _ = env.reset(seed=40)
    assert env.np_random_seed == (40, 41, 42, 43, 44)
    for i, row in enumerate(rows(env, obs)):
        assert data_equivalence(row, YachtEnv(observation_encoding="dict").reset(seed=40 + i)[0], exact=True)


def test_list_of_seeds_and_unseeded_resets_continue_each_generator():
    env = YachtVectorEnv(3)
    singles = [YachtEnv() for _ in range(3)]
    seeds = [17, None, 5]
    obs, _ = env.reset(seed=seeds)
    for i in (0, 2):
        np.testing.assert_array_equal(obs[i], singles[i].reset(seed=seeds[i])[0])
    assert env.np_random_seed[0] == 17 and env.np_random_seed[2] == 5
    obs, _ = env.reset()  # no seed: every generator carries on
    for i in (0, 2):
        np.testing.assert_array_equal(obs[i], singles[i].reset()[0])
    before, seeds_before = snapshot(env), env.np_random_seed
    with pytest.raises(ValueError, match="3 seeds"):
        env.reset(seed=[1, 2])
    with pytest.raises(gym.error.Error, match="-1"):
        env.reset(seed=[1, -1, 2])
    assert data_equivalence(before, snapshot(env), exact=True) and env.np_random_seed == seeds_before


def test_same_seed_same_games_and_different_seeds_different_games():
    def play(seed):
        env = YachtVectorEnv(8)
        rng = np.random.default_rng(0)
        obs, infos = env.reset(seed=seed)
        trajectory = [obs]
        for _ in range(80):
            obs, rewards, terminated, truncated, infos = env.step(sample_legal_actions(infos["action_mask"], rng))
            trajectory += [obs, rewards, terminated, truncated, infos]
        return trajectory

    assert data_equivalence(play(3), play(3), exact=True)
    assert not data_equivalence(play(3)[0], play(4)[0], exact=True)


def test_a_deep_copy_plays_on_independently_with_its_own_generators():
    env = YachtVectorEnv(6)
    rng = np.random.default_rng(0)
    obs, infos = env.reset(seed=12)
    for _ in range(20):
        obs, *_, infos = env.step(sample_legal_actions(infos["action_mask"], rng))
    twin = copy.deepcopy(env)
    assert all(a is not b for a, b in zip(env.np_random, twin.np_random))
    assert not np.intersect1d(env._state_addresses, twin._state_addresses).any()
    for _ in range(100):  # enough for every game to end and draw new dice at least twice
        actions = sample_legal_actions(infos["action_mask"], rng)
        original = env.step(actions)
        assert data_equivalence(twin.step(actions), original, exact=True)
        infos = original[-1]


def test_unseeded_reset_draws_fresh_games():
    a, b = YachtVectorEnv(16), YachtVectorEnv(16)
    assert not np.array_equal(a.reset()[0], b.reset()[0])


# -- sample_legal_actions ----------------------------------------------------------------------


def test_sample_legal_actions_is_legal_reproducible_and_uniform():
    layout = YachtEnv().layout
    masks = np.stack([layout.legal_masks[1, 0b101], layout.legal_masks[0, 0b100000000001], np.eye(44, dtype=np.int8)[7]])
    first = sample_legal_actions(masks, np.random.default_rng(0))
    assert first.dtype == np.int64 and np.array_equal(first, sample_legal_actions(masks, np.random.default_rng(0)))
    rng = np.random.default_rng(1)
    many = np.stack([sample_legal_actions(masks.astype(bool), rng) for _ in range(6000)])
    for row, mask in enumerate(masks):
        legal = np.flatnonzero(mask)
        assert set(np.unique(many[:, row])) == set(legal)
        counts = np.bincount(many[:, row], minlength=44)[legal]
        expected = len(many) / len(legal)
        assert np.all(np.abs(counts - expected) < 5 * np.sqrt(expected) + 1)


def test_sample_legal_actions_rejects_rows_without_legal_actions():
    masks = np.ones((3, 44), dtype=np.int8)
    masks[1] = 0
    with pytest.raises(ValueError, match="row 1"):
        sample_legal_actions(masks, np.random.default_rng(0))
    with pytest.raises(ValueError, match="2-D"):
        sample_legal_actions(np.ones(44, dtype=np.int8), np.random.default_rng(0))
