"""The benchmark protocol: tracks, the results file and its checks, the run command, and the aggregates."""

from __future__ import annotations

import json
import math
import re
import shutil
from pathlib import Path
from types import SimpleNamespace
from typing import get_args

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agents.benchmark import run as bench_run
from agents.benchmark.results import MAX_BYTES, ResultsError, RunResult, load_results, read_results, write_results
from agents.benchmark.tracks import EVAL_SEED, TRACKS, TRAINING_SEEDS, track
from agents.registry import find_policy
from agents.solvers.optimal import expected_score
from agents.training.config import ConfigError, TrainConfig, load_config

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory):
    """`optimal` and `greedy` run on the smoke track by the command itself: their results files."""
    out = tmp_path_factory.mktemp("results")
    for policy in ("optimal", "greedy"):
        bench_run.main(["--track", "yacht-solo-20k", "--policy", policy, "--method", policy, "--out", str(out)])
    return out


def test_the_tracks_are_the_rules_at_each_budget_with_five_seeds_and_deals_no_training_seed_reaches():
    ranked = {name for name, fixed in TRACKS.items() if fixed.ranked}
    assert ranked == {f"{r}-solo-{b}" for r in ("yacht", "yahtzee", "yatzy") for b in ("1m", "10m")} | {
        "yacht-duel-1m",
        "yacht-duel-10m",
    }
    assert TRAINING_SEEDS == (0, 1, 2, 3, 4)
    assert EVAL_SEED >= 2**32  # training's seeds are 32-bit: no evaluation deal is dealt in training
    assert track("yatzy-solo-10m").budget == 10_000_000 and track("yacht-duel-1m").seats == 2
    assert track("yahtzee-solo-1m").max_steps_per_game() == 13 * 3


def test_an_unknown_track_is_refused_in_one_line_naming_the_tracks():
    with pytest.raises(ValueError, match=r"^unknown track 'yacht-solo-2m': one of yacht-solo-1m, ") as error:
        track("yacht-solo-2m")
    assert "\n" not in str(error.value)


@settings(max_examples=30, deadline=None)
@given(n_steps=st.integers(1, 4096), num_envs=st.integers(1, 64), name=st.sampled_from(sorted(TRACKS)))
def test_a_ppo_run_stays_within_the_budget_by_whole_rollouts(n_steps, num_envs, name):
    fixed = track(name)
    config = load_config("configs/benchmark/ppo_plain.yaml", [f"ppo.n_steps={n_steps}", f"env.num_envs={num_envs}"])
    rollout = n_steps * num_envs
    if rollout > fixed.budget:
        with pytest.raises(bench_run.BenchmarkError, match="exceeds the budget"):
            bench_run.budget_overrides(config, fixed)
        return
    overrides, unit, steps, most = bench_run.budget_overrides(config, fixed)
    assert unit == "env_steps" and steps == most and steps % rollout == 0
    assert fixed.budget - rollout < steps <= fixed.budget  # the most whole rollouts that fit
    assert overrides == [f"ppo.total_timesteps={steps}"]


@pytest.mark.parametrize("name", ["yacht-solo-1m", "yahtzee-solo-10m", "yatzy-solo-20k"])
def test_a_planning_run_plays_the_games_whose_most_steps_fit_the_budget(name):
    fixed = track(name)
    _, unit, games, most = bench_run.budget_overrides(load_config("configs/benchmark/plan.yaml"), fixed)
    per_game = fixed.max_steps_per_game()
    assert unit == "games" and most == games * per_game
    assert most <= fixed.budget < (games + 1) * per_game


@settings(max_examples=20, deadline=None)
@given(sizes=st.sets(st.integers(2, 5), min_size=1), name=st.sampled_from(sorted(TRACKS)))
def test_a_table_planning_run_counts_every_game_at_its_largest_table(sizes, name):
    # a planN run plays its self-play games at every size of plan.table_sizes: each seat of the largest takes steps
    fixed = track(name)
    table = [f"env.num_players={min(sizes)}", f"env.opponents={['optimal'] * (min(sizes) - 1)}"]
    config = load_config("configs/planN_yacht.yaml", [f"plan.table_sizes={sorted(sizes)}", *table])
    _, unit, games, most = bench_run.budget_overrides(config, fixed)
    per_game = fixed.max_steps_per_game() * max(sizes)
    assert unit == "games" and most == games * per_game
    assert most <= fixed.budget < (games + 1) * per_game


