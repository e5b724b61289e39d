"""Multi-player Yacht: the PettingZoo env, ``YachtTable-v0``, table policies and tournaments."""

import re

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.utils import seeding
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test, seed_test

import yacht_env
from agents.registry import make_opponents, make_policy
from yacht_env import GameOverError, IllegalActionError, YachtEnv
from yacht_env.actions import ActionLayout
from yacht_env.env import draw_game_dice
from yacht_env.game import MAX_PLAYERS
from yacht_env.rules import RULE_SETS, rule_set
from yacht_env.table import pettingzoo_env as multiplayer
from yacht_env.table.env import RandomOpponent, YachtTableEnv
from yacht_env.table.outcome import draw_table_dice, win_rewards, win_shares

# Every warning fails these tests but two: PettingZoo's api_test gives them for any env whose
# observations are {"observation", "action_mask"} Dicts (the convention of its own classic games,
# which it exempts by name), whatever the env does.
PETTINGZOO_DICT_WARNINGS = [
    pytest.mark.filterwarnings("error"),
    pytest.mark.filterwarnings("ignore:Observation space for each agent probably should be"),
    pytest.mark.filterwarnings("ignore:Observation is not a NumPy array"),
]
pytestmark = PETTINGZOO_DICT_WARNINGS

SCORE = 32  # first scoring action
FLAT = 18  # width of the flat solitaire observation: the own part of a flat table observation


def play_pettingzoo(env, choose, seed=None, options=None):
    """Play a whole game; ``choose(agent, observation)`` picks each action. Returns the acting agents in order."""
    env.reset(seed=seed, options=options)
    order = []
    for agent in env.agent_iter():
        observation, reward, termination, truncation, info = env.last()
        if termination or truncation:
            env.step(None)
            continue
        order.append(agent)
        env.step(choose(agent, observation))
    return order


def random_chooser(seed):
    rng = np.random.default_rng(seed)
    return lambda agent, observation: int(rng.choice(np.flatnonzero(observation["action_mask"])))


def turns_of(order):
    """Agents' whole turns, in play order: consecutive decisions of one agent end with its score."""
    turns = []
    for agent in order:
        if not turns or turns[-1][0] != agent or turns[-1][1]:
            turns.append([agent, False])
    return [agent for agent, _ in turns]


# -- the PettingZoo env -------------------------------------------------------------------------


@pytest.mark.parametrize("num_players", [1, 2, 3, 4, 5])
def test_pettingzoo_api_test(num_players):
    api_test(multiplayer.env(num_players=num_players), num_cycles=1000)


@pytest.mark.parametrize("num_players", [1, 2, 3, 4, 5])
def test_pettingzoo_seed_test(num_players):
    seed_test(lambda: multiplayer.env(num_players=num_players), num_cycles=500)


@pytest.mark.parametrize("encoding", ["onehot", "features", "dict"])
def test_pettingzoo_api_test_other_encodings(encoding):
    api_test(multiplayer.env(num_players=3, observation_encoding=encoding, reward_mode="score"), num_cycles=1000)


@pytest.mark.parametrize("num_players", [1, 2, 5])
def test_observation_layout(num_players):
    env = multiplayer.raw_env(num_players=num_players)
    env.reset(seed=5)
    assert env.observation_space("player_0")["observation"].shape == (FLAT + 1 + 13 * (num_players - 1),)
    solitaire = YachtEnv()
    first_obs, _ = solitaire.reset(seed=5)
    observation = env.observe("player_0")
    # player_0's dice for a seed are Yacht-v0's for that seed; every row open, nobody has points.
    np.testing.assert_array_equal(observation["observation"][:FLAT], first_obs)
    assert observation["observation"][FLAT] == 0
    others = observation["observation"][FLAT + 1 :].reshape(num_players - 1, 13)
    assert (others[:, 0] == 0).all() and (others[:, 1:] == 1).all()
    assert observation["action_mask"].dtype == np.int8 and observation["action_mask"].sum() == 31 + 12
    for agent in env.possible_agents[1:]:
        assert env.observe(agent)["action_mask"].sum() == 0  # only the agent to act has legal actions


def test_the_pettingzoo_env_seats_two_players_unless_told_and_masks_each_action_with_0_or_1():
    env = multiplayer.raw_env()
    assert env.possible_agents == ["player_0", "player_1"]
    mask_space = spaces.Box(0, 1, (ActionLayout(env.rules).num_actions,), np.int8)
    assert all(env.observation_space(agent)["action_mask"] == mask_space for agent in env.possible_agents)


