"""The look-ahead prior under every rule set: its one-turn value counts the bonuses and jokers of this turn's score.

The value of scoring a row is checked against first principles (hand-worked figures) and against
the rule book's own scoring, :meth:`RuleSet.score_on`, on positions of real games whose dice are
rigged to roll five alike often, so that extra Yahtzees, jokers and forced placements happen.
"""

import json

import numpy as np
import pytest
import torch as th
from gymnasium import spaces

from agents.learned.model_files import ModelLoadError
from agents.registry import make_policy
from agents.solvers.optimal import solve_myopic
from agents.training.lookahead_policy import LookaheadPolicy, OneTurnLookahead
from tests.training.test_train import TINY, run_train, train_main
from tests.yacht_env.test_rule_set_envs import rigged_faces
from yacht_env import YachtEnv
from yacht_env.actions import ActionLayout
from yacht_env.encoding import make_encoding
from yacht_env.rules import RULE_SETS, Sheet, rule_set

SHEET_NAMES = [name for name, rules in RULE_SETS.items() if rules.has_bonus_or_joker]


def played_games(name: str, games: int, seed: int):
    """Every decision of ``games`` random games on rigged dice: (position, mask, the rule book's sheet)."""
    rules = rule_set(name)
    env = YachtEnv(rules=name, observation_encoding="flat")
    rng = np.random.default_rng(seed)
    yahtzee_row = rules.yahtzee_row_index
    for game in range(games):
        _, info = env.reset(options={"faces": rigged_faces(rules, seed + game, 0.6)})
        terminated = False
        while not terminated:
            hand, rolls_left, open_bits = env.state
            upper_total, yahtzee_full = env.sheet_state
            box = env.sheet[yahtzee_row] if yahtzee_row >= 0 else None
            mask = info["action_mask"]
            sheet = Sheet(open_bits, upper_total, box)
            yield (hand, rolls_left, open_bits, upper_total, yahtzee_full), mask, sheet
            legal = np.flatnonzero(mask)
            rows = legal[legal >= env.layout.first_score_action] - env.layout.first_score_action
            if rolls_left and rng.random() < 0.4:  # re-roll at random
                action = rng.choice(legal[legal < env.layout.first_score_action])
            else:  # score: the most points, upper rows first, half the time (so that bonuses are reached); else any row
                upper_rows = [row for row in rows if rules.categories[row].upper] or list(rows)
                best = max(upper_rows, key=lambda row: rules.score_on(sheet, hand, int(row)).reward)
                action = env.layout.score_action(int(best if rng.random() < 0.5 else rng.choice(rows)))
            _, _, terminated, _, info = env.step(int(action))


def played_positions(name: str, count: int, seed: int):
    """``count`` positions of random games on rigged dice, as five (count,) arrays, and their masks."""
    rows = []
    for position, mask, _ in played_games(name, 10_000, seed):
        rows.append((position, mask))
        if len(rows) == count:
            break
    positions = tuple(np.array(column) for column in zip(*(position for position, _ in rows)))
    return positions, np.array([mask for _, mask in rows]).astype(bool)


def lookahead_q(name: str, hand, rolls_left: int, open_bits: int, upper_total: int, yahtzee_full: int) -> np.ndarray:
    """The prior's ``q`` of one position, read from its ``features`` observation as the network reads it."""
    rules = rule_set(name)
    encoding = make_encoding("features", rules)
    extractor = OneTurnLookahead(encoding.space, encoding="features", rules=name)
    hand = rules.hand(hand) if isinstance(hand, tuple) else hand
    obs = encoding.encode_batch(*(np.array([value]) for value in (hand, rolls_left, open_bits, upper_total, yahtzee_full)))
    return extractor.one_turn_q(th.as_tensor(obs))[0]


def row_bits(rules, *names) -> int:
    return sum(1 << rules.category_names.index(name) for name in names)


@pytest.mark.parametrize(
    "name, upper_total, expected",
    [
        ("yahtzee", 60, 3 + 35),  # 60 + 3 reaches 63: the bonus is earned by this score
        ("yahtzee", 59, 3),  # 62: not yet
        ("yahtzee", 63, 3),  # already earned by an earlier score
        ("yatzy", 60, 3 + 50),
        ("yahtzee_no_joker", 60, 3 + 35),
        ("yahtzee_no_bonus", 60, 3 + 35),  # no extra-Yahtzee bonus, but the upper bonus
    ],
)
def test_scoring_a_row_is_worth_the_upper_bonus_it_earns(name, upper_total, expected):
    rules = rule_set(name)
    open_bits = rules.all_open & ~row_bits(rules, "ones", "twos", "fours", "fives", "sixes")  # threes still open
    for rolls_left in range(rules.rolls_per_turn):
        q = lookahead_q(name, (1, 2, 3, 4, 6), rolls_left, open_bits, upper_total, 0)
        threes = ActionLayout(rules).score_action(rules.category_names.index("threes"))
        assert q[threes] == expected
        assert q[threes] == rules.score_on(Sheet(open_bits, upper_total, None), (1, 2, 3, 4, 6), "threes").reward