ALGORITHM_CONFIGS = {
    "ppo": "configs/benchmark/ppo_plain.yaml",
    "dqn": "configs/benchmark/dqn.yaml",
    "plan": "configs/benchmark/plan.yaml",
    "plan2": "configs/benchmark/plan2.yaml",
    "planN": "configs/planN_yacht.yaml",
}
SMOKE_TRACKS = sorted(name for name, fixed in TRACKS.items() if not fixed.ranked)


def test_every_algorithm_has_a_config_here():
    assert set(ALGORITHM_CONFIGS) == set(get_args(TrainConfig.model_fields["algorithm"].annotation))


@pytest.mark.parametrize("algorithm", sorted(ALGORITHM_CONFIGS))
@pytest.mark.parametrize("name", SMOKE_TRACKS)
def test_an_algorithm_runs_on_a_track_at_its_table_and_is_refused_in_one_line_elsewhere(algorithm, name, tmp_path):
    fixed, alone = track(name), algorithm == "plan"  # plan2 and planN train for a table; ppo and dqn for either
    argv = ["--track", name, "--config", ALGORITHM_CONFIGS[algorithm], "--method", "m"]
    argv += ["--out", str(tmp_path / "out"), "--runs-dir", str(tmp_path / "runs")]
    if algorithm not in ("ppo", "dqn") and alone != (fixed.seats == 1):
        with pytest.raises(SystemExit) as exit:
            bench_run.main(argv)
        message = str(exit.value.code)
        where = "solitaire" if fixed.seats == 1 else "yacht at a table of 2 against optimal"
        assert message.startswith(f"error: track {name} is {where}") and f"algorithm '{algorithm}'" in message, message
        assert "\n" not in message and not (tmp_path / "out").exists() and not (tmp_path / "runs").exists()
        return
    *_, trained = bench_run.track_overrides(ALGORITHM_CONFIGS[algorithm], fixed, 0, [])
    model = tmp_path / "model.safetensors"
    policy = bench_run.trained_policy(trained, model, fixed)  # the registry's policy of the run's model file
    assert trained == algorithm and policy == f"{algorithm}:{model}"
    find_policy(policy).check_plays_at(policy, fixed.seats)


def baseline_entries() -> list[tuple[str, str, str]]:
    """(track pattern, method, config) of every baseline tools/benchmark_baselines.sh runs."""
    script = (ROOT / "tools" / "benchmark_baselines.sh").read_text()
    found = []
    for pattern, lists in re.findall(r"^\s*(\*[^)]*)\)\s*(.*?);;", script, flags=re.M):
        for entry in re.findall(r"([A-Za-z0-9.+-]+):(configs/\S+\.yaml)", lists):
            found.append((pattern, *entry))
    return found


def test_every_baseline_the_script_runs_is_set_to_each_of_its_ranked_tracks():
    entries = baseline_entries()
    # each track has the four kinds of baseline: a planning agent, the masked DQN, a recipe's PPO and a plain PPO
    duel = {method for pattern, method, _ in entries if "duel" in pattern}
    solo = {method for pattern, method, _ in entries if "duel" not in pattern}
    assert solo == {"plan", "dqn", "ppo-recipe", "ppo-plain"} and duel == {"plan2", "dqn", "ppo-duel", "ppo-plain"}
    for pattern, method, config in entries:
        tracks = [fixed for fixed in TRACKS.values() if fixed.ranked and (fixed.seats > 1) == ("duel" in pattern)]
        for fixed in tracks:
            *_, steps, algorithm = bench_run.track_overrides(config, fixed, 0, [])
            assert steps <= fixed.budget, (method, fixed.name)
            bench_run.trained_policy(algorithm, ROOT / "model.safetensors", fixed)  # plays at the track's table