def observed_game(env, seed=None) -> np.ndarray:
    """The acting player's observation before each decision of a whole game, each the first legal action."""
    seen = []

    def first_legal(agent, observation):
        seen.append(observation["observation"])
        return int(np.flatnonzero(observation["action_mask"])[0])

    play_pettingzoo(env, first_legal, seed=seed)
    return np.stack(seen)


def test_a_seeded_reset_deals_its_game_again_whatever_was_played_before_and_starts_with_no_rewards():
    env = multiplayer.raw_env(num_players=3)
    env.reset(seed=7)
    assert env.rewards == env._cumulative_rewards == {agent: 0.0 for agent in env.possible_agents}
    first = observed_game(env, seed=7)
    other = observed_game(env)  # unseeded: the stream goes on
    env.reset(seed=7)
    assert env.rewards == {agent: 0.0 for agent in env.possible_agents}
    again = observed_game(env, seed=7)
    np.testing.assert_array_equal(again, first)
    assert not np.array_equal(other, first)


def test_three_player_game_totals_are_the_sum_of_each_players_rows_in_whole_turns():
    env = multiplayer.env(num_players=3, reward_mode="score")
    order = play_pettingzoo(env, random_chooser(1), seed=11)
    turns = turns_of(order)
    assert turns == ["player_0", "player_1", "player_2"] * 12  # whole turns in rotation
    assert all(order.count(agent) <= 36 for agent in env.possible_agents)
    sheets, totals = env.unwrapped.sheets, env.unwrapped.totals
    for agent in env.possible_agents:
        assert None not in sheets[agent]  # every row filled exactly once
        assert totals[agent] == sum(sheets[agent])
        assert env.unwrapped.rewards.get(agent) is None  # removed after the game, as PettingZoo wants


def test_score_mode_returns_are_the_final_totals_and_win_mode_is_zero_sum():
    for mode in ("score", "win"):
        env = multiplayer.env(num_players=3, reward_mode=mode)
        env.reset(seed=2)
        returns = dict.fromkeys(env.possible_agents, 0.0)
        rng = np.random.default_rng(2)
        for agent in env.agent_iter():
            observation, reward, termination, truncation, info = env.last()
            returns[agent] += reward
            if termination or truncation:
                env.step(None)
                continue
            if mode == "win":
                assert reward == 0  # nothing before the end
            env.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
        totals = np.array(list(env.unwrapped.totals.values()))
        if mode == "score":
            assert list(returns.values()) == totals.tolist()
        else:
            np.testing.assert_allclose(list(returns.values()), win_rewards(totals))
            assert sum(returns.values()) == pytest.approx(0)


def test_ties_share_the_win():
    # Players 0 and 1 get the same dice and play the same actions; player 2 always scores the
    # lowest row it can, so it comes last: 0 and 1 share the win.
    faces = np.stack([draw_game_dice(np.random.default_rng(4), yacht_env.YACHT)] * 3)
    env = multiplayer.env(num_players=3, reward_mode="win")
    scores = yacht_env.YACHT.hand_scores

    def choose(agent, observation):
        mask = observation["action_mask"]
        legal_scores = np.flatnonzero(mask[SCORE:])
        hand = yacht_env.YACHT.hand(observation["observation"][:5].astype(int).tolist())
        pick = max if agent != "player_2" else min
        return SCORE + pick(legal_scores, key=lambda c: (scores[hand, c], -c))

    env.reset(options={"faces": faces})
    returns = dict.fromkeys(env.possible_agents, 0.0)
    for agent in env.agent_iter():
        observation, reward, termination, truncation, info = env.last()
        returns[agent] += reward
        if termination or truncation:
            assert info["win_share"] == {"player_0": 0.5, "player_1": 0.5, "player_2": 0.0}[agent]
            env.step(None)
            continue
        env.step(choose(agent, observation))
    totals = env.unwrapped.totals
    assert totals["player_0"] == totals["player_1"] > totals["player_2"]
    assert returns == {"player_0": 0.5, "player_1": 0.5, "player_2": -1.0}


