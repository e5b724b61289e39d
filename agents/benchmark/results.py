"""The results file: one run of one method on one track, as versioned JSON, checked field by field when read.

A results file may come from anyone, so reading one trusts nothing: it is at most :data:`MAX_BYTES`, plain JSON
(no ``NaN``), of this format and version, every field typed and bounded, and its figures must agree with its
track (the rules, seats, evaluation deals and optimum the track fixes, a budget not exceeded) and with each
other (the normalized regret is the regret per game, or the win share, over the optimum). Anything else is a
:class:`ResultsError` whose one line names the file and the field. The format is documented in
``docs/leaderboard.md``; :data:`VERSION` changes with any change a reader of version 1 would misread.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from agents.benchmark.tracks import TRACKS, TRAINING_SEEDS, track
from yacht_env.atomic_files import write_atomically
from yacht_env.echo import MAX_PATH_ECHO, echoed

FORMAT: Literal["yacht-rl-benchmark-results"] = "yacht-rl-benchmark-results"
VERSION = 1
MAX_BYTES = 1_000_000
MAX_FILES = 100_000
METHOD_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$"
# How far a figure may stray from what the file's other figures make it: the JSON's decimal rounding, no more.
TOLERANCE = 1e-9

Finite = Annotated[float, Field(allow_inf_nan=False)]
Text = Annotated[str, Field(max_length=4_096)]
Unit = Literal["env_steps", "games"]


class ResultsError(ValueError):
    """A results file that cannot be read or does not hold a valid run; the message is one line."""


class Strict(BaseModel):
    """Every section: no unknown keys, no coercion (``"3"`` is not 3)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class Training(Strict):
    """How the policy was trained: ``algorithm`` None for a policy evaluated as given (no training in the run)."""

    algorithm: Text | None
    unit: Unit  # what ``done`` counts: PPO's env steps, a planning agent's self-play games
    done: int = Field(ge=0)
    env_steps_at_most: int = Field(ge=0)  # the env steps of ``done``, or the most they can be (games x steps per game)
    wall_seconds: Finite | None = Field(ge=0)
    cpu_seconds: Finite | None = Field(ge=0)
    cores: int | None = Field(ge=1, le=100_000)


class Evaluation(Strict):
    """The evaluation on the track's deals: the mean figure, its regret, normalized regret, and their 95% intervals."""

    rules: Text
    seats: int = Field(ge=1, le=5)
    games: int = Field(ge=2)
    seed: int = Field(ge=0)
    metric: Literal["score", "win_share"]
    optimum: Finite
    mean: Finite
    mean_ci95: tuple[Finite, Finite]
    regret_per_game: Finite | None  # exact points per game given away (solitaire); None at a table
    regret_per_game_ci95: tuple[Finite, Finite] | None
    normalized_regret: Finite
    normalized_regret_ci95: tuple[Finite, Finite]
    wall_seconds: Finite = Field(ge=0)
    # Evaluation games in which the policy could not choose and optimal played for it (agents.policies.guard): the
    # figures are then partly optimal's, so such a run is kept as evidence and never aggregated.
    replaced_games: int = Field(default=0, ge=0)


