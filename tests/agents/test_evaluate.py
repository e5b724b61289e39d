"""The evaluation harness: common random numbers, exact regret, the figures, the command line."""

import dataclasses
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from agents.evaluate import (
    distribution_rows,
    evaluate,
    evaluate_policies,
    five_alike_row,
    mean_ci,
    play_games,
    print_distribution_table,
    print_sheet_table,
    print_table,
)
from agents.evaluate import main as evaluate_main
from agents.policies.policy import OptimalPolicy
from agents.registry import make_policy
from agents.solvers.optimal import expected_score, solve
from yacht_env import YachtEnv
from yacht_env.rules import YACHT, YAHTZEE, Category, RuleSet, rule_set

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", ["greedy", "optimal"])
def test_batched_games_are_the_single_env_games_of_the_same_seeds(name):
    """Game g of the harness is Yacht-v0 reset with seed + g, played move for move."""
    policy = make_policy(name)
    log = play_games(policy, games=40, seed=123, batch_size=16)
    solution = solve()
    for g in range(40):
        env = YachtEnv()
        obs, info = env.reset(seed=123 + g)
        total = regret = decisions = 0
        terminated = False
        while not terminated:
            action = policy.act(obs, info["action_mask"])
            q = solution.q_values_batch(*[np.array([v]) for v in env.state])[0]
            regret += q.max() - q[action]
            decisions += 1
            obs, reward, terminated, truncated, info = env.step(action)
            total += reward
        assert log.scores[g] == total
        assert log.decisions[g] == decisions
        assert log.regret[g] == pytest.approx(regret, abs=1e-9)


def test_every_policy_sees_the_same_dice():
    """Two different policies, same seeds: the first roll of every game is the same."""
    seen = {}
    for name in ("random", "optimal"):
        policy = make_policy(name)
        first_rolls = []
        original = policy.act_batch

        def act_batch(obs, masks, original=original, first_rolls=first_rolls):
            if not first_rolls:
                first_rolls.append(np.asarray(obs)[:, :5].copy())
            return original(obs, masks)

        policy.act_batch = act_batch
        play_games(policy, games=64, seed=7)
        seen[name] = first_rolls[0]
    np.testing.assert_array_equal(seen["random"], seen["optimal"])


def test_figures_are_consistent():
    summaries, logs = evaluate(["random", "greedy", "optimal"], games=3000, seed=0)
    by_name = {s.policy: s for s in summaries}
    optimal, greedy, random = by_name["optimal"], by_name["greedy"], by_name["random"]
    assert optimal.regret_per_decision == 0 and optimal.diff_to_optimal == 0
    assert abs(optimal.mean - expected_score()) <= 2.576 * optimal.std / np.sqrt(optimal.games)  # 99% band
    assert random.mean < greedy.mean < optimal.mean + 1
    for s in summaries:
        assert s.ci95[0] <= s.mean <= s.ci95[1]
        assert s.percent_of_optimal == pytest.approx(100 * s.mean / expected_score())
    # The expected score gap equals the expected regret per game: the paired difference and the
    # regret must agree within their confidence intervals.
    assert greedy.diff_ci95[0] - 1.0 <= -greedy.regret_per_game <= greedy.diff_ci95[1] + 1.0
    assert greedy.regret_per_game_ci95[1] - greedy.regret_per_game_ci95[0] < greedy.diff_ci95[1] - greedy.diff_ci95[0]


def test_report_tables_give_long_policy_names_in_full(capsys):
    """A model's path is too wide for the tables' policy column (rich cut it to ``ppo:runs/quick/model.safeten…``)."""
    summaries, _ = evaluate(["greedy", "random"], games=20, seed=0)
    long_name = "ppo:runs/a-run-with-a-long-name/model.safetensors"
    summaries = [dataclasses.replace(summaries[0], policy=long_name), summaries[1]]
    print_table(summaries, expected_score(), 20, 0)
    print_sheet_table(summaries)
    out = capsys.readouterr().out
    assert "…" not in out
    assert out.count(f"[1] {long_name}\n") == 2  # under each report, one line, ready to copy
    assert "│ ppo [1] " in out and "│ random " in out