def test_win_rewards_and_shares():
    np.testing.assert_allclose(win_rewards([120, 100]), [1, -1])
    np.testing.assert_allclose(win_rewards([100, 100]), [0, 0])
    np.testing.assert_allclose(win_rewards([90, 100, 100]), [-1, 0.5, 0.5])
    np.testing.assert_allclose(win_rewards([100, 90, 80, 70]), [1, -1 / 3, -1 / 3, -1 / 3])
    np.testing.assert_allclose(win_rewards([150]), [0])
    np.testing.assert_allclose(win_shares([90, 100, 100]), [0, 0.5, 0.5])
    np.testing.assert_allclose(win_shares([[1, 2], [3, 3]]), [[0, 1], [0.5, 0.5]])


def test_every_seat_plays_its_own_yacht_v0_game():
    """A seat's dice and sheet are those of Yacht-v0 on that seat's dice and actions, whatever the others do."""
    env = multiplayer.env(num_players=4, reward_mode="score")
    actions = {agent: [] for agent in env.possible_agents}
    chooser = random_chooser(3)

    def choose(agent, observation):
        actions[agent].append(chooser(agent, observation))
        return actions[agent][-1]

    play_pettingzoo(env, choose, seed=21)
    faces = env.unwrapped.tables.faces[0]
    for seat, agent in enumerate(env.possible_agents):
        solitaire = YachtEnv()
        solitaire.reset(options={"faces": faces[seat]})
        for action in actions[agent]:
            solitaire.step(action)
        assert solitaire.sheet == env.unwrapped.sheets[agent]
    # Seat 0's dice for a seed are Yacht-v0's for that seed.
    np.testing.assert_array_equal(draw_game_dice(seeding.np_random(21)[0], yacht_env.YACHT), faces[0])


def test_illegal_actions_in_the_pettingzoo_env():
    env = multiplayer.env(num_players=2, max_illegal_actions=3)
    env.reset(seed=0)
    env.step(SCORE)  # player_0 scores ones
    env.step(SCORE + 1)  # player_1 scores twos
    env.step(SCORE)  # player_0: ones again, already filled
    assert env.agent_selection == "player_0"
    assert env.rewards["player_0"] == -1.0 and env.infos["player_0"]["illegal_action"]
    assert "already filled" in env.infos["player_0"]["illegal_reason"]
    with pytest.raises(ValueError, match="not in the action space"):
        env.step(44)
    env.step(0)
    env.step(0)
    assert all(env.truncations.values())

    strict = multiplayer.env(num_players=2, illegal_action="raise")
    strict.reset(seed=0)
    with pytest.raises(IllegalActionError, match="re-rolls no dice"):
        strict.step(0)
    assert strict.agent_selection == "player_0"


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"num_players": 0}, "num_players must be an integer in 1..5"),
        ({"num_players": 6}, "num_players must be an integer in 1..5"),
        ({"reward_mode": "points"}, "reward_mode 'points' is not supported"),
        ({"observation_encoding": "pixels"}, "unknown observation encoding 'pixels'"),
        ({"illegal_action": "ignore"}, "illegal_action 'ignore' is not supported"),
    ],
)
def test_bad_pettingzoo_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        multiplayer.env(**kwargs)


def test_pettingzoo_render_shows_the_table():
    env = multiplayer.env(num_players=2, render_mode="ansi")
    play_pettingzoo(env, random_chooser(0), seed=1)
    text = env.render()
    assert "player_0" in text and "player_1" in text and ("wins" in text or "share the win" in text)
    env.reset(seed=1)
    assert "player_0 to play" in env.render() and "Table" in env.render()


# -- YachtTable-v0: one learner against opponent policies ---------------------------------------


def table_env(names, rules=None, **kwargs):
    return gym.make("YachtTable-v0", opponents=make_opponents(names, rules=rules), rules=rules, **kwargs)


def test_each_id_builds_one_class():
    assert type(gym.make("Yacht-v0").unwrapped) is YachtEnv
    assert type(table_env(["greedy"]).unwrapped) is YachtTableEnv
    with pytest.raises(TypeError):
        gym.make("Yacht-v0", opponents=make_opponents(["greedy"]))


def test_pettingzoo_env_is_reachable_as_yacht_v0():
    from yacht_env import yacht_v0

    env = yacht_v0.env(num_players=3)
    assert isinstance(env.unwrapped, multiplayer.YachtMultiplayerEnv) and len(env.possible_agents) == 3