@pytest.mark.slow
def test_a_table_planner_trains_and_is_evaluated_on_the_duel_track(tmp_path):
    out, runs = tmp_path / "out", tmp_path / "runs"
    argv = ["--track", "yacht-duel-20k", "--config", ALGORITHM_CONFIGS["planN"], "--method", "planN", "--seeds", "0"]
    bench_run.main([*argv, "--out", str(out), "--runs-dir", str(runs), "plan.games_per_iteration=50"])
    result = read_results(out / "yacht-duel-20k" / "planN" / "seed0.json")
    model = runs / "yacht-duel-20k" / "planN" / "seed0" / "model.safetensors"
    assert result.policy == f"planN:{model}" and result.training.algorithm == "planN"
    assert result.training.env_steps_at_most == result.training.done * 36 * 5 <= 20_000  # tables of up to 5 seats


def test_a_track_run_of_a_config_is_set_to_the_track(tmp_path):
    overrides, _, _, _, algorithm = bench_run.track_overrides("configs/benchmark/ppo_duel.yaml", track("yacht-duel-1m"), 3, [])
    config = load_config("configs/benchmark/ppo_duel.yaml", overrides)
    assert algorithm == "ppo" and config.seed == 3 and config.env.rules == "yacht"
    assert config.env.num_players == 2 and config.env.opponents == ["optimal"]
    assert config.run.eval_seed < EVAL_SEED  # the run's own evaluations never see the track's deals


def test_optimal_play_has_no_regret_and_greedy_the_regret_its_score_falls_short_by(evaluated):
    optimal = read_results(evaluated / "yacht-solo-20k" / "optimal" / "seed0.json")
    assert optimal.evaluation.regret_per_game == 0.0 and optimal.evaluation.normalized_regret == 0.0
    assert optimal.evaluation.normalized_regret_ci95 == (0.0, 0.0)
    assert optimal.evaluation.optimum == expected_score("yacht") and optimal.evaluation.games == 1_000
    greedy = read_results(evaluated / "yacht-solo-20k" / "greedy" / "seed0.json").evaluation
    assert math.isclose(greedy.normalized_regret, greedy.regret_per_game / expected_score("yacht"))
    # Regret per game is an unbiased estimate of the optimum minus the expected score, on the same deals: the
    # paired difference of greedy's and optimal's scores, minus the regret, is zero but for the dice.
    low, high = greedy.regret_per_game_ci95
    assert 0 < low < greedy.regret_per_game < high
    assert abs((optimal.evaluation.mean - greedy.mean) - greedy.regret_per_game) < 3 * (high - low)


def test_a_finished_seed_is_skipped_and_its_file_left_as_it_was(evaluated, capsys):
    path = evaluated / "yacht-solo-20k" / "greedy" / "seed0.json"
    before = path.read_bytes()
    bench_run.main(["--track", "yacht-solo-20k", "--policy", "greedy", "--method", "greedy", "--out", str(evaluated)])
    assert path.read_bytes() == before and "seed 0 is done" in capsys.readouterr().out


def tampered(evaluated, tmp_path, change) -> str:
    """The message of reading the greedy results file after ``change(data)``."""
    data = json.loads((evaluated / "yacht-solo-20k" / "greedy" / "seed0.json").read_text())
    change(data)
    path = tmp_path / "run.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ResultsError) as error:
        read_results(path)
    message = str(error.value)
    assert "\n" not in message and message.startswith(f"results file {str(path)!r}")
    return message


def setter(*keys_and_value):
    *keys, value = keys_and_value

    def change(data):
        node = data
        for key in keys[:-1]:
            node = node[key]
        node[keys[-1]] = value

    return change


BAD = [
    (setter("version", 2), "format version 2 is not read here"),
    (setter("track", "yacht-solo-2m"), "unknown track"),
    (setter("format", "other"), "is not a benchmark results file"),
    (setter("evaluation", "games", 999), "evaluation.games is 999, track yacht-solo-20k fixes 1000"),
    (setter("evaluation", "seed", 0), "evaluation.seed is 0"),
    (setter("evaluation", "rules", "yahtzee"), "evaluation.rules is 'yahtzee'"),
    (setter("evaluation", "optimum", 170.0), "evaluation.optimum is 170.0"),
    (setter("evaluation", "normalized_regret", 0.01), "evaluation.normalized_regret is 0.01, its figures make it"),
    (setter("evaluation", "mean_ci95", [0.0, 1.0]), "evaluation.mean_ci95 [0.0, 1.0] does not hold"),
    (setter("training", "env_steps_at_most", 20_001), "exceeds the budget 20,000"),
    (setter("training", "done", "3"), "training.done: Input should be a valid integer"),
    (setter("evaluation", "extra", 1), "evaluation.extra: unknown key"),
    (setter("method", "a b"), "method: String should match pattern"),
    (lambda data: data.pop("evaluation"), "evaluation: missing"),
]


