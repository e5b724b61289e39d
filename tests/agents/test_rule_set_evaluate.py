"""The evaluation harness and tournaments under every rule set: regret graded with the sheet state."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from agents.evaluate import evaluate, play_games
from agents.evaluation.tournament import play_table, tournament
from agents.registry import make_policy
from agents.solvers.optimal import expected_score, solve
from tests.yacht_env.test_multiplayer import play_pettingzoo
from tests.yacht_env.test_rule_set_tables import OWN_RULES
from yacht_env import YachtEnv
from yacht_env.rules import RULE_SETS, rule_set
from yacht_env.table import pettingzoo_env as multiplayer

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.filterwarnings("ignore:Observation space for each agent probably should be")]


@pytest.mark.parametrize("name", ["yahtzee", "yatzy"])
def test_optimal_has_no_regret_and_reaches_the_expected_score(name):
    summaries, logs = evaluate(["greedy", "optimal"], games=2000, seed=0, rules=name)
    greedy, optimal = summaries
    optimum = expected_score(name)
    assert optimal.regret_per_decision == 0 and optimal.diff_to_optimal == 0
    assert abs(optimal.mean - optimum) <= 2.576 * optimal.std / np.sqrt(optimal.games)  # 99% band
    assert optimal.percent_of_optimal == pytest.approx(100 * optimal.mean / optimum)
    assert greedy.regret_per_decision > 0 and greedy.mean < optimal.mean
    # The expected score given away is the expected regret: the paired difference and the regret
    # per game (which counts the bonuses a decision forgoes) agree within their intervals.
    assert greedy.diff_ci95[0] - 1.0 <= -greedy.regret_per_game <= greedy.diff_ci95[1] + 1.0


@pytest.mark.parametrize("name", ["yahtzee_forced_joker", "yatzy"])
def test_regret_is_graded_on_the_games_own_sheet_state(name):
    """Game g of the harness is Yacht-v0 under the rules reset with seed + g; each decision's regret
    uses that game's upper subtotal and Yahtzee box."""
    rules = rule_set(name)
    policy = make_policy("greedy", rules=rules)
    log = play_games(policy, games=24, seed=55, rules=rules, batch_size=8)
    solution = solve(rules)
    for g in range(24):
        env = YachtEnv(rules=rules)
        obs, info = env.reset(seed=55 + g)
        total = regret = decisions = 0
        terminated = False
        while not terminated:
            action = policy.act(obs, info["action_mask"])
            q = solution.q_values_batch(*[np.array([v]) for v in (*env.state, *env.sheet_state)])[0]
            regret += q.max() - q[action]
            decisions += 1
            obs, reward, terminated, truncated, info = env.step(action)
            total += reward
        assert (log.scores[g], log.decisions[g]) == (total, decisions)
        assert log.regret[g] == pytest.approx(regret, abs=1e-9)
    assert log.regret.sum() > 0


def test_optimal_beats_greedy_at_a_yahtzee_table():
    result, log = tournament(["optimal", "greedy"], games=400, seed=0, rules="yahtzee")
    optimal, greedy = result.standings
    assert result.rules == log.rules == "yahtzee"
    assert optimal.win_rate > greedy.win_rate and optimal.win_rate_ci95[0] > 0.5
    assert optimal.mean_score > greedy.mean_score
    assert optimal.win_rate + greedy.win_rate == pytest.approx(1)


def test_tournament_games_are_the_pettingzoo_games_under_the_rules():
    rules = rule_set("yahtzee_forced_joker")
    policies = [make_policy(name, rules=rules) for name in ("optimal", "greedy")]
    totals = play_table(policies, games=4, seed=70, rules=rules)
    for game in range(4):
        deal, rotation = divmod(game, 2)
        seat_of = [(i + rotation) % 2 for i in range(2)]
        policy_at = {seat: i for i, seat in enumerate(seat_of)}
        env = multiplayer.env(num_players=2, reward_mode="score", rules=rules)
        own_width = env.unwrapped.encoding.own_width

        def choose(agent, observation):
            policy = policies[policy_at[int(agent.split("_")[1])]]
            return policy.act(observation["observation"][:own_width], observation["action_mask"])

        play_pettingzoo(env, choose, seed=70 + deal)
        assert totals[game].tolist() == [env.unwrapped.totals[f"player_{seat_of[i]}"] for i in range(2)]


