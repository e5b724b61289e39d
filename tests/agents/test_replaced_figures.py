"""Figures that optimal partly made say so: evaluations, tournaments and benchmark results count the games in which
the guard (:mod:`agents.policies.guard`) replaced a policy that could not choose.

The failing policy plays as ``optimal`` and raises late in some games (those whose batch seed is a multiple of
``EVERY``, once fewer than ``OPEN_ROWS`` rows are open): its figures are then optimal's to the point, which is how a
broken model looks nearly optimal when nothing says it was replaced.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from agents import registry
from agents.benchmark import run as bench_run
from agents.benchmark.results import ResultsError, load_results, read_results
from agents.evaluate import evaluate_policies
from agents.evaluate import main as evaluate_main
from agents.evaluation.tournament import main_table, run_table
from agents.policies.policy import OptimalPolicy
from agents.registry import PolicySpec, make_policy
from yacht_env.rules import YACHT
from yacht_env.seeding import seat_seed

EVERY = 3
OPEN_ROWS = 6  # Yacht's 12 rows: the policy fails in turn 8 at the latest, so in every game it fails in


class FailsLate(OptimalPolicy):
    """``optimal``, except that in a game re-seeded with a multiple of ``every`` it raises once few rows are open."""

    def __init__(self, rules=None, encoding="flat", every: int = EVERY):
        super().__init__(rules, encoding)
        self.name = "fails-late"
        self.every = every
        self.failing = False

    def reset(self, seed=None):
        self.failing = seed is not None and seed % self.every == 0

    def act_batch(self, observations, action_masks):
        open_rows = np.bitwise_count(self.encoding.decode_batch(observations)[2].astype(np.uint64))
        if self.failing and (open_rows < OPEN_ROWS).any():
            raise RuntimeError("my network gave NaN")
        return super().act_batch(observations, action_masks)


@pytest.fixture(scope="module")
def registered():
    """``fails-late`` (some games) and ``fails-always`` (every game) as registered policies, built by name."""
    specs = [
        PolicySpec("fails-late", "fails late in some games", lambda name, rules, encoding, seed: FailsLate(rules, encoding)),
        PolicySpec("fails-always", "fails late in every game", lambda name, rules, encoding, seed: FailsLate(rules, encoding, 1)),
    ]
    for spec in specs:
        registry.register(spec)
    yield
    for spec in specs:
        del registry.POLICIES[spec.name]


def test_an_evaluation_counts_exactly_the_games_and_decisions_optimal_played(caplog):
    games, seed = 30, 7
    caplog.set_level("CRITICAL", logger="agents.policies.guard")
    summaries, logs = evaluate_policies({"fails-late": FailsLate(YACHT)}, games, seed, YACHT, batch_size=1)
    summary, log = summaries[0], logs["fails-late"]
    failing = (seed + np.arange(games)) % EVERY == 0  # each game is its own batch, re-seeded with its seed
    assert summary.replaced_games == failing.sum() == 10
    assert ((log.replaced_decisions > 0) == failing).all()
    assert (log.replaced_decisions[failing] >= YACHT.num_rows - OPEN_ROWS + 1).all()  # a decision a turn, at least
    assert (log.replaced_decisions[failing] < log.decisions[failing]).all()  # it chose until then
    assert summary.replaced_decisions == log.replaced_decisions.sum()
    np.testing.assert_array_equal(log.scores, logs["optimal"].scores)  # what makes it look optimal
    assert summaries[0].mean == pytest.approx(logs["optimal"].scores.mean())


def test_a_policy_never_replaced_counts_none():
    summaries, _ = evaluate_policies({"greedy": make_policy("greedy", rules=YACHT)}, 8, 0, YACHT, batch_size=4)
    assert summaries[0].replaced_games == summaries[0].replaced_decisions == 0


def test_the_evaluate_command_says_so_under_the_table_in_the_json_and_on_stderr(registered, tmp_path, capsys):
    out = tmp_path / "figures.json"
    argv = ["--policy", "fails-late", "--policy", "greedy", "--games", "12", "--seed", "3", "--batch-size", "1"]
    evaluate_main([*argv, "--no-progress", "--json", str(out)])
    captured = capsys.readouterr()
    note = "fails-late was replaced by optimal in 4 of 12 games ("
    assert note in captured.out and "its figures include optimal's play" in captured.out
    assert f"warning: {note}" in captured.err
    policies = {row["policy"]: row for row in json.loads(out.read_text())["policies"]}
    assert policies["fails-late"]["replaced_games"] == 4 and policies["fails-late"]["replaced_decisions"] > 0
    assert policies["greedy"]["replaced_games"] == 0
    assert "greedy was replaced" not in captured.out + captured.err


def test_a_tournament_counts_each_policys_replaced_games(caplog):
    caplog.set_level("CRITICAL", logger="agents.policies.guard")
    deals, seed = 12, 4
    policies = [make_policy("optimal", rules=YACHT), FailsLate(YACHT)]
    result, log = run_table(policies, ["optimal", "fails-late"], 2 * deals, seed, YACHT, batch_size=2)
    # one deal a batch: deal d re-seeds policy i with seat_seed(seed + d, i); the deal's two games both reach late turns
    failing = np.array([seat_seed(seed + d, 1) % EVERY == 0 for d in range(deals)])
    optimal, late = result.standings
    assert optimal.replaced_games == optimal.replaced_decisions == 0
    assert late.replaced_games == 2 * failing.sum() == 8
    assert ((log.replaced[:, 1] > 0) == np.repeat(failing, 2)).all()
    assert late.replaced_decisions == log.replaced[:, 1].sum()


class FailsAtTheLastRow(FailsLate):
    """``fails-late`` failing only at the last decision of a game: one row open and no roll left."""

    def act_batch(self, observations, action_masks):
        _, rolls_left, open_bits = self.encoding.decode_batch(observations)
        if self.failing and ((np.bitwise_count(open_bits.astype(np.uint64)) == 1) & (rolls_left == 0)).any():
            raise RuntimeError("my network gave NaN")
        return OptimalPolicy.act_batch(self, observations, action_masks)


def test_a_game_in_which_optimal_made_only_the_last_decision_counts_as_replaced(caplog):
    caplog.set_level("CRITICAL", logger="agents.policies.guard")
    deals, seed = 12, 4
    policies = [make_policy("optimal", rules=YACHT), FailsAtTheLastRow(YACHT)]
    result, log = run_table(policies, ["optimal", "at-the-end"], 2 * deals, seed, YACHT, batch_size=2)
    failing = np.repeat([seat_seed(seed + d, 1) % EVERY == 0 for d in range(deals)], 2)
    # a deal's two games are one batch: the game at its last row has that decision replaced, the other the rest of its own
    assert ((log.replaced[:, 1] > 0) == failing).all() and (log.replaced[failing, 1] == 1).sum() == failing.sum() // 2
    late = result.standings[1]
    assert late.replaced_games == failing.sum() == 8 and late.replaced_decisions == log.replaced[:, 1].sum()


def test_the_table_command_says_so_under_the_table_in_the_json_and_on_stderr(registered, tmp_path, capsys):
    out = tmp_path / "table.json"
    main_table("greedy,fails-always", 8, 0, 4, str(out), show_progress=False, grade=False)
    captured = capsys.readouterr()
    note = "fails-always was replaced by optimal in 8 of 8 games ("
    assert note in captured.out and f"warning: {note}" in captured.err
    standings = {row["policy"]: row for row in json.loads(out.read_text())["standings"]}
    assert standings["fails-always"]["replaced_games"] == 8 and standings["greedy"]["replaced_games"] == 0


def test_a_benchmark_run_replaced_is_marked_in_its_file_and_never_aggregated(registered, tmp_path, capsys):
    bench_run.main(["--track", "yacht-solo-20k", "--policy", "fails-always", "--method", "broken", "--out", str(tmp_path)])
    path = tmp_path / "yacht-solo-20k" / "broken" / "seed0.json"
    assert read_results(path).evaluation.replaced_games == 1_000  # every evaluation game reaches turn 8
    assert "warning: fails-always was replaced by optimal in 1,000 of 1,000 games" in capsys.readouterr().err
    with pytest.raises(ResultsError, match=r"replaced by optimal in 1,000 of 1,000 evaluation games.*not aggregated$"):
        load_results([tmp_path])


def test_a_results_file_without_the_count_reads_as_never_replaced_and_a_count_beyond_the_games_is_refused(tmp_path):
    bench_run.main(["--track", "yacht-solo-20k", "--policy", "optimal", "--method", "optimal", "--out", str(tmp_path)])
    path = tmp_path / "yacht-solo-20k" / "optimal" / "seed0.json"
    data = json.loads(path.read_text())
    assert data["evaluation"].pop("replaced_games") == 0
    path.write_text(json.dumps(data))
    assert read_results(path).evaluation.replaced_games == 0 and len(load_results([path])) == 1
    data["evaluation"]["replaced_games"] = 1_001
    path.write_text(json.dumps(data))
    with pytest.raises(ResultsError, match="evaluation.replaced_games 1,001 exceeds its games 1,000"):
        read_results(path)