FIVES = (5, 5, 5, 5, 5)


@pytest.mark.parametrize(
    "name, closed, upper_total, yahtzee_box, expected",
    [
        # An extra Yahtzee while the box holds 50: 100 more, on top of the row's points (and the upper bonus).
        ("yahtzee", ("yahtzee",), 0, 50, {"fives": 25 + 100, "chance": 25 + 100, "three_of_a_kind": 25 + 100}),
        ("yahtzee", ("yahtzee", "sixes", "fours"), 40, 50, {"fives": 25 + 100 + 35, "chance": 25 + 100}),
        # Free joker with the fives box filled: full house and straights at full value.
        ("yahtzee", ("yahtzee", "fives"), 25, 50, {"full_house": 125, "large_straight": 140, "small_straight": 130, "ones": 100}),
        # A Yahtzee box holding 0: no bonus, the joker still plays.
        ("yahtzee", ("yahtzee", "fives"), 25, 0, {"full_house": 25, "large_straight": 40, "twos": 0}),
        # No joker: five alike is no full house or straight.
        ("yahtzee_no_joker", ("yahtzee", "fives"), 25, 50, {"full_house": 100, "large_straight": 100, "chance": 125}),
        # Forced joker: the fives box is open, so the extra Yahtzee goes there and nowhere else.
        ("yahtzee_forced_joker", ("yahtzee",), 0, 50, {"fives": 125}),
        # Forced joker, fives filled: any lower box at joker values, and no upper box while a lower one is open.
        ("yahtzee_forced_joker", ("yahtzee", "fives"), 25, 50, {"full_house": 125, "large_straight": 140, "chance": 125}),
        ("yahtzee_no_bonus", ("yahtzee", "fives"), 25, 50, {"full_house": 0, "fives": None, "chance": 25}),
        ("yatzy", ("yatzy", "fives"), 25, 50, {"full_house": 0, "four_of_a_kind": 20, "one_pair": 10, "two_pairs": 0}),
    ],
)
def test_extra_yahtzees_and_jokers_are_valued_as_the_rules_score_them(name, closed, upper_total, yahtzee_box, expected):
    rules = rule_set(name)
    open_bits = rules.all_open & ~row_bits(rules, *closed)
    yahtzee_full = int(bool(yahtzee_box)) if rules.tracks_yahtzee_box else 0
    q = lookahead_q(name, FIVES, 0, open_bits, upper_total, yahtzee_full)
    layout = ActionLayout(rules)
    sheet = Sheet(open_bits, upper_total, yahtzee_box if rules.yahtzee_row else None)
    legal_rows, _ = rules.scoring_options(FIVES, open_bits)
    for row, value in expected.items():
        index = rules.category_names.index(row)
        if value is None:
            assert not open_bits >> index & 1
            continue
        assert q[layout.score_action(index)] == value, row
        assert rules.score_on(sheet, FIVES, row).reward == value, row
    score_q = q[layout.first_score_action :]
    assert [bool(legal_rows >> c & 1) for c in range(rules.num_rows)] == list(np.isfinite(score_q))


def test_a_forced_joker_leaves_only_its_box_legal():
    rules = rule_set("yahtzee_forced_joker")
    q = lookahead_q("yahtzee_forced_joker", FIVES, 2, rules.all_open & ~row_bits(rules, "yahtzee"), 0, 1)
    layout = ActionLayout(rules)
    legal_scores = np.flatnonzero(np.isfinite(q[layout.first_score_action :]))
    assert legal_scores.tolist() == [rules.category_names.index("fives")]
    assert np.isfinite(q[1 : layout.first_score_action]).all()  # re-rolling stays open