def test_a_users_own_rule_set_is_evaluated_here_and_refused_on_ray():
    summaries, _ = evaluate(["greedy"], games=600, seed=1, rules=OWN_RULES)
    (greedy,) = summaries
    assert greedy.regret_per_decision > 0
    assert greedy.percent_of_optimal == pytest.approx(100 * greedy.mean / expected_score(OWN_RULES))
    result, log = tournament(["optimal", "greedy"], games=100, seed=1, rules=OWN_RULES)
    assert result.rules == "mini_yahtzee" and log.totals.shape == (100, 2)
    message = "rule set 'mini_yahtzee' is not one of the named rule sets .* cannot be sent to Ray workers"
    with pytest.raises(ValueError, match=message):
        evaluate(["greedy"], games=10, rules=OWN_RULES, on_ray=True)
    with pytest.raises(ValueError, match=message):
        tournament(["optimal", "greedy"], games=10, rules=OWN_RULES, on_ray=True)


def run_cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "agents.evaluate", *args, "--no-progress"], capture_output=True, text=True, cwd=ROOT
    )


def test_command_line_plays_a_named_rule_set(tmp_path):
    result = run_cli(
        "--rules",
        "yatzy",
        "--policy",
        "greedy",
        "--games",
        "200",
        "--seed",
        "3",
        "--json",
        str(tmp_path / "e.json"),
        "--plot",
        str(tmp_path / "e.png"),
    )
    assert result.returncode == 0, result.stderr
    assert "yatzy: 200 games" in result.stdout and f"optimal expected score {expected_score('yatzy'):.4f}" in result.stdout
    assert "exact distribution" not in result.stdout  # the exact distribution covers rows that score alone
    report = json.loads((tmp_path / "e.json").read_text())
    assert report["rules"] == "yatzy" and report["optimal_expected_score"] == pytest.approx(expected_score("yatzy"))
    assert [row["policy"] for row in report["score_distribution"]] == ["greedy"]
    assert list(report["score_distribution"][0]["at_least"]) == ["200", "250", "300"]
    assert report["policies"][0]["regret_per_decision"] > 0
    assert (tmp_path / "e.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    table = run_cli("--rules", "yahtzee", "--table", "optimal,greedy", "--games", "40", "--json", str(tmp_path / "t.json"))
    assert table.returncode == 0, table.stderr
    assert "yahtzee: 40 games at a table of 2" in table.stdout
    assert json.loads((tmp_path / "t.json").read_text())["rules"] == "yahtzee"


def test_every_title_names_the_rule_set_played():
    """Only the first table named its rules; the sheet, per-turn, distribution and head-to-head tables did not."""
    titles = (
        "20 games, seeds 0..19",
        "the sheet, and where the points are lost",
        "regret per game in each turn",
        "final-score distribution over the 20 games",
    )
    result = run_cli("--rules", "yahtzee", "--policy", "greedy", "--games", "20")
    assert result.returncode == 0, result.stderr
    for title in titles:
        assert f"yahtzee: {title}" in result.stdout, (title, result.stdout[-3000:])
    table = run_cli("--rules", "yahtzee", "--table", "optimal,greedy", "--games", "8")
    assert table.returncode == 0, table.stderr
    assert "yahtzee: head to head" in table.stdout and "yacht" not in table.stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (["--rules", "yahtze"], f"argument --rules: unknown rule set 'yahtze'; expected one of {', '.join(RULE_SETS)}"),
        (
            ["--rules", "yahtzee", "--policy", "target:250"],
            "error: rule set 'yahtzee' has an upper bonus, an extra-Yahtzee bonus or a joker",
        ),
        (
            ["--rules", "yahtzee", "--table", "win,optimal"],
            "the win and target:T policies cover only rule sets whose rows score on their own: yacht, yacht_exercism",
        ),
    ],
)
def test_command_line_refusals_under_a_rule_set_are_one_line(args, message):
    result = run_cli(*args, "--games", "10")
    assert result.returncode == 2 and message in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()[-1]) > 0 and message in result.stderr.strip().splitlines()[-1]