@pytest.mark.parametrize("change,problem", BAD)
def test_a_results_file_that_disagrees_with_its_track_or_itself_is_refused_naming_the_field(evaluated, tmp_path, change, problem):
    assert problem in tampered(evaluated, tmp_path, change)


def test_a_results_file_with_many_problems_is_told_by_the_first_1000_characters_of_their_list(evaluated, tmp_path):
    def many_unknown_keys(data):
        data["evaluation"].update({f"extra_{k:03d}": 1 for k in range(100)})

    message = tampered(evaluated, tmp_path, many_unknown_keys)
    problems = "; ".join(f"evaluation.extra_{k:03d}: unknown key" for k in range(100))
    assert message == f"results file {str(tmp_path / 'run.json')!r}: {problems[:1_000]}"


def test_a_results_file_that_is_not_json_or_too_large_is_refused_in_one_line(tmp_path):
    cases = {"nan.json": '{"format": NaN}', "text.json": "not json", "bytes.json": b"\xff\xfe"}
    for name, content in cases.items():
        path = tmp_path / name
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
        with pytest.raises(ResultsError, match="is not JSON text") as error:
            read_results(path)
        assert "\n" not in str(error.value)
    big = tmp_path / "big.json"
    big.write_bytes(b" " * (MAX_BYTES + 1))
    with pytest.raises(ResultsError, match=f"a results file is at most {MAX_BYTES:,}"):
        read_results(big)


def test_two_files_of_one_run_are_refused_and_a_folder_is_read_whole(evaluated, tmp_path):
    runs = load_results([evaluated])
    assert sorted(run.method for run in runs) == ["greedy", "optimal"]
    copy = tmp_path / "copy.json"
    copy.write_bytes((evaluated / "yacht-solo-20k" / "greedy" / "seed0.json").read_bytes())
    with pytest.raises(ResultsError, match="both hold track yacht-solo-20k, method greedy, seed 0: keep one"):
        load_results([evaluated, copy])


@pytest.mark.parametrize("name", ["yacht-solo-20k", "yacht-duel-20k"])
def test_a_track_run_evaluates_itself_ten_times_on_the_fewest_games_train_py_takes(name):
    config_path = "configs/benchmark/ppo_plain.yaml" if name.endswith("solo-20k") else "configs/benchmark/ppo_duel.yaml"
    overrides, _, units, _, _ = bench_run.track_overrides(config_path, track(name), 0, [])
    config = load_config(config_path, overrides)
    assert units // config.run.eval_every == 10 and config.run.checkpoint_every == config.run.eval_every  # a row each
    assert config.run.eval_games == config.run.final_eval_games
    for key in ("eval_games", "final_eval_games"):
        with pytest.raises(ConfigError):  # one game fewer is refused
            load_config(config_path, [*overrides, f"run.{key}={config.run.eval_games - 1}"])


def test_the_end_of_a_learning_curve_is_its_last_row_s_units_and_wall_seconds(tmp_path):
    assert bench_run.curve_end(tmp_path) is None  # no curve yet
    curve = tmp_path / "learning_curve.csv"
    curve.write_text("steps,wall_seconds,percent_of_optimal\n")
    assert bench_run.curve_end(tmp_path) is None  # its header only
    curve.write_text("steps,wall_seconds,percent_of_optimal\n2048,10.5,60.0\n4096,21.25,70.0\n8192,40.75,80.0\n")
    assert bench_run.curve_end(tmp_path) == (8192, 40.75)