class RunResult(Strict):
    """One run of one method on one track: what was run, how it was trained, and its evaluation."""

    format: Literal["yacht-rl-benchmark-results"]
    version: int
    track: Text
    method: str = Field(pattern=METHOD_PATTERN)
    seed: int = Field(ge=0, lt=2**63)
    policy: Text  # the policy name evaluated (ppo:PATH, plan:PATH, optimal, ...)
    source: Text  # the training config, or the policy as given
    command: Text  # the command that reproduces the run
    training: Training
    evaluation: Evaluation
    created: Text
    project_version: Text

    @field_validator("version")
    @classmethod
    def known_version(cls, value: int) -> int:
        """Check that this version of the format is one this code reads."""
        if value != VERSION:
            raise ValueError(f"format version {value} is not read here (this version reads {VERSION})")
        return value

    @field_validator("track")
    @classmethod
    def known_track(cls, value: str) -> str:
        """Check that the track is one of TRACKS."""
        track(value)
        return value

    @model_validator(mode="after")
    def fits_its_track(self):
        """Check that the evaluation is the track's (rules, seats, deals, optimum) and the budget was kept."""
        fixed = track(self.track)
        evaluation, training = self.evaluation, self.training
        for key, wanted in (("rules", fixed.rules), ("seats", fixed.seats), ("games", fixed.games), ("seed", fixed.eval_seed)):
            if getattr(evaluation, key) != wanted:
                raise ValueError(f"evaluation.{key} is {getattr(evaluation, key)!r}, track {fixed.name} fixes {wanted!r}")
        if evaluation.metric != fixed.metric:
            raise ValueError(f"evaluation.metric is {evaluation.metric!r}, track {fixed.name} scores {fixed.metric!r}")
        if not math.isclose(evaluation.optimum, fixed.optimum(), rel_tol=1e-6):
            raise ValueError(f"evaluation.optimum is {evaluation.optimum!r}, track {fixed.name}'s is {fixed.optimum():.6f}")
        if evaluation.replaced_games > evaluation.games:
            raise ValueError(f"evaluation.replaced_games {evaluation.replaced_games:,} exceeds its games {evaluation.games:,}")
        if training.env_steps_at_most > fixed.budget:
            raise ValueError(f"training.env_steps_at_most {training.env_steps_at_most:,} exceeds the budget {fixed.budget:,}")
        if training.algorithm is not None and self.seed not in TRAINING_SEEDS:
            raise ValueError(f"a trained run's seed is one of {TRAINING_SEEDS}, got {self.seed}")
        return self

    @model_validator(mode="after")
    def figures_agree(self):
        """Check that the normalized regret is what the other figures make it, and the intervals hold their means."""
        evaluation = self.evaluation
        if (evaluation.regret_per_game is None) != (evaluation.metric == "win_share"):
            raise ValueError("evaluation.regret_per_game is given for a solitaire track and only there")
        expected = normalized_regret(evaluation.metric, evaluation.mean, evaluation.regret_per_game, evaluation.optimum)
        if not math.isclose(evaluation.normalized_regret, expected, rel_tol=TOLERANCE, abs_tol=TOLERANCE):
            given = evaluation.normalized_regret
            raise ValueError(f"evaluation.normalized_regret is {given!r}, its figures make it {expected!r}")
        pairs = [("mean", evaluation.mean, evaluation.mean_ci95)]
        pairs.append(("normalized_regret", evaluation.normalized_regret, evaluation.normalized_regret_ci95))
        if evaluation.regret_per_game is not None and evaluation.regret_per_game_ci95 is not None:
            pairs.append(("regret_per_game", evaluation.regret_per_game, evaluation.regret_per_game_ci95))
        for key, value, (low, high) in pairs:
            if not low - TOLERANCE <= value <= high + TOLERANCE:
                raise ValueError(f"evaluation.{key}_ci95 [{low!r}, {high!r}] does not hold evaluation.{key} {value!r}")
        return self

    @property
    def key(self) -> tuple[str, str, int]:
        """What names the run: its track, method and seed (no two files of one aggregate share it)."""
        return self.track, self.method, self.seed


def normalized_regret(metric: str, mean: float, regret_per_game: float | None, optimum: float) -> float:
    """The share of the optimum given away: the exact regret per game over the optimum alone, else 1 - mean / optimum."""
    if metric == "score" and regret_per_game is not None:
        return regret_per_game / optimum
    return 1.0 - mean / optimum


