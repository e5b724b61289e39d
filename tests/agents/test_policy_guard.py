"""The one guard between every policy and the game (:mod:`agents.policies.guard`).

A policy that raises, gives NaN or picks an illegal action is replaced by ``optimal`` for the rest of the game and the
replacement is told once; a zero-length batch gets a zero-length answer from every policy kind. The hostile file is a
``plan2:`` network that passes every check of :mod:`agents.learned.plan2_files` (8 layers, no weight beyond
``MAX_WEIGHT``) and whose hidden values grow past float32 at every state, so that its last layer sums inf and -inf
to NaN.
"""

from __future__ import annotations

import dataclasses
import logging

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agents import registry
from agents.evaluation.tournament import run_table
from agents.learned.plan2 import WinValue, win_features
from agents.learned.plan2_files import MAX_LAYERS, MAX_WEIGHT, num_features, read_plan2_file, write_plan2_file
from agents.policies.guard import FALLBACK, GuardedPolicy, unguarded, warn_replaced
from agents.policies.policy import Policy, PolicyOutputError, describe_position
from agents.registry import PolicySpec, make_policy, make_table_policy
from yacht_env.actions import ActionLayout
from yacht_env.encoding import make_encoding
from yacht_env.game import GameBatch, draw_table_dice
from yacht_env.rules import YACHT
from yacht_env.table.encoding import make_table_encoding, policy_observations

GUARD_LOG = "agents.policies.guard"
HIDDEN = 128  # wide enough that 7 hidden layers of MAX_WEIGHT carry the smallest state (its bias alone) past float32