@pytest.mark.parametrize("curve", [True, False], ids=["from its curve", "without one"])
@pytest.mark.parametrize("trust", [True, False])
def test_a_training_seed_runs_train_py_and_counts_its_units_wall_and_cpu_seconds(tmp_path, monkeypatch, curve, trust):
    fixed, config_path = track("yacht-solo-20k"), "configs/benchmark/ppo_plain.yaml"
    _, unit, units, steps, _ = bench_run.track_overrides(config_path, fixed, 0, [])
    run_dir = tmp_path / fixed.name / "m" / "seed0"
    commands = []

    def train(command, cwd):  # train.py, as far as the benchmark sees it: a run folder with its learning curve
        commands.append(command)
        if curve:
            run_dir.mkdir(parents=True)
            (run_dir / "learning_curve.csv").write_text("steps,wall_seconds\n512,3.5\n1024,6.25\n")
        return SimpleNamespace(returncode=0)

    usage = iter([SimpleNamespace(ru_utime=10.0, ru_stime=2.0), SimpleNamespace(ru_utime=13.5, ru_stime=2.5)])
    monkeypatch.setattr(bench_run.subprocess, "run", train)
    monkeypatch.setattr(bench_run.resource, "getrusage", lambda who: next(usage))
    monkeypatch.setattr(bench_run, "time", SimpleNamespace(perf_counter=iter([100.0, 107.0]).__next__))
    training, policy = bench_run.train_seed(config_path, fixed, 0, "m", tmp_path, [], trust)
    assert policy == f"ppo:{run_dir / 'model.safetensors'}"
    assert (commands[0][-1] == "--trust-pickles") is trust and commands[0].count("--trust-pickles") == int(trust)
    assert (training.unit, training.env_steps_at_most, training.cpu_seconds) == (unit, steps, 4.0)
    assert (training.done, training.wall_seconds) == ((1024, 6.25) if curve else (units, 7.0))


def test_a_training_seed_whose_train_py_fails_is_refused_naming_its_exit(tmp_path, monkeypatch):
    monkeypatch.setattr(bench_run.subprocess, "run", lambda command, cwd: SimpleNamespace(returncode=3))
    with pytest.raises(bench_run.BenchmarkError, match=r"training yacht-solo-20k m seed 0 failed \(train.py exit 3"):
        bench_run.train_seed("configs/benchmark/ppo_plain.yaml", track("yacht-solo-20k"), 0, "m", tmp_path, [], False)


def test_a_run_folder_left_by_another_config_is_not_resumed_under_this_one(tmp_path):
    from agents.training.config import dump_config

    fixed, config_path = track("yacht-solo-20k"), "configs/benchmark/ppo_plain.yaml"
    overrides = bench_run.track_overrides(config_path, fixed, 0, [])[0]
    left = tmp_path / "runs" / fixed.name / "m" / "seed0"
    left.mkdir(parents=True)
    (left / "config.yaml").write_text(dump_config(load_config(config_path, [*overrides, "ppo.n_epochs=9"])))
    with pytest.raises(SystemExit) as exit:  # before train.py --resume would finish the other config's run
        bench_run.main(["--track", fixed.name, "--config", config_path, "--method", "m", "--seeds", "0",
                        "--out", str(tmp_path / "out"), "--runs-dir", str(tmp_path / "runs")])  # fmt: skip
    assert f"{left} was started with another config (changed: ppo.n_epochs)" in str(exit.value.code)
    assert not (tmp_path / "out").exists() and sorted(p.name for p in left.iterdir()) == ["config.yaml"]
    (left / "config.yaml").write_text(dump_config(load_config(config_path, overrides)))
    bench_run.check_same_run(left, load_config(config_path, overrides))  # the same config: resumed


@pytest.mark.parametrize(
    "argv,problem",
    [
        (["--track", "nope", "--policy", "greedy", "--method", "m"], "error: unknown track 'nope'"),
        (["--track", "yacht-solo-1m", "--policy", "greedy", "--method", "a/b"], "error: --method 'a/b' is 1 to 64"),
        (["--track", "yacht-solo-1m", "--policy", "nope", "--method", "m"], "error: unknown policy"),
        (
            ["--track", "yacht-solo-20k", "--config", "configs/benchmark/ppo_plain.yaml", "--method", "m", "ppo.n_steps=4096"],
            "error: one rollout (262,144 env steps",
        ),
    ],
)
def test_a_bad_command_is_refused_in_one_line_before_anything_runs(argv, problem, tmp_path):
    with pytest.raises(SystemExit) as exit:
        bench_run.main([*argv, "--out", str(tmp_path / "out"), "--runs-dir", str(tmp_path / "runs")])
    message = str(exit.value.code)
    assert message.startswith(problem) and "\n" not in message, message
    assert not (tmp_path / "out").exists() and not (tmp_path / "runs").exists()