@pytest.mark.parametrize("encoding", ["flat", "features", "dict"])
@pytest.mark.filterwarnings("error")
def test_table_env_passes_check_env(encoding):
    env = table_env(["greedy", "random"], observation_encoding=encoding, render_mode="ansi")
    assert isinstance(env.unwrapped, YachtTableEnv)
    check_env(env.unwrapped)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"opponents": make_opponents(["optimal"]), "num_players": 3}, "needs 2 opponent"),
        ({"opponents": []}, "opponents must be a list of 1 to 4 policies, got 0"),
        ({"opponents": make_opponents(["random"] * 5)}, "opponents must be a list of 1 to 4 policies, got 5"),
        ({"opponents": ["optimal"]}, r"is a policy name; YachtTable-v0 takes policy objects: .*agents\.registry\.make_opponents"),
        ({"opponents": "optimal"}, "opponents must be a list"),
        ({"opponents": [42]}, "is not a policy"),
        ({"opponents": make_opponents(["optimal"]), "seat": 2}, "seat must be an integer in 0..1"),
        ({"opponents": make_opponents(["optimal"]), "reward_mode": "money"}, "reward_mode 'money' is not supported"),
    ],
)
def test_bad_table_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        gym.make("YachtTable-v0", **kwargs)


@pytest.mark.parametrize("opponents", range(1, MAX_PLAYERS))
def test_a_table_of_every_size_seats_the_learner_after_its_opponents(opponents):
    env = gym.make("YachtTable-v0", opponents=make_opponents(["random"] * opponents), seat=opponents)
    _, info = env.reset(seed=0)
    assert env.unwrapped.num_players == len(info["totals"]) == opponents + 1
    assert env.unwrapped.seat_names == ["random"] * opponents + ["agent"]


def test_a_table_given_no_opponents_seats_random_players_two_by_default():
    assert [type(opponent) for opponent in YachtTableEnv().opponents] == [RandomOpponent]
    assert [type(opponent) for opponent in YachtTableEnv(num_players=4).opponents] == [RandomOpponent] * 3


@pytest.mark.parametrize("seat", [1.0, "1", True, np.float64(1), None])
def test_a_seat_that_is_no_integer_is_refused_naming_it(seat):
    with pytest.raises(ValueError, match=rf"^seat must be an integer in 0\.\.1, got {re.escape(repr(seat))}$"):
        YachtTableEnv(make_opponents(["random"]), seat=seat)


def test_a_step_before_the_first_reset_is_refused():
    with pytest.raises(GameOverError, match="reset"):
        YachtTableEnv().step(SCORE)


def test_before_anyone_has_played_every_row_of_every_sheet_is_open():
    env = YachtTableEnv(make_opponents(["greedy", "random"]), seat=0)
    env.reset(seed=0)
    assert env.sheets == ((None,) * 12,) * 3


class Answering(RandomOpponent):
    """An opponent answering one action number whatever the position."""

    def __init__(self, action: int):
        super().__init__(yacht_env.rules.YACHT)
        self.action = action

    def act_batch(self, observations, action_masks):
        return np.full(len(action_masks), self.action)


@pytest.mark.parametrize("action", [-1, -SCORE, 0, SCORE + 12, 10**6])
def test_an_opponent_answering_no_legal_action_is_refused_naming_it(action):
    env = YachtTableEnv([Answering(action)], seat=1)
    with pytest.raises(ValueError, match=rf"^opponent 'random' in seat 0 chose illegal action {action}$"):
        env.reset(seed=0)


def test_opponent_names_are_resolved_by_agents():
    with pytest.raises(ValueError, match="unknown policy 'best'"):
        make_opponents(["best"])
    with pytest.raises(ValueError, match="opponents must be a list of policy names"):
        make_opponents("optimal")


SHEET_RULE_SETS = [name for name, rules in RULE_SETS.items() if rules.has_bonus_or_joker]


