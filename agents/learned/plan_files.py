"""Planning agent files: a learned sheet value as one safetensors tensor and plain metadata, which loading cannot make run code.

A ``plan:PATH`` file holds the tensor ``values``, float32 of shape ``(2**C, U, Y)``: ``V(S, u, y)``, the
points still to come at the start of a turn with open rows ``S``, upper subtotal ``u`` (capped at the bonus
threshold; ``U = rules.upper_cap + 1``) and ``y`` (1 when the Yahtzee box holds its full points; ``Y`` = 2
with an extra-Yahtzee bonus, else 1), as :class:`agents.solvers.sheet_solver.SheetSolution` indexes it. The
header's ``__metadata__`` holds under ``"yacht_plan"`` a JSON object: ``format`` (``"yacht-plan"``),
``format_version`` (1), ``rules`` (a name of :data:`yacht_env.rules.RULE_SETS`), ``rules_fingerprint``
(that rule set's ``fingerprint``), ``value_model`` (``"tabular"`` or ``"net"``: how ``V`` was learned) and
``games`` (the self-play games it learned from).

A bare name (``plan:yacht``) is a file the package ships (``agents/models/plan/``).

Every field, the tensor's name, dtype and shape are checked on load; so are values that are not finite,
beyond ``MAX_VALUE`` in magnitude, or nonzero for the full sheet (``S`` = 0). Anything else is a
:class:`agents.learned.model_files.ModelLoadError` naming the file and the problem in one line.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from agents.learned.model_files import SUFFIX, ModelLoadError, check_header, named_rules, read_safetensors, write_safetensors
from agents.learned.ppo import SHIPPED_MODELS, shipped_file_path
from yacht_env.rules import RuleSet, rule_set

FORMAT = "yacht-plan"
FORMAT_VERSION = 1
METADATA_KEY = "yacht_plan"
FIELDS = ("format", "format_version", "rules", "rules_fingerprint", "value_model", "games")
VALUE_MODELS = ("tabular", "net")
MAX_VALUE = 1e6  # points still to come: no rule set's game scores within orders of magnitude of this
MAX_GAMES = 10**15  # a checkpoint's name holds at most 15 digits of games
SHIPPED_PLANS = SHIPPED_MODELS / "plan"  # package data: plan:yacht, plan:yahtzee, plan:yatzy


def plan_file_path(path: str) -> Path:
    """The file ``plan:PATH`` names: a shipped one for a bare name (``yacht``, ``yahtzee``, ``yatzy``), else the path."""
    return shipped_file_path(path, SHIPPED_PLANS, "plan:")


def value_shape(rules: RuleSet) -> tuple[int, int, int]:
    """The shape of the value table of ``rules``: ``(2**C, U, Y)``."""
    return (1 << rules.num_rows, rules.upper_cap + 1, 2 if rules.tracks_yahtzee_box else 1)


def write_plan_file(path: str | Path, values: np.ndarray, rules: RuleSet | str, value_model: str, games: int) -> Path:
    """Write ``values`` (shape :func:`value_shape`) as a plan file, atomically; return the path."""
    import torch

    rules = rule_set(rules)
    named_rules(rules.name, rules.fingerprint, f"rules {rules.name!r}")
    if value_model not in VALUE_MODELS:
        raise ValueError(f"value_model must be one of {', '.join(VALUE_MODELS)}, got {value_model!r}")
    values = np.asarray(values, dtype=np.float32).reshape(value_shape(rules))
    metadata = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "rules": rules.name,
        "rules_fingerprint": rules.fingerprint,
        "value_model": value_model,
        "games": int(games),
    }
    return write_safetensors(path, {"values": torch.from_numpy(values.copy())}, METADATA_KEY, metadata)


def check_plan_header(meta, where: str, file_format: str, version: int, fields) -> RuleSet:
    """What every planning file's metadata gets: its header, its rules and their fingerprint, and ``games``; the rules.

    ``fields``: the metadata's fields, or a function of the file's format version giving them.
    """
    check_header(meta, where, file_format, version, fields if callable(fields) else lambda _: fields)
    if not isinstance(meta["rules_fingerprint"], str):
        raise ModelLoadError(f"{where}: rules_fingerprint must be a string, got {meta['rules_fingerprint']!r}")
    rules = named_rules(meta["rules"], meta["rules_fingerprint"], where)
    check_games(meta["games"], where)
    return rules


def check_games(games, where: str) -> int:
    """``games`` (the self-play games a file or a run's checkpoint learned from) if an integer 0..``MAX_GAMES``."""
    if type(games) is not int or not 0 <= games <= MAX_GAMES:
        raise ModelLoadError(f"{where}: games must be an integer >= 0 and at most {MAX_GAMES:,}, got {repr(games)[:60]}")
    return games


def check_values(values: np.ndarray, where: str, name: str = "values") -> np.ndarray:
    """``values`` (a value table of :func:`value_shape`, the tensor ``name``) if finite, within ``MAX_VALUE`` and 0 for
    the full sheet.

    What a plan file is held to when it loads, a planning run's model when it resumes from a checkpoint, and the
    points to come that a planN file carries.
    """
    if not np.isfinite(values).all():
        raise ModelLoadError(f"{where}: tensor {name} holds NaN or infinite values")
    largest = float(np.abs(values).max())
    if largest > MAX_VALUE:
        raise ModelLoadError(f"{where}: tensor {name} holds a value of magnitude {largest:.3g}, above {MAX_VALUE:g} points")
    if np.any(values[0] != 0):
        raise ModelLoadError(f"{where}: the value of the full sheet (no row open) must be 0, got {float(values[0].flat[0])!r}")
    return values


def _check_metadata(meta, where: str) -> dict:
    check_plan_header(meta, where, FORMAT, FORMAT_VERSION, FIELDS)
    if meta["value_model"] not in VALUE_MODELS:
        raise ModelLoadError(f"{where}: value_model must be one of {', '.join(VALUE_MODELS)}, got {meta['value_model']!r}")
    return meta


def _read_raw(path: Path, where: str):
    """``(metadata, tensors)`` of a safetensors plan file; ``ModelLoadError`` if it is not one."""
    with open(path, "rb") as handle:
        if handle.read(2) == b"PK":
            raise ModelLoadError(f"{where} is a zip, not a {SUFFIX} plan file written by train.py")
    return read_safetensors(path, where, METADATA_KEY, "plan file")


def read_plan_file(path: str | Path) -> tuple[dict, np.ndarray]:
    """The checked metadata and value table (float64, :func:`value_shape`) of a plan file.

    ``ModelLoadError`` (one line) if anything is off.
    """
    import torch

    path = Path(path)
    where = f"plan file {str(path)!r}"
    if not path.is_file():
        raise ModelLoadError(f"no plan file at {str(path)!r}: expected a {SUFFIX} file written by train.py")
    raw, tensors = _read_raw(path, where)
    meta = _check_metadata(raw, where)
    shape = value_shape(rule_set(meta["rules"]))
    if set(tensors) != {"values"}:
        raise ModelLoadError(f"{where}: expected exactly one tensor 'values', got {sorted(tensors)[:5]}")
    tensor = tensors["values"]
    if tensor.dtype != torch.float32:
        raise ModelLoadError(f"{where}: tensor values has dtype {tensor.dtype}, expected float32")
    if tuple(tensor.shape) != shape:
        raise ModelLoadError(f"{where}: tensor values has shape {tuple(tensor.shape)}, the {meta['rules']} rules need {shape}")
    return meta, check_values(tensor.numpy().astype(np.float64), where)