def hostile_layers() -> list[tuple[np.ndarray, np.ndarray]]:
    """Every hidden weight and bias MAX_WEIGHT on the row flags (the lead's inputs weigh 0, so nothing is negative):
    each layer multiplies by HIDDEN * MAX_WEIGHT and the last hidden one is infinite; the logit's weights are half
    +MAX_WEIGHT and half -MAX_WEIGHT, so it is inf - inf = NaN at every state, in any order of summing.
    """
    width, layers = num_features(YACHT), []
    rows = 2 * YACHT.num_rows
    for i in range(MAX_LAYERS):
        out = 1 if i == MAX_LAYERS - 1 else HIDDEN
        weight = np.full((out, width), MAX_WEIGHT, dtype=np.float32)
        if i == 0:
            weight[:, rows:] = 0.0  # the lead and the share of open rows: no sign to worry about
        bias = np.full(out, MAX_WEIGHT, dtype=np.float32)
        if i == MAX_LAYERS - 1:
            weight[0, HIDDEN // 2 :] = -MAX_WEIGHT
            bias[:] = 0.0
        layers.append((weight, bias))
        width = out
    return layers


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    path = write_plan2_file(tmp_path_factory.mktemp("plan2") / "hostile.safetensors", hostile_layers(), "yacht", 1)
    read_plan2_file(path)  # every check of a plan2 file passes
    return f"plan2:{path}"


def first_position(policy, seed: int = 0):
    """A table of two's first position as ``policy`` is fed it, and its mask."""
    game = GameBatch(YACHT, 2)
    game.start(draw_table_dice(np.random.default_rng(seed), YACHT, 2)[None])
    return policy_observations(policy, game, [0], [0]), game.legal_masks([0])


def test_the_hostile_file_gives_nan_at_every_state_and_alone_picks_an_illegal_action(hostile):
    meta, layers = read_plan2_file(hostile.removeprefix("plan2:"))
    value = WinValue(YACHT, layers)
    movers = np.array([1, YACHT.all_open, 0b101])
    with np.errstate(all="ignore"):
        assert np.isnan(value.logits(win_features(YACHT.num_rows, movers, movers, np.array([-300, 0, 300])))).all()
        raw = unguarded(make_table_policy(hostile, 2))
        observations, masks = first_position(raw)
        action = int(raw.act_batch(observations, masks)[0])
    assert masks[0, action] == 0  # what the server played before: IllegalActionError, 500 on every move


def test_a_hostile_plan2_file_is_replaced_by_optimal_from_its_first_decision_and_told_once(hostile, caplog):
    """Before: the tournament stopped on its first decision (``chose illegal action 0``)."""
    caplog.set_level(logging.WARNING, GUARD_LOG)
    guarded = [make_table_policy(hostile, 2), make_table_policy("optimal", 2)]
    _, log = run_table(guarded, ["plan2", "optimal"], 6, seed=3)
    _, exact = run_table([make_table_policy("optimal", 2), make_table_policy("optimal", 2)], ["a", "b"], 6, seed=3)
    np.testing.assert_array_equal(log.totals, exact.totals)  # it failed at its first decision: optimal played it all
    (line,) = [r.getMessage() for r in caplog.records if r.name == GUARD_LOG]
    assert line.startswith(f"policy {hostile} could not choose at dice ") and "it chose the illegal action 0" in line
    assert line.endswith(f"{FALLBACK} plays in its place for the rest of the game") and "\n" not in line


# -- policies of one's own: any policy registered is guarded ---------------------------------------------------


class Broken(Policy):
    """Fails the way ``fault`` says at every decision; counts the decisions it was asked for."""

    def __init__(self, fault: str, rules=None, encoding="flat"):
        super().__init__(rules, encoding)
        self.name = f"broken-{fault}"
        self.fault = fault
        self.asked = 0

    def act_batch(self, observations, action_masks):
        self.asked += 1
        masks = np.asarray(action_masks)
        if self.fault == "raises":
            raise RuntimeError("division by zero in my policy\nand a second line")
        if self.fault == "illegal":
            return np.zeros(len(masks), dtype=np.int64)  # re-rolls no dice: never legal
        if self.fault == "outside":
            return np.full(len(masks), masks.shape[1], dtype=np.int64)
        if self.fault == "shape":
            return np.zeros(len(masks) + 1, dtype=np.int64)
        return np.argmax(self.action_probabilities(observations, masks), axis=1)  # NaN: argmax picks action 0

    def action_probabilities(self, observations, action_masks) -> np.ndarray:
        return np.full(np.shape(action_masks), np.nan)


FAULTS = ("raises", "illegal", "outside", "shape", "nan")


@pytest.fixture(scope="module")
def broken_names():
    """Each fault as a registered policy, built by name as every program builds one."""
    names = []
    for fault in FAULTS:
        spec = PolicySpec(f"broken-{fault}", "fails", lambda name, rules, encoding, seed: Broken(name[7:], rules, encoding))
        registry.register(spec)
        names.append(spec.name)
    yield names
    for name in names:
        del registry.POLICIES[name]


positions = st.lists(
    st.tuples(
        st.integers(0, len(YACHT.dice.hands) - 1),
        st.integers(0, YACHT.rolls_per_turn - 1),
        st.integers(1, YACHT.all_open),
    ),
    min_size=1,
    max_size=8,
)


def batch(rows):
    hands, rolls_left, open_bits = (np.array(part) for part in zip(*rows))
    layout = ActionLayout(YACHT)
    masks = np.stack([layout.legal_mask(r, o) for r, o in zip(rolls_left, open_bits)])
    return make_encoding("flat", YACHT).encode_batch(hands, rolls_left, open_bits), masks


@settings(max_examples=25, deadline=None)
@given(fault=st.sampled_from(FAULTS), first=positions, later=positions)
def test_a_policy_that_fails_plays_as_optimal_for_the_rest_of_the_game_and_is_told_once(broken_names, fault, first, later):
    told = []
    policy = make_policy(f"broken-{fault}", rules=YACHT)
    assert isinstance(policy, GuardedPolicy)
    policy.on_replace = told.append
    optimal = make_policy("optimal", rules=YACHT)
    for rows in (first, later):
        observations, masks = batch(rows)
        np.testing.assert_array_equal(policy.act_batch(observations, masks), optimal.act_batch(observations, masks))
    assert len(told) == 1 and policy.replaced is told[0] and policy.policy.asked == 1  # never asked again this game
    assert told[0].policy == f"broken-{fault}" and told[0].fallback == FALLBACK and "\n" not in told[0].message
    if fault == "raises":
        assert told[0].reason.endswith(": division by zero in my policy")
    policy.reset(0)  # a new game: the policy plays again
    assert policy.replaced is None
    policy.act_batch(*batch(first))
    assert policy.policy.asked == 2 and len(told) == 2


def test_probabilities_that_are_not_probabilities_are_refused_in_one_line_naming_the_policy(broken_names):
    policy = make_policy("broken-nan", rules=YACHT)
    observations, masks = batch([(3, 1, YACHT.all_open)])
    with pytest.raises(PolicyOutputError) as error:
        policy.action_probabilities(observations, masks)
    message = str(error.value)
    assert message.startswith("policy broken-nan gives no probabilities at dice ") and "1 rolls left" in message
    assert "\n" not in message


def test_probabilities_at_observations_the_encoding_cannot_read_name_the_position_by_its_row(broken_names):
    policy = make_policy("broken-nan", rules=YACHT)
    _, masks = batch([(3, 1, YACHT.all_open), (5, 0, 1)])
    with pytest.raises(PolicyOutputError, match="^policy broken-nan gives no probabilities at position 0 of 2: its "):
        policy.action_probabilities(np.zeros((2, 3)), masks)


class Given(Policy):
    """A policy whose outputs a test writes: its actions are ``actions(optimal's actions)`` (numbers of another type,
    another shape), its probabilities ``probabilities(the masks' shape)``.
    """

    name = "given"

    def __init__(self, actions=lambda optimal: optimal, probabilities=None):
        super().__init__(YACHT)
        self.actions, self.probabilities = actions, probabilities

    def act_batch(self, observations, action_masks):
        return self.actions(make_policy("optimal", rules=YACHT).act_batch(observations, action_masks))

    def action_probabilities(self, observations, action_masks):
        return self.probabilities(np.shape(action_masks))


@pytest.mark.parametrize("extra", [(1, 0), (0, 1), (-1, 0), (0, -1)], ids=["row-more", "action-more", "row-less", "action-less"])
def test_probabilities_of_another_shape_than_the_batch_are_refused_naming_both(extra):
    def uniform(shape):
        rows, actions = shape[0] + extra[0], shape[1] + extra[1]
        return np.full((rows, actions), 1 / actions)

    observations, masks = batch([(3, 1, YACHT.all_open), (5, 0, 1)])
    shape = (2 + extra[0], masks.shape[1] + extra[1])
    with pytest.raises(PolicyOutputError) as refused:
        GuardedPolicy(Given(probabilities=uniform)).action_probabilities(observations, masks)
    said = f"it answered shape {shape} for 2 positions of {masks.shape[1]} actions"
    assert str(refused.value) == f"policy given gives no probabilities at one of 2 positions: {said}"


def test_of_several_faults_in_a_batch_the_first_is_the_one_named(broken_names):
    class FarOff(Policy):
        name = "far-off"

        def act_batch(self, observations, action_masks):
            return np.shape(action_masks)[1] + np.arange(1, len(action_masks) + 1)

    observations, masks = batch([(3, 1, YACHT.all_open), (5, 0, 1)])
    first = describe_position(make_encoding("flat", YACHT), observations, 0)
    told = []
    GuardedPolicy(FarOff(YACHT), on_replace=told.append).act_batch(observations, masks)
    assert told[0].reason == f"{first}: it chose action {masks.shape[1] + 1}, not one of 0..{masks.shape[1] - 1}"

    class Illegal(Policy):
        name = "illegal"

        def act_batch(self, observations, action_masks):  # the first illegal action of one, the last of the other
            return np.array([np.flatnonzero(action_masks[0] == 0)[0], np.flatnonzero(action_masks[1] == 0)[-1]])

    told.clear()
    GuardedPolicy(Illegal(YACHT), on_replace=told.append).act_batch(observations, masks)
    assert told[0].reason == f"{first}: it chose the illegal action {np.flatnonzero(masks[0] == 0)[0]}"
    assert np.flatnonzero(masks[0] == 0)[0] != np.flatnonzero(masks[1] == 0)[-1]
    with pytest.raises(PolicyOutputError) as refused:  # NaN at both positions
        make_policy("broken-nan", rules=YACHT).action_probabilities(observations, masks)
    assert str(refused.value).startswith(f"policy broken-nan gives no probabilities at {first}: ")


@pytest.mark.parametrize(
    "row",
    [[1.5, -0.5], [np.nan, 1.0], [np.inf, 0.0], [np.nan, -1.0], [0.5, 0.4]],
    ids=["negative-summing-to-one", "nan", "infinite", "nan-and-negative", "summing-to-less"],
)
def test_a_row_that_is_no_probabilities_is_refused_whatever_else_it_holds(row):
    def odd(shape):
        p = np.zeros(shape)
        p[:, -1] = 1.0
        p[1, :2] = row  # the second position's
        p[1, -1] = 0.0
        return p

    observations, masks = batch([(3, 1, YACHT.all_open), (5, 0, 1)])
    second = describe_position(make_encoding("flat", YACHT), observations, 1)
    with pytest.raises(PolicyOutputError) as refused:
        GuardedPolicy(Given(probabilities=odd)).action_probabilities(observations, masks)
    said = "its probabilities are NaN, infinite, negative or do not sum to 1"
    assert str(refused.value) == f"policy given gives no probabilities at {second}: {said}"


@pytest.mark.parametrize("past_the_end", [0, 1, 1000])
def test_an_action_number_past_the_last_is_named_with_the_actions_there_are(past_the_end):
    class PastTheEnd(Policy):
        name = "past-the-end"

        def act_batch(self, observations, action_masks):
            return np.full(len(action_masks), np.shape(action_masks)[1] + past_the_end)

    told = []
    policy = GuardedPolicy(PastTheEnd(YACHT), on_replace=told.append)
    observations, masks = batch([(3, 1, YACHT.all_open)])
    policy.act_batch(observations, masks)
    last = masks.shape[1] - 1
    assert told[0].reason.endswith(f": it chose action {last + 1 + past_the_end}, not one of 0..{last}")


@pytest.mark.parametrize(
    "answer, taken",
    [
        (lambda actions: actions.astype(np.float64), True),  # whole numbers written as floats are action numbers
        (lambda actions: actions.astype(np.int16), True),
        (lambda actions: actions + 0.25, False),
        (lambda actions: actions - 0.25, False),
        (lambda actions: actions.astype(str), False),
    ],
)
def test_actions_are_taken_as_numbers_only_when_they_are_whole(answer, taken):
    told = []
    observations, masks = batch([(3, 1, YACHT.all_open), (5, 0, 1)])
    optimal = make_policy("optimal", rules=YACHT).act_batch(observations, masks)
    actions = GuardedPolicy(Given(answer), on_replace=told.append).act_batch(observations, masks)
    np.testing.assert_array_equal(actions, optimal)  # its own or, replaced, the fallback's: optimal's either way
    assert actions.dtype == np.int64
    if taken:
        assert told == []
    else:
        dtype = np.asarray(answer(optimal)).dtype
        assert told[0].reason == f"one of 2 positions: it answered {dtype} values, not action numbers"


@pytest.mark.parametrize(
    "answer, shape",
    [
        (lambda actions: np.append(actions, actions[:1]), "(3,)"),  # one position more
        (lambda actions: actions[:1], "(1,)"),
        (lambda actions: actions[:, None], "(2, 1)"),  # a column: each action in a row of its own
        (lambda actions: actions[0], "()"),
    ],
)
def test_an_answer_of_another_shape_than_one_action_a_position_is_named_with_its_shape(answer, shape):
    told = []
    observations, masks = batch([(3, 1, YACHT.all_open), (5, 0, 1)])
    GuardedPolicy(Given(answer), on_replace=told.append).act_batch(observations, masks)
    assert told[0].reason == f"one of 2 positions: it answered shape {shape} for 2 positions"


def test_the_replacement_notes_are_told_again_on_stderr_one_warning_a_line(capsys):
    warn_replaced(["ppo was replaced by optimal in 1 of 2 games", "dqn was replaced by optimal in 2 of 2 games"])
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines() == [
        "warning: ppo was replaced by optimal in 1 of 2 games",
        "warning: dqn was replaced by optimal in 2 of 2 games",
    ]


# -- an empty batch, every policy kind -------------------------------------------------------------------------

SMALL_ROWS = "ones,threes,fives,full_house"  # the two-player game of four rows: solved in about a second


@pytest.fixture(scope="module")
def small_game(tmp_path_factory):
    from agents.two_player import solve_two_player
    from agents.two_player.__main__ import sub_game

    rules = sub_game(YACHT, SMALL_ROWS)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("YACHT_RL_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        solve_two_player(rules)
        solve_two_player(rules, "optimal", 0)
        solve_two_player(rules, "optimal", 1)
        yield rules


@pytest.fixture(scope="module")
def zip_model(tmp_path_factory):
    """An untrained MaskablePPO zip: what ``ppo-zip:`` loads."""
    sb3_contrib = pytest.importorskip("sb3_contrib")
    from yacht_env.env import YachtEnv

    path = tmp_path_factory.mktemp("zip") / "untrained.zip"
    sb3_contrib.MaskablePPO("MlpPolicy", YachtEnv(), n_steps=64, batch_size=64, seed=0, device="cpu").save(path)
    return path


KINDS = {  # one name of every kind in the table, with the table size it is built for (1: alone)
    "random": ("random", 1),
    "greedy": ("greedy", 1),
    "optimal": ("optimal", 1),
    "softmax:": ("softmax:1.5", 1),
    "target:": ("target:150", 1),
    "win": ("win", 3),
    "exact2": ("exact2", 2),
    "br:": ("br:optimal", 2),
    "ppo:": ("ppo:yacht", 1),
    "plan:": ("plan:yacht", 1),
    "plan2:": ("plan2:yacht", 2),
    "ppo-zip:": ("ppo-zip:{zip_model}", 2),
    "planN:": ("planN:{planN_model}", 3),
    "dqn:": ("dqn:{dqn_model}", 1),
}


@pytest.fixture(scope="module")
def dqn_model(tmp_path_factory):
    """An untrained masked DQN exported as a model file: what ``dqn:`` loads."""
    pytest.importorskip("sb3_contrib")
    from agents.learned.model_files import export_model, record_rules
    from tests.training.test_dqn import small_model

    model = small_model()
    record_rules(model, "yacht")
    return export_model(model, tmp_path_factory.mktemp("dqn") / "untrained.safetensors")


@pytest.fixture
def planN_model(tmp_path):
    """A small planN file of random weights (none is shipped): its kind answers an empty batch like the others."""
    from agents.learned.planN_files import write_planN_file
    from tests.agents.test_planN import random_layers

    return write_planN_file(tmp_path / "n.safetensors", random_layers(YACHT), "yacht", [2, 3], 0)


def test_every_kind_of_the_table_is_checked_with_an_empty_batch():
    assert set(KINDS) == {spec.name for spec in registry.policy_specs() if not spec.name.startswith("broken-")}


def empty_batch(policy):
    """Zero positions as ``policy`` is fed them (a batch of one, cut to none), and zero masks."""
    one = np.zeros(1, dtype=np.int64)
    masks = np.zeros((0, ActionLayout(policy.rules).num_actions), dtype=np.int8)
    table_encoding = getattr(policy, "table_encoding", None)
    if table_encoding is None:
        observations = policy.encoding.encode_batch(one, one, one + 1)
    else:
        seats = np.zeros((1, table_encoding.num_players), dtype=np.int64)
        observations = table_encoding.encode_batch(one, one, one + 1, seats, seats + 1)
    if isinstance(observations, dict):
        return {key: value[:0] for key, value in observations.items()}, masks
    return observations[:0], masks


@pytest.mark.parametrize("kind", KINDS)
def test_an_empty_batch_gets_an_empty_answer_from_every_policy_kind(kind, request):
    """Before: ``ppo:`` answered ``cannot reshape tensor of 0 elements`` (the report on no game, a 500)."""
    name, players = KINDS[kind]
    if kind in ("ppo:", "plan:", "plan2:", "ppo-zip:", "planN:", "dqn:") and not registry.can_read_model_files():
        pytest.skip("model files need the train extra")
    if kind in ("ppo-zip:", "planN:", "dqn:"):
        fixture = {"ppo-zip:": "zip_model", "planN:": "planN_model", "dqn:": "dqn_model"}[kind]
        name = name.format(**{fixture: request.getfixturevalue(fixture)})
    rules = request.getfixturevalue("small_game") if kind in ("exact2", "br:") else YACHT
    policy = make_policy(name, rules=rules) if players == 1 else make_table_policy(name, players, rules=rules)
    observations, masks = empty_batch(policy)
    actions = policy.act_batch(observations, masks)
    assert actions.shape == (0,) and actions.dtype == np.int64
    probabilities = policy.action_probabilities(observations, masks)
    assert probabilities is None or probabilities.shape == (0, masks.shape[1])
    if kind in ("ppo:", "softmax:", "random"):
        assert probabilities is not None  # the kinds that give probabilities give an empty table, not None


def test_a_table_policy_replaced_reads_its_own_position_from_the_table(hostile):
    """The fallback of a policy that reads the table is fed the same table observations."""
    policy = make_table_policy(hostile, 2)
    policy.on_replace = lambda replacement: None
    observations, masks = first_position(policy, seed=5)
    with np.errstate(all="ignore"):
        action = policy.act_batch(observations, masks)
    own = make_table_encoding("dict", 2, YACHT).decode_batch(observations)
    expected = make_policy("optimal").act_batch(make_encoding("flat", YACHT).encode_batch(*own), masks)
    np.testing.assert_array_equal(action, expected)


def test_an_empty_batch_is_answered_without_asking_the_policy(broken_names):
    told = []
    policy = make_policy("broken-raises", rules=YACHT)
    policy.on_replace = told.append
    observations, masks = batch([(3, 1, YACHT.all_open)])
    assert policy.act_batch(observations[:0], masks[:0]).shape == (0,)
    assert policy.policy.asked == 0 and told == [] and policy.replaced is None


def test_a_guarded_policy_answers_for_what_its_policy_has_beyond_the_interface(broken_names):
    policy = make_policy("broken-nan", rules=YACHT)
    assert isinstance(policy, GuardedPolicy)
    assert (policy.asked, policy.fault) == (0, "nan")  # names either side of "policy" are looked up alike
    with pytest.raises(AttributeError, match="no_such_thing"):
        policy.no_such_thing


def test_a_replacement_once_told_is_a_value_that_cannot_be_altered(broken_names):
    told = []
    policy = make_policy("broken-raises", rules=YACHT)
    policy.on_replace = told.append
    policy.act_batch(*batch([(3, 1, YACHT.all_open)]))
    with pytest.raises(dataclasses.FrozenInstanceError):
        told[0].fallback = "random"
    assert told[0].fallback == FALLBACK and len({told[0], dataclasses.replace(told[0])}) == 1


@pytest.mark.parametrize("row", [-1, 2, 3])
def test_a_failure_at_a_row_outside_the_batch_is_told_as_one_of_its_positions(row):
    class WrongRow(Policy):
        name = "wrong-row"

        def act_batch(self, observations, action_masks):
            raise PolicyOutputError("no answer", row)

    told = []
    observations, masks = batch([(3, 1, YACHT.all_open), (5, 0, 1)])
    GuardedPolicy(WrongRow(YACHT), on_replace=told.append).act_batch(observations, masks)
    assert told[0].reason == "one of 2 positions: no answer"