def test_a_model_is_evaluated_under_its_rules_alone_and_at_a_table():
    """The entry points training calls take the rules the model was trained on."""
    from sb3_contrib import MaskablePPO

    from agents.evaluate import evaluate_model
    from agents.evaluation.tournament import evaluate_model_at_table

    model = MaskablePPO("MlpPolicy", YachtEnv(rules="yatzy"), n_steps=64, batch_size=64, n_epochs=1, seed=0, device="cpu")
    summaries = evaluate_model(model, "flat", games=40, seed=0, reference=["greedy"], rules="yatzy")
    assert [s.policy for s in summaries] == ["ppo", "greedy"]
    assert all(s.percent_of_optimal == pytest.approx(100 * s.mean / expected_score("yatzy")) for s in summaries)
    result, log = evaluate_model_at_table(model, "ppo", ["greedy"], games=8, seed=0, rules="yatzy")
    assert result.rules == "yatzy" and result.table == ["ppo", "greedy"] and log.totals.shape == (8, 2)


def test_videos_are_recorded_under_the_rules(tmp_path, monkeypatch):
    pytest.importorskip("moviepy")
    import gymnasium as gym

    from agents.evaluation import video

    played = []
    make = gym.make
    monkeypatch.setattr(video.gym, "make", lambda *args, **kwargs: played.append(kwargs["rules"]) or make(*args, **kwargs))
    (path,) = video.record_games(["greedy"], tmp_path, games=1, seed=2, rules="yatzy")
    assert played == [rule_set("yatzy")] and path.stat().st_size > 0


@pytest.mark.parametrize("name", ["yacht", "yahtzee", "yatzy"])
def test_sheet_figures_are_the_final_sheets_of_the_same_games(name):
    """The bonus and five-alike rates and the regret split are read off the games the single env plays."""
    rules = rule_set(name)
    policy = make_policy("greedy", rules=rules)
    log = play_games(policy, games=60, seed=300, rules=rules)
    solution = solve(rules)
    upper = [c for c, category in enumerate(rules.categories) if category.upper]
    five_alike = [c for c, category in enumerate(rules.categories) if category.name in ("yacht", "yahtzee", "yatzy")]
    for g in range(60):
        env = YachtEnv(rules=rules)
        obs, info = env.reset(seed=300 + g)
        by_kind, by_turn, terminated = np.zeros(2), np.zeros(rules.num_turns), False
        while not terminated:
            action = int(policy.act(obs, info["action_mask"]))
            position = env.state + (env.sheet_state if rules.has_bonus_or_joker else ())
            q = solution.q_values_batch(*(np.array([value]) for value in position))[0]
            by_kind[int(action >= rules.dice.num_rerolls)] += q.max() - q[action]
            by_turn[env.turn - 1] += q.max() - q[action]
            obs, _, terminated, _, info = env.step(action)
        assert log.scores[g] == env.total
        assert log.upper_total[g] == sum(env.sheet[c] for c in upper)
        assert log.five_alike_scored[g] == (env.sheet[five_alike[0]] == 50)
        np.testing.assert_allclose(log.regret_by_kind[g], by_kind, atol=1e-9)
        np.testing.assert_allclose(log.regret_by_turn[g], by_turn, atol=1e-9)
        assert log.decisions_by_kind[g, 1] == rules.num_turns and log.decisions_by_kind[g].sum() == log.decisions[g]


def test_the_optimal_policy_earns_the_bonus_more_often_than_greedy_and_the_rates_have_intervals():
    summaries, logs = evaluate(["greedy", "optimal"], games=2000, seed=0, rules="yahtzee")
    greedy, optimal = summaries
    assert optimal.upper_bonus_rate == pytest.approx(np.mean(logs["optimal"].upper_total >= 63))
    assert greedy.upper_bonus_ci95[1] < optimal.upper_bonus_ci95[0]
    assert optimal.upper_bonus_ci95[0] < optimal.upper_bonus_rate < optimal.upper_bonus_ci95[1]
    assert optimal.regret_per_reroll_decision == optimal.regret_per_row_decision == 0
    assert sum(greedy.regret_by_turn) == pytest.approx(greedy.regret_per_game)
    yacht_summary = evaluate(["greedy"], games=200, seed=0, rules="yacht")[0][0]
    assert yacht_summary.upper_bonus_rate is None and yacht_summary.five_alike_rate is not None