@pytest.mark.parametrize("name", SHEET_NAMES)
def test_every_score_is_valued_as_the_rule_book_scores_it(name):
    """Differential: on every decision of real games, q of each row = the rule book's reward for it."""
    rules = rule_set(name)
    layout = ActionLayout(rules)
    encoding = make_encoding("features", rules)
    extractor = OneTurnLookahead(encoding.space, encoding="features", rules=name)
    decisions = list(played_games(name, 12, seed=11))
    positions = [np.array(column) for column in zip(*(position for position, _, _ in decisions))]
    q = extractor.one_turn_q(th.as_tensor(encoding.encode_batch(*positions)))
    jokers = bonuses = 0
    for (position, mask, sheet), values in zip(decisions, q):
        np.testing.assert_array_equal(np.isfinite(values), mask.astype(bool))  # -inf exactly where the env masks
        hand, rolls_left = position[:2]
        rows, joker = rules.scoring_options(hand, sheet.open_bits)
        jokers += joker
        for row in range(rules.num_rows):
            if rows >> row & 1:
                result = rules.score_on(sheet, hand, row)
                bonuses += result.upper_bonus > 0 or result.yahtzee_bonus > 0
                assert values[layout.score_action(row)] == result.reward, (position, row)
    assert bonuses > 0 and (jokers > 0 or rules.joker == "none")  # the rigged dice reach what is tested


@pytest.mark.parametrize("name", ["yahtzee", "yahtzee_forced_joker", "yatzy"])
def test_without_a_learned_correction_it_plays_greedy(name):
    rules = rule_set(name)
    encoding = make_encoding("features", rules)
    policy = LookaheadPolicy(
        encoding.space,
        spaces.Discrete(ActionLayout(rules).num_actions),
        lambda _: 1e-3,
        temperature=0.3,
        encoding="features",
        rules=name,
        net_arch=[16],
    )
    with th.no_grad():  # no learned correction: the prior alone decides
        policy.action_net.weight.zero_()
        policy.action_net.bias.zero_()
    positions, masks = played_positions(name, 400, seed=2)
    obs = encoding.encode_batch(*positions)
    actions, _ = policy.predict(obs, action_masks=masks, deterministic=True)
    assert masks[np.arange(len(actions)), actions].all()
    q = solve_myopic(rules).q_values_batch(*positions)  # the greedy baseline's values, sheet state included
    np.testing.assert_allclose(q[np.arange(len(actions)), actions], q.max(axis=1), atol=1e-4)


def test_the_rules_the_policy_reads_are_its_envs():
    with pytest.raises(ValueError, match="'features' encoding"):
        OneTurnLookahead(make_encoding("features", rule_set("yacht")).space, encoding="features", rules="yahtzee")


def test_tiny_yahtzee_run_trains_evaluates_and_saves_a_yahtzee_model(tmp_path):
    from agents.solvers.optimal import expected_score

    run_train("--config", "configs/yahtzee_quick.yaml", "--runs-dir", str(tmp_path), "name=tiny", *TINY)
    run = tmp_path / "tiny"
    report = json.loads((run / "eval.json").read_text())
    assert report["optimal_expected_score"] == pytest.approx(expected_score("yahtzee"), abs=1e-9)
    by_name = {entry["policy"]: entry for entry in report["policies"]}
    assert by_name["optimal"]["mean"] > by_name["greedy"]["mean"] > by_name["random"]["mean"] + 100
    assert by_name["optimal"]["mean"] > 200  # Yahtzee's scores, not Yacht's (optimum 169.8)
    policy = make_policy(f"ppo:{run / 'model.safetensors'}", rules=rule_set("yahtzee"))
    assert policy.model.metadata["rules"] == "yahtzee" and policy.model.metadata["policy"] == "lookahead"
    with pytest.raises(ModelLoadError, match="trained on the 'yahtzee' rules, but this game plays 'yacht'"):
        make_policy(f"ppo:{run / 'model.safetensors'}")
    curve = (run / "learning_curve.csv").read_text().splitlines()
    assert len(curve) >= 2 and float(curve[1].split(",")[2]) > 150  # the periodic evaluation plays Yahtzee too
    # Neither a resume nor a fine-tuning run may carry the model into other rules with the same observations.
    forced = "env.rules=yahtzee_forced_joker"
    error = train_main(
        "--config",
        "configs/yahtzee_quick.yaml",
        "--runs-dir",
        str(tmp_path),
        "name=tuned",
        *TINY,
        forced,
        f"ppo.init_from={run / 'model.zip'}",
    )
    assert "\n" not in error and "was trained on the 'yahtzee' rules, but this game plays 'yahtzee_forced_joker'" in error
    for final in ("model.zip", "model.safetensors", "eval.json"):
        (run / final).unlink()
    error = train_main("--resume", str(run), forced)
    assert "\n" not in error and "was trained on the 'yahtzee' rules, but this game plays 'yahtzee_forced_joker'" in error