def cells(line: str) -> list[str]:
    """The cells of one line of a rich table, its header's or a row's, stripped."""
    return [cell.strip() for cell in re.split("[│┃]", line)[1:-1]]


def test_the_distribution_table_heads_each_quantile_by_its_percent_and_prints_the_games_quantiles(capsys):
    _, logs = evaluate(["greedy"], games=20, seed=0)
    rows = distribution_rows(logs, ["greedy"])
    print_distribution_table(rows, 20)
    lines = capsys.readouterr().out.splitlines()
    header = next(line for line in lines if line.startswith("┃ policy"))
    thresholds = list(rows[0]["at_least"])
    assert cells(header) == ["policy", "q10", "q25", "q50", "q75", "q90"] + [f"P(≥{t})" for t in thresholds]
    greedy = next(line for line in lines if line.startswith("│ greedy "))
    scores = logs["greedy"].scores
    quantiles = [f"{np.quantile(scores, q, method='inverted_cdf'):.0f}" for q in (0.1, 0.25, 0.5, 0.75, 0.9)]
    shares = [f"{100 * (scores >= int(t)).mean():.2f}%" for t in thresholds]
    assert cells(greedy)[1:] == quantiles + shares


def test_a_policy_name_wider_than_the_terminal_is_printed_on_one_line_to_copy():
    from rich.console import Console

    from agents.evaluate import print_policy_notes

    console = Console(width=40, record=True)
    note = "[1] ppo:" + "/".join(["a-folder-with-a-long-name"] * 6) + "/model.safetensors"
    print_policy_notes(console, [note, "[2] plan2:yacht"])
    assert console.export_text() == f"{note}\n[2] plan2:yacht\n"


def test_the_regret_by_turn_table_heads_a_column_for_each_turn(capsys):
    summaries, _ = evaluate(["greedy"], games=4, seed=0)
    print_sheet_table(summaries)
    lines = capsys.readouterr().out.splitlines()
    title = next(i for i, line in enumerate(lines) if "regret per game in each turn" in line)
    header = next(line for line in lines[title:] if line.startswith("┃"))
    assert cells(header) == ["policy", *map(str, range(1, 13))]  # Yacht's 12 turns


def test_the_sheet_table_gives_the_bonus_and_yahtzee_rates_of_the_games_in_percent_with_their_intervals(capsys):
    summaries, logs = evaluate(["greedy"], games=40, seed=0, rules="yahtzee")
    print_sheet_table(summaries, "yahtzee")
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("│ greedy "))
    log = logs["greedy"]

    def percent(games):
        mean, low, high = mean_ci(games.astype(float), clip=(0, 1))
        return f"{100 * mean:.2f}% [{100 * low:.2f}, {100 * high:.2f}]"

    bonus = percent(log.upper_total >= rule_set("yahtzee").bonus_threshold)
    assert cells(row)[:4] == [
        "greedy",
        f"{np.median(log.scores):.0f}",
        bonus,
        percent(log.five_alike_scored),
    ]
    assert "[0.00, " in bonus  # its interval clipped at 0: the low end is read as a rate too


def test_the_regret_per_kind_of_choice_adds_up_to_the_regret_per_decision():
    games = 16
    (summary,), logs = evaluate_policies({"greedy": make_policy("greedy")}, games, 3, YACHT, batch_size=8)
    rerolls, rows = logs["greedy"].decisions_by_kind.sum(axis=0)
    assert rerolls + rows == summary.decisions_per_game * games and rerolls > 0 and rows == games * YACHT.num_rows
    by_kind = summary.regret_per_reroll_decision * rerolls + summary.regret_per_row_decision * rows
    assert by_kind == pytest.approx(summary.regret_per_decision * (rerolls + rows), rel=1e-12)
    assert summary.regret_per_reroll_decision > 0 and summary.regret_per_row_decision > 0