@pytest.mark.parametrize("seeds", ["١", "0,١", " 1", "1 ,2", "+1", "1_0"])
def test_seeds_in_another_script_s_digits_or_with_spaces_are_refused(seeds, capsys):
    # int() reads "١" as 1, a training seed: the run would be recorded under a command nobody typed
    with pytest.raises(SystemExit) as exit:
        bench_run.parser().parse_args(["--track", "yacht-solo-20k", "--policy", "greedy", "--method", "m", "--seeds", seeds])
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert exit.value.code == 2 and line.endswith("is not a comma-separated list of seeds, e.g. 0,1,2") and repr(seeds) in line


def with_regret(run: RunResult, method: str, seed: int, regret: float) -> RunResult:
    """The run as another method's seed, its regret per game set to ``regret`` (its figures kept in agreement)."""
    optimum = run.evaluation.optimum
    evaluation = run.evaluation.model_copy(
        update={
            "regret_per_game": regret,
            "regret_per_game_ci95": (regret, regret),
            "normalized_regret": regret / optimum,
            "normalized_regret_ci95": (regret / optimum, regret / optimum),
        }
    )
    return RunResult.model_validate({**run.model_dump(), "method": method, "seed": seed, "evaluation": evaluation.model_dump()})


def test_the_aggregates_are_rliables_on_the_normalized_scores(evaluated, tmp_path):
    pytest.importorskip("rliable")
    from agents.benchmark.aggregate import aggregate

    base = read_results(evaluated / "yacht-solo-20k" / "greedy" / "seed0.json")
    regrets = {"good": [1.0, 2.0, 3.0, 4.0, 30.0], "bad": [10.0, 11.0, 12.0, 13.0, 14.0]}
    for method, values in regrets.items():
        for seed, regret in enumerate(values):
            write_results(tmp_path / "in" / method / f"{seed}.json", with_regret(base, method, seed, regret))
    rows, improvement = aggregate([str(tmp_path / "in")], tmp_path / "out", reps=200, plots=False)
    optimum = base.evaluation.optimum
    by_method = {row.method: row for row in rows}
    for method, values in regrets.items():
        scores = sorted(1 - value / optimum for value in values)
        row = by_method[method]
        assert row.runs == 5 and row.scope == "yacht-solo-20k"
        assert math.isclose(row.iqm[0], np.mean(scores[1:4]))  # 25% cut from each end of five runs: one each
        assert math.isclose(row.optimality_gap[0], np.mean(values) / optimum)  # the mean normalized regret
        # rliable's median is over tasks, of each task's mean over runs: one task, the mean
        assert math.isclose(row.median[0], np.mean(scores)) and math.isclose(row.regret_per_game, np.mean(values))
        for triple in (row.iqm, row.mean, row.median, row.optimality_gap):
            assert triple[1] <= triple[0] <= triple[2]
    # good beats bad in 4 of 5 runs each against each of bad's five: P(good > bad) = 20 / 25
    assert math.isclose(improvement["yacht-solo-20k"]["bad,good"][0], 5 / 25)  # pairs in name order
    assert (tmp_path / "out" / "aggregates.csv").read_text().startswith("scope,method,runs,tracks,iqm,iqm_low,iqm_high")


def test_aggregating_without_rliable_names_the_extra_in_one_line(evaluated, tmp_path, monkeypatch):
    from agents.benchmark.aggregate import main

    monkeypatch.setitem(__import__("sys").modules, "rliable", None)  # as if it were not installed
    with pytest.raises(SystemExit) as exit:
        main([str(evaluated), "--out", str(tmp_path)])
    extra = "it comes with the benchmark extra: pip install 'yacht-rl[benchmark]'"
    assert exit.value.code == f"error: rliable is not installed; {extra}"