def describe(error: ValidationError) -> str:
    """The validation's problems on one line, each with its field."""
    problems = []
    for item in error.errors():
        key = ".".join(str(part) for part in item["loc"])
        message = item["msg"].removeprefix("Value error, ")
        if item["type"] == "extra_forbidden":
            message = "unknown key"
        elif item["type"] == "missing":
            message = "missing"
        problems.append(f"{key}: {message}" if key else message)
    return "; ".join(dict.fromkeys(problems))[:1_000]


def _refuse_constant(name: str):
    raise ValueError(f"{name} is not a number JSON allows")


def shown(path: str | Path) -> str:
    """A file name as a refusal repeats it: quoted, escaped, cut (:func:`yacht_env.echo.echoed`)."""
    return echoed(str(path), MAX_PATH_ECHO)


def read_results(path: str | Path) -> RunResult:
    """The run in the results file at ``path``; :class:`ResultsError` (one line) for anything else."""
    path = Path(path)
    where = f"results file {shown(path)}"
    try:
        if not path.is_file():
            raise ResultsError(f"{where} is not a file")
        if path.stat().st_size > MAX_BYTES:
            raise ResultsError(f"{where} is {path.stat().st_size:,} bytes; a results file is at most {MAX_BYTES:,}")
        text = path.read_bytes().decode("utf-8")
        data = json.loads(text, parse_constant=_refuse_constant)
    except OSError as error:
        raise ResultsError(f"{where} cannot be read: {error.strerror or type(error).__name__}") from None
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        if isinstance(error, ResultsError):
            raise
        detail = " ".join(str(error).split())[:200]
        raise ResultsError(f"{where} is not JSON text ({detail})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ResultsError(f"{where} is not a benchmark results file (its 'format' must be {FORMAT!r})")
    try:
        return RunResult.model_validate_json(text)  # JSON mode: an array is read as an interval's pair
    except ValidationError as error:
        raise ResultsError(f"{where}: {describe(error)}") from None


def results_files(paths: Iterable[str | Path]) -> list[Path]:
    """The files named, and the ``*.json`` files under the folders named, in order; at most MAX_FILES."""
    found: list[Path] = []
    for given in paths:
        path = Path(given)
        if path.is_dir():
            found += sorted(path.rglob("*.json"))
        elif path.exists():
            found.append(path)
        else:
            raise ResultsError(f"{shown(path)} is neither a results file nor a folder of them")
        if len(found) > MAX_FILES:
            raise ResultsError(f"more than {MAX_FILES:,} results files under {shown(path)}")
    return found


def load_results(paths: Iterable[str | Path]) -> list[RunResult]:
    """Every run of the results files at ``paths`` (files or folders), each read and checked; no run twice, and none
    whose policy was replaced by optimal in an evaluation game (its figures would be partly optimal's).
    """
    runs: dict[tuple[str, str, int], tuple[Path, RunResult]] = {}
    for path in results_files(paths):
        run = read_results(path)
        if run.evaluation.replaced_games:
            raise ResultsError(
                f"results file {shown(path)}: its policy was replaced by optimal in {run.evaluation.replaced_games:,} "
                f"of {run.evaluation.games:,} evaluation games, so its figures are partly optimal's: not aggregated"
            )
        if run.key in runs:
            first = runs[run.key][0]
            raise ResultsError(
                f"results files {shown(first)} and {shown(path)} both hold track {run.track}, "
                f"method {run.method}, seed {run.seed}: keep one"
            )
        runs[run.key] = (path, run)
    if not runs:
        raise ResultsError("no results files found")
    return [run for _, run in runs.values()]


def write_results(path: str | Path, run: RunResult) -> None:
    """Write the run as JSON (atomically: a kill leaves the old file or the new one, never half)."""
    text = json.dumps(run.model_dump(mode="json"), indent=2, allow_nan=False) + "\n"
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    write_atomically(path, lambda handle: handle.write(text.encode()))


__all__ = ["FORMAT", "TRACKS", "VERSION", "ResultsError", "RunResult", "load_results", "read_results", "write_results"]