def test_without_a_seed_the_games_are_those_of_seed_0():
    def scores(**seed):
        _, logs = evaluate_policies({"greedy": make_policy("greedy")}, 16, rules=YACHT, batch_size=8, **seed)
        return logs["greedy"].scores

    unseeded = scores()
    np.testing.assert_array_equal(unseeded, scores(seed=0))
    assert not np.array_equal(unseeded, scores(seed=1))  # the seed reaches the dice


def test_the_five_alike_row_is_one_that_pays_for_five_alike_and_nothing_else():
    assert five_alike_row(YACHT) == YACHT.category_index["yacht"]
    assert five_alike_row(YAHTZEE) == YAHTZEE.category_index["yahtzee"]
    uppers = tuple(category for category in YACHT.categories if category.upper)
    curse = Category("curse", lambda dice, counts: -10 if 5 in counts else 0)  # five alike costs here: pays nothing
    gamble = Category("gamble", lambda dice, counts: 50 if 5 in counts else -5)  # it costs on every other hand
    for rows in (uppers, (*uppers, curse), (*uppers, gamble)):
        rules = RuleSet("own", rows)
        assert five_alike_row(rules) == -1
        (summary,), _ = evaluate_policies({"greedy": make_policy("greedy", rules=rules)}, 8, 0, rules, batch_size=8)
        assert summary.five_alike_rate is None and summary.five_alike_ci95 is None


def test_the_share_at_least_a_threshold_counts_the_games_that_scored_it_exactly():
    from types import SimpleNamespace

    scores = np.array([250, 300, 350, 249, 299, 351, 400, 100])  # Yahtzee's thresholds: 250, 300 and 350 points
    (row,) = distribution_rows({"p": SimpleNamespace(scores=scores)}, ["p"], "yahtzee")
    assert row["at_least"] == {"250": 6 / 8, "300": 4 / 8, "350": 3 / 8}


def test_a_plot_without_matplotlib_is_refused_before_the_games_naming_the_extra(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if not installed: its import fails
    with pytest.raises(SystemExit) as exit:
        evaluate_main(["--policy", "greedy", "--games", "20", "--no-progress", "--plot", str(tmp_path / "e.png")])
    assert exit.value.code == 2
    out, err = capsys.readouterr()
    assert err == "error: --plot needs matplotlib: pip install 'yacht-rl[train]'\n" and out == ""
    assert list(tmp_path.iterdir()) == []


def test_the_plot_is_9_by_5_inches_at_120_dpi(tmp_path):
    from PIL import Image

    evaluate_main(["--policy", "greedy", "--games", "20", "--no-progress", "--plot", str(tmp_path / "e.png")])
    with Image.open(tmp_path / "e.png") as image:
        assert image.size == (9 * 120, 5 * 120) and [round(dots) for dots in image.info["dpi"]] == [120, 120]


def test_the_plots_bins_hold_every_game_down_to_the_lowest_and_up_to_the_highest_score(tmp_path, monkeypatch):
    from matplotlib.axes import Axes

    from agents.evaluate import save_plot

    drawn, hist = [], Axes.hist
    monkeypatch.setattr(Axes, "hist", lambda axes, *args, **kwargs: drawn.append(hist(axes, *args, **kwargs)) or drawn[-1])
    _, logs = evaluate(["greedy"], games=20, seed=20)
    scores = logs["greedy"].scores
    assert (scores.max() - scores.min()) % 5 == 0  # the highest score falls on a bin's last edge: 98 and 218 here
    save_plot(tmp_path / "e.png", logs, ["greedy"], expected_score())
    ((counts, bins, _),) = drawn
    assert counts.sum() == 20 and bins[0] < scores.min() and scores.max() < bins[-1] and np.all(np.diff(bins) == 5)


def test_an_output_that_cannot_be_written_after_the_games_is_refused_in_one_line(tmp_path, monkeypatch, capsys):
    import agents.evaluate as evaluate_module
    from yacht_env.atomic_files import OutputError

    def disk_full(path, *args):
        raise OutputError(path, "No space left on device")

    monkeypatch.setattr(evaluate_module, "save_plot", disk_full)
    with pytest.raises(SystemExit) as exit_info:
        evaluate_main(["--policy", "greedy", "--games", "8", "--no-progress", "--plot", str(tmp_path / "e.png")])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err == f"error: cannot write {tmp_path / 'e.png'}: No space left on device\n"


def test_both_tables_set_the_names_to_the_left_and_the_figures_to_the_right(capsys):
    summaries, _ = evaluate(["greedy", "optimal"], games=4, seed=0)
    print_table(summaries, expected_score(), 4, 0)
    print_sheet_table(summaries)
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("│ greedy ")]
    assert len(rows) == 3  # the figures, the sheet, the regret by turn
    for row in rows:
        name, *figures = row.split("│")[1:-1]
        assert name == " greedy  "  # as wide as "optimal"
        assert all(cell.endswith(cell.strip() + " ") for cell in figures), row
    assert all(any(cell.startswith("  ") for cell in row.split("│")[2:-1]) for row in rows[:2])  # cells wider than figures


