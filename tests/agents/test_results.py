"""The benchmark's results files (agents.benchmark.results) are read to the bounds the leaderboard page states."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from agents.benchmark.results import MAX_BYTES, MAX_FILES, ResultsError, read_results, results_files
from tests.agents.test_benchmark import evaluated  # noqa: F401  (a fixture)

PAGE = (Path(__file__).resolve().parents[2] / "docs" / "leaderboard.md").read_text()
TEXT = 4_096  # characters of a text field, as the page states


def number(text: str) -> int:
    return int(text.replace(",", ""))


def test_the_page_states_the_bounds_the_reader_keeps():
    said = re.search(r"plain JSON of at most 1 MB\s+\(([0-9,]+) bytes; at most ([0-9,]+) files under", PAGE)
    assert said is not None and (number(said[1]), number(said[2])) == (MAX_BYTES, MAX_FILES)
    assert re.search(rf"texts of at most {TEXT:,} characters, a seed below\s+2\^63", PAGE)


@pytest.fixture
def document(evaluated):  # noqa: F811
    """A valid results file's JSON: greedy's run on the smoke track."""
    return json.loads((evaluated / "yacht-solo-20k" / "greedy" / "seed0.json").read_text())


def written(tmp_path, data: dict, pad: int = 0) -> Path:
    path = tmp_path / "run.json"
    path.write_text(json.dumps(data) + " " * pad)
    return path


def test_a_file_of_at_most_the_bound_is_read_and_one_byte_more_refused(tmp_path, document):
    text = json.dumps(document)
    path = written(tmp_path, document, pad=MAX_BYTES - len(text))
    assert path.stat().st_size == MAX_BYTES and read_results(path).method == "greedy"
    path = written(tmp_path, document, pad=MAX_BYTES - len(text) + 1)
    with pytest.raises(ResultsError, match=f"is {MAX_BYTES + 1:,} bytes; a results file is at most {MAX_BYTES:,}$"):
        read_results(path)


def test_a_text_field_is_read_to_its_bound_and_refused_past_it(tmp_path, document):
    assert read_results(written(tmp_path, {**document, "command": "x" * TEXT})).command == "x" * TEXT
    with pytest.raises(ResultsError, match="command: String should have at most 4096 characters"):
        read_results(written(tmp_path, {**document, "command": "x" * (TEXT + 1)}))


def test_a_policy_evaluated_as_given_may_have_any_seed_below_2_63_and_a_trained_run_only_a_training_seed(tmp_path, document):
    assert document["training"]["algorithm"] is None
    for seed in (7, 2**62, 2**63 - 1):
        assert read_results(written(tmp_path, {**document, "seed": seed})).seed == seed
    with pytest.raises(ResultsError, match="seed: Input should be less than 9223372036854775808"):
        read_results(written(tmp_path, {**document, "seed": 2**63}))
    trained = {**document, "training": {**document["training"], "algorithm": "ppo"}}
    assert read_results(written(tmp_path, {**trained, "seed": 4})).seed == 4
    with pytest.raises(ResultsError, match=r"a trained run's seed is one of \(0, 1, 2, 3, 4\), got 7"):
        read_results(written(tmp_path, {**trained, "seed": 7}))


def test_a_table_is_of_at_most_five_seats(tmp_path, document):
    with pytest.raises(ResultsError, match="evaluation.seats: Input should be less than or equal to 5"):
        read_results(written(tmp_path, {**document, "evaluation": {**document["evaluation"], "seats": 6}}))


def test_a_folder_is_read_to_its_bound_of_files_and_refused_past_it(tmp_path):
    folder = tmp_path / "many"
    folder.mkdir()
    for index in range(MAX_FILES):
        (folder / f"{index}.json").touch()
    assert len(results_files([folder])) == MAX_FILES
    (folder / "one-more.json").touch()
    with pytest.raises(ResultsError, match=f"^more than {MAX_FILES:,} results files under "):
        results_files([folder])


def refused(tmp_path, data: dict, words: str) -> None:
    with pytest.raises(ResultsError) as error:
        read_results(written(tmp_path, data))
    assert words in str(error.value) and "\n" not in str(error.value), str(error.value)


def with_evaluation(document: dict, **fields) -> dict:
    return {**document, "evaluation": {**document["evaluation"], **fields}}


def with_training(document: dict, **fields) -> dict:
    return {**document, "training": {**document["training"], **fields}}


def test_a_figure_at_either_end_of_its_interval_is_held_and_one_past_it_refused(tmp_path, document):
    regret = document["evaluation"]["regret_per_game"]
    for interval in ([regret, regret + 1], [regret - 1, regret]):
        assert read_results(written(tmp_path, with_evaluation(document, regret_per_game_ci95=interval)))
    refused(tmp_path, with_evaluation(document, regret_per_game_ci95=[regret + 0.5, regret + 1]), "regret_per_game_ci95")


def test_a_solitaire_run_gives_its_regret_and_a_table_run_none(tmp_path, document):
    refused(tmp_path, with_evaluation(document, regret_per_game=None, regret_per_game_ci95=None), "only there")


@pytest.mark.parametrize(
    "change, words",
    [
        (
            lambda d: with_evaluation(d, replaced_games=-1),
            "evaluation.replaced_games: Input should be greater than or equal to 0",
        ),
        (lambda d: with_training(d, wall_seconds=-0.5), "training.wall_seconds: Input should be greater than or equal to 0"),
        (lambda d: {**d, "version": 0}, "format version 0 is not read here (this version reads 1)"),
        (lambda d: {**d, "format": "zzz"}, "is not a benchmark results file (its 'format' must be 'yacht-rl-benchmark-results')"),
        (lambda d: {**d, "format": "aaa"}, "is not a benchmark results file (its 'format' must be 'yacht-rl-benchmark-results')"),
    ],
)
def test_a_field_out_of_its_range_is_refused_naming_it(tmp_path, document, change, words):
    refused(tmp_path, change(document), words)


def test_a_run_may_use_its_whole_budget_and_not_a_step_more(tmp_path, document):
    budget = 20_000  # the smoke track's
    assert read_results(written(tmp_path, with_training(document, env_steps_at_most=budget)))
    refused(tmp_path, with_training(document, env_steps_at_most=budget + 1), "exceeds the budget 20,000")


def test_a_bound_of_a_field_is_the_one_the_page_states():
    from agents.benchmark.results import Training

    said = re.search(r"`cores` \(([0-9,]+) to ([0-9,]+)\)", PAGE)
    bounds = {type(item).__name__: item for item in Training.model_fields["cores"].metadata}
    assert said is not None and (number(said[1]), number(said[2])) == (bounds["Ge"].ge, bounds["Le"].le)


def test_a_long_or_hostile_file_name_is_repeated_short_and_escaped(tmp_path):
    from yacht_env.echo import MAX_PATH_ECHO, echoed

    name = tmp_path / "runs" / ("\x1b]0;x\x07" + "y" * 200) / "seed0.json"
    with pytest.raises(ResultsError) as error:
        read_results(name)
    assert str(error.value) == f"results file {echoed(str(name), MAX_PATH_ECHO)} is not a file"
    assert "\x1b" not in str(error.value)


def test_two_files_of_one_run_are_refused_naming_both(tmp_path, document):
    from agents.benchmark.results import load_results
    from yacht_env.echo import MAX_PATH_ECHO, echoed

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first, second = tmp_path / "a" / "seed0.json", tmp_path / "b" / "seed0.json"
    for path in (first, second):
        path.write_text(json.dumps(document))
    with pytest.raises(ResultsError) as error:
        load_results([first, second])
    shown = [echoed(str(path), MAX_PATH_ECHO) for path in (first, second)]
    assert str(error.value).startswith(f"results files {shown[0]} and {shown[1]} both hold track yacht-solo-20k, ")