@pytest.mark.parametrize(
    "seat, mode, rules",
    [(0, "score", "yacht"), (1, "score", "yacht"), (2, "win", "yacht")]
    + [(seat % 3, "score" if seat % 2 else "win", name) for seat, name in enumerate(SHEET_RULE_SETS)],
)
def test_opponent_env_matches_the_pettingzoo_env(seat, mode, rules):
    """Same seed, same learner actions, the same opponents: the same dice, turns, rewards and totals.

    Under rules with bonuses the dice are rigged to roll five alike often, so that extra-Yahtzee
    bonuses and jokers (forced ones too) come up at every seat.
    """
    rules = rule_set(rules)
    opponent_names = ["optimal", "greedy"]
    table = table_env(opponent_names, seat=seat, reward_mode=mode, rules=rules)
    opponents = {s: make_policy(name, rules=rules) for s, name in zip([s for s in range(3) if s != seat], opponent_names)}
    learner = f"player_{seat}"
    pz = multiplayer.env(num_players=3, reward_mode=mode, rules=rules)
    own_width = pz.unwrapped.encoding.own_width
    rng = np.random.default_rng(seat)
    faces = None
    if rules.has_bonus_or_joker:
        alike = np.random.default_rng(seat).random((3, rules.num_turns)) < 0.5
        faces = draw_table_dice(np.random.default_rng(8), rules, 3)
        faces[:, :, 0][alike] = np.random.default_rng(9).integers(1, 7, size=(int(alike.sum()), 1))
    options = None if faces is None else {"faces": faces}

    obs, info = table.reset(seed=8, options=options)
    pz.reset(seed=8, options=options)
    pz_return = table_return = 0.0
    decisions = 0
    for agent in pz.agent_iter():
        observation, reward, termination, truncation, pz_info = pz.last()
        if termination or truncation:
            if agent == learner:
                pz_return += reward
            pz.step(None)
            continue
        s = int(agent.split("_")[1])
        if s != seat:
            pz.step(opponents[s].act(observation["observation"][:own_width], observation["action_mask"]))
            continue
        # The learner's decision: the table env played the opponents' turns up to here.
        pz_return += reward
        assert pz_info["turn"] == info["turn"] and pz_info["total"] == info["total"]
        assert info["totals"].tolist() == list(pz.unwrapped.totals.values())
        np.testing.assert_array_equal(observation["observation"], obs)
        np.testing.assert_array_equal(observation["action_mask"], info["action_mask"])
        action = int(rng.choice(np.flatnonzero(info["action_mask"])))
        obs, reward, terminated, truncated, info = table.step(action)
        table_return += reward
        pz.step(action)
        decisions += 1
    assert terminated and decisions >= 12
    assert info["totals"].tolist() == list(pz.unwrapped.totals.values())
    assert table.unwrapped.sheets == tuple(pz.unwrapped.sheets.values())
    assert table_return == pytest.approx(pz_return)
    if mode == "score":
        assert table_return == table.unwrapped.totals[seat]
    if rules.yahtzee_bonus:  # the rigged dice did bring extra Yahtzees
        assert any(table.unwrapped.tables.bonuses(0, s)[1] for s in range(3))
    with pytest.raises(GameOverError):
        table.step(SCORE)


def test_opponent_env_rewards_win_mode_at_the_end_only():
    env = table_env(["greedy"], reward_mode="win")
    obs, info = env.reset(seed=3)
    rewards = []
    done = False
    while not done:
        action = SCORE + int(np.flatnonzero(info["action_mask"][SCORE:])[0])  # fill rows in order
        obs, reward, terminated, truncated, info = env.step(action)
        rewards.append(reward)
        done = terminated or truncated
    assert rewards[:-1] == [0.0] * 11 and rewards[-1] == -1.0 and info["win_share"] == 0.0
    assert info["totals"][1] > info["totals"][0]


def test_opponent_env_illegal_actions_are_handled_as_in_yacht_v0():
    env = table_env(["random"], max_illegal_actions=2)
    obs, info = env.reset(seed=0)
    after, reward, terminated, truncated, info = env.step(0)
    assert reward == -1.0 and info["illegal_action"] and not truncated
    np.testing.assert_array_equal(after, obs)
    *_, truncated, info = env.step(0)
    assert truncated
    strict = table_env(["random"], illegal_action="raise")
    strict.reset(seed=0)
    with pytest.raises(IllegalActionError):
        strict.step(0)
    with pytest.raises(ValueError, match="not in the action space"):
        strict.step(-1)


def test_seeded_reset_reseeds_random_opponents():
    env = table_env(["random", "random"], reward_mode="score")

    def game():
        obs, info = env.reset(seed=6)
        while True:
            obs, reward, terminated, truncated, info = env.step(SCORE + int(np.flatnonzero(info["action_mask"][SCORE:])[0]))
            if terminated:
                return env.unwrapped.sheets

    assert game() == game()