class ScoresAtOnce(OptimalPolicy):
    """Scores the first open row at every decision: it never re-rolls."""

    def act_batch(self, observations, action_masks):
        first_row = self.rules.dice.num_rerolls
        return np.asarray(action_masks)[:, first_row:].argmax(axis=1) + first_row


def test_a_policy_that_never_rerolls_has_no_regret_per_reroll_choice_rather_than_none_over_none():
    (summary,), _ = evaluate_policies({"scores-at-once": ScoresAtOnce(YACHT)}, 8, 0, YACHT, batch_size=8)
    assert summary.decisions_per_game == YACHT.num_rows  # one decision a turn: its row
    assert summary.regret_per_reroll_decision == 0.0 and summary.regret_per_row_decision > 0


def test_table_decisions_are_graded_unless_no_grade_is_given(capsys):
    # graded against the solved two-player game where it is computed; else the table says why it was not
    for extra, graded in (([], True), (["--no-grade"], False)):
        evaluate_main(["--table", "optimal,greedy", "--games", "4", "--no-progress", *extra])
        out = capsys.readouterr().out
        said = "decisions graded against the solved two-player game" in out or "decisions not graded in chances" in out
        assert said == graded, out


def test_mean_ci_matches_the_normal_formula():
    values = np.array([1.0, 2.0, 3.0, 4.0])
    mean, low, high = mean_ci(values)
    half = 1.959963984540054 * values.std(ddof=1) / 2
    assert (mean, low, high) == pytest.approx((2.5, 2.5 - half, 2.5 + half))


def test_command_line_writes_table_json_and_plot(tmp_path):
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "agents.evaluate",
            "--policy",
            "greedy",
            "--games",
            "200",
            "--seed",
            "5",
            "--json",
            str(tmp_path / "e.json"),
            "--plot",
            str(tmp_path / "e.png"),
            "--no-progress",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    assert "greedy" in result.stdout and "regret/decision" in result.stdout
    report = json.loads((tmp_path / "e.json").read_text())
    assert report["games"] == 200 and report["seed"] == 5
    assert report["optimal_expected_score"] == pytest.approx(expected_score())
    (greedy,) = report["policies"]
    assert set(greedy) >= {
        "mean",
        "std",
        "ci95",
        "percent_of_optimal",
        "diff_to_optimal",
        "diff_ci95",
        "regret_per_decision",
        "regret_per_game",
        "regret_per_game_ci95",
    }
    assert (tmp_path / "e.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("args, message", [(["--policy", "clever"], "unknown policy 'clever'"), (["--games", "1"], "--games")])
def test_command_line_rejects_bad_arguments(args, message):
    result = subprocess.run(
        [sys.executable, "-m", "agents.evaluate", *args, "--no-progress"], capture_output=True, text=True, cwd=ROOT
    )
    assert result.returncode == 2 and message in result.stderr and "Traceback" not in result.stderr


@pytest.mark.slow
def test_optimal_play_averages_the_expected_score_over_200k_games():
    log = play_games(make_policy("optimal"), games=200_000, seed=10_000_000)
    mean, low, high = mean_ci(log.scores)
    half99 = (high - mean) * 2.5758293035489 / 1.959963984540054
    assert abs(mean - expected_score()) <= half99