def test_optimal_against_itself_at_the_duel_wins_half_exactly(tmp_path):
    # Each deal is played in both seatings with the same dice: the two games' shares of the win sum to one.
    bench_run.main(["--track", "yacht-duel-20k", "--policy", "optimal", "--method", "optimal", "--out", str(tmp_path)])
    evaluation = read_results(tmp_path / "yacht-duel-20k" / "optimal" / "seed0.json").evaluation
    assert evaluation.metric == "win_share" and evaluation.mean == 0.5 and evaluation.regret_per_game is None
    assert math.isclose(evaluation.normalized_regret, 1 - 0.5 / ((0.516114 + 0.522202) / 2))
    # every deal's share is exactly 1/2, so the interval is the point itself, its ends mapped by 1 - share / optimum
    assert evaluation.mean_ci95 == (0.5, 0.5)
    assert evaluation.normalized_regret_ci95 == pytest.approx((evaluation.normalized_regret,) * 2, rel=1e-12)


def test_the_intervals_depend_on_the_files_and_the_seed_alone(evaluated, tmp_path):
    # rliable's bootstrap draws from numpy's global state whatever random_state says: the aggregate seeds it itself
    pytest.importorskip("rliable")
    from agents.benchmark.aggregate import aggregate

    base = read_results(evaluated / "yacht-solo-20k" / "greedy" / "seed0.json")
    regrets = {"good": [1.0, 2.0, 3.0, 4.0, 30.0], "bad": [10.0, 11.0, 12.0, 13.0, 14.0], "odd": [5.0, 9.0, 2.0, 7.0, 20.0]}
    for method, values in regrets.items():
        for seed, regret in enumerate(values):
            write_results(tmp_path / "in" / method / f"{seed}.json", with_regret(base, method, seed, regret))
    outcomes = []
    for outer in (1, 2):  # whatever state the caller left numpy's global random numbers in
        np.random.seed(outer)
        before = np.random.get_state()[1].copy()
        rows, improvement = aggregate([str(tmp_path / "in")], tmp_path / f"out{outer}", reps=200, plots=False)
        assert (np.random.get_state()[1] == before).all()  # and the caller's state is put back
        outcomes.append(({row.method: row for row in rows}, improvement["yacht-solo-20k"]))
    assert outcomes[0] == outcomes[1]
    # a method's intervals are its own: the same without the other methods' files beside it
    shutil.rmtree(tmp_path / "in" / "odd")
    rows, improvement = aggregate([str(tmp_path / "in")], tmp_path / "out3", reps=200, plots=False)
    alone = {row.method: row for row in rows}
    assert alone["good"] == outcomes[0][0]["good"] and alone["bad"] == outcomes[0][0]["bad"]
    assert improvement["yacht-solo-20k"]["bad,good"] == outcomes[0][1]["bad,good"]
    # another seed gives other resamples
    rows, _ = aggregate([str(tmp_path / "in")], tmp_path / "out4", reps=200, seed=7, plots=False)
    assert {row.method: row.iqm for row in rows} != {method: alone[method].iqm for method in ("good", "bad")}


def test_a_budget_s_suite_holds_its_solitaire_tracks_and_the_methods_that_ran_them_all():
    from types import SimpleNamespace

    from agents.benchmark.aggregate import scopes, score_matrices

    def run(track, method, seed, regret=0.1):
        return SimpleNamespace(track=track, method=method, seed=seed, evaluation=SimpleNamespace(normalized_regret=regret))

    runs = [run(name, method, seed) for name in ("yacht-solo-20k", "yatzy-solo-20k") for method in "ab" for seed in (0, 1)]
    runs += [run("yacht-solo-20k", "greedy", 0), run("yacht-duel-20k", "a", 0)]  # a reference, and a table's track
    found = scopes(runs)
    # a method on part of the suite (greedy on one track) leaves the suite as it is; one table track is no suite
    assert found["suite-20k"] == ["yacht-solo-20k", "yatzy-solo-20k"] and "suite-20k-duel" not in found
    assert set(found) == {"yacht-solo-20k", "yatzy-solo-20k", "yacht-duel-20k", "suite-20k"}
    matrices = score_matrices(runs, found["suite-20k"])
    assert set(matrices) == {"a", "b"} and matrices["a"].shape == (2, 2)  # runs x tracks
