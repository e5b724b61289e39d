"""Two-player planning files: a learned chance of winning as safetensors tensors and plain metadata (loading runs no code).

A ``plan2:PATH`` file holds the network of :class:`agents.learned.plan2.WinValue`: tensors ``layers.<i>.weight``
(float32, ``(out, in)``) and ``layers.<i>.bias`` (float32, ``(out,)``) for ``i = 0 .. L-1``, the first
reading :func:`num_features` inputs and the last giving one logit. The header's
``__metadata__`` holds under ``"yacht_plan2"`` a JSON object: ``format`` (``"yacht-plan2"``),
``format_version`` (1), ``rules`` (a name of :data:`yacht_env.rules.RULE_SETS` whose rows score on their
own), ``rules_fingerprint`` (that rule set's ``fingerprint``), ``features`` (the input width) and ``games``
(the self-play games it learned from).

Every field, every tensor's name, dtype and shape (the layers must chain), and weights that are not finite
or beyond ``MAX_WEIGHT`` in magnitude are checked on load; anything else is a
:class:`agents.learned.model_files.ModelLoadError` naming the file and the problem in one line. A bare name
(``plan2:yacht``) is a file the package ships (``agents/models/plan2/``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from agents.learned.model_files import (
    MAX_LAYER_WIDTH,
    SUFFIX,
    ModelLoadError,
    named_rules,
    read_safetensors,
    write_safetensors,
)
from agents.learned.plan_files import check_plan_header
from agents.learned.ppo import SHIPPED_MODELS, shipped_file_path
from yacht_env.rules import RuleSet, rule_set

FORMAT = "yacht-plan2"
FORMAT_VERSION = 1
METADATA_KEY = "yacht_plan2"
FIELDS = ("format", "format_version", "rules", "rules_fingerprint", "features", "games")
MAX_LAYERS = 8
MAX_WEIGHT = 1e4  # a logit network's weights: far beyond anything training gives
SHIPPED_PLAN2 = SHIPPED_MODELS / "plan2"  # package data: plan2:yacht
EXTRA_FEATURES = 3  # inputs after the two players' rows (agents.learned.plan2.win_features)


def num_features(rules: RuleSet) -> int:
    """The width of the network's input under ``rules``: a 0/1 per row of each player, and ``EXTRA_FEATURES``."""
    return 2 * rules.num_rows + EXTRA_FEATURES


def plan2_file_path(path: str) -> Path:
    """The file ``plan2:PATH`` names: a shipped one for a bare name (``yacht``), else the path."""
    return shipped_file_path(path, SHIPPED_PLAN2, "plan2:")


def write_plan2_file(path: str | Path, layers: list[tuple[np.ndarray, np.ndarray]], rules: RuleSet | str, games: int) -> Path:
    """Write the network ``layers`` (``(weight, bias)`` pairs) as a plan2 file, atomically; return the path."""
    import torch

    rules = rule_set(rules)
    named_rules(rules.name, rules.fingerprint, f"rules {rules.name!r}")
    tensors = {}
    for i, (weight, bias) in enumerate(layers):
        tensors[f"layers.{i}.weight"] = torch.from_numpy(np.array(weight, dtype=np.float32))
        tensors[f"layers.{i}.bias"] = torch.from_numpy(np.array(bias, dtype=np.float32))
    metadata = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "rules": rules.name,
        "rules_fingerprint": rules.fingerprint,
        "features": num_features(rules),
        "games": int(games),
    }
    return write_safetensors(path, tensors, METADATA_KEY, metadata)


def _check_metadata(meta, where: str) -> dict:
    rules = check_plan_header(meta, where, FORMAT, FORMAT_VERSION, FIELDS)
    if rules.has_bonus_or_joker:
        raise ModelLoadError(
            f"{where}: rules {meta['rules']!r} have a bonus or a joker: a plan2 file plays rules whose rows score on their own"
        )
    if type(meta["features"]) is not int or meta["features"] != num_features(rules):
        raise ModelLoadError(
            f"{where}: features must be {num_features(rules)} for the {meta['rules']} rules, got {meta['features']!r}"
        )
    return meta


def check_layers(tensors: dict, width: int, where: str, outputs: int = 1) -> list[tuple[np.ndarray, np.ndarray]]:
    """The ``(weight, bias)`` pairs of the tensors, checked to chain from ``width`` inputs to ``outputs`` logits.

    The one check of every learned network of a planning file (``plan2:``, ``planN:``): names, dtypes, shapes,
    widths, and finite weights within ``MAX_WEIGHT``.
    """
    import torch

    count = len(tensors) // 2
    expected = {f"layers.{i}.{part}" for i in range(count) for part in ("weight", "bias")}
    if count < 1 or count > MAX_LAYERS or set(tensors) != expected:
        raise ModelLoadError(
            f"{where}: expected tensors layers.<i>.weight and layers.<i>.bias for i = 0 .. L-1 (L from 1 to {MAX_LAYERS}), "
            f"got {sorted(tensors)[:6]}"
        )
    layers = []
    for i in range(count):
        weight, bias = tensors[f"layers.{i}.weight"], tensors[f"layers.{i}.bias"]
        for name, tensor in ((f"layers.{i}.weight", weight), (f"layers.{i}.bias", bias)):
            if tensor.dtype != torch.float32:
                raise ModelLoadError(f"{where}: tensor {name} has dtype {tensor.dtype}, expected float32")
        out = outputs if i == count - 1 else None
        if weight.dim() != 2 or weight.shape[1] != width or (out is not None and weight.shape[0] != out):
            wanted = f"({out if out else 'width'}, {width})"
            raise ModelLoadError(f"{where}: tensor layers.{i}.weight has shape {tuple(weight.shape)}, expected {wanted}")
        if not 1 <= weight.shape[0] <= MAX_LAYER_WIDTH:
            raise ModelLoadError(f"{where}: layer {i} is {weight.shape[0]:,} wide, expected 1 to {MAX_LAYER_WIDTH:,}")
        if tuple(bias.shape) != (weight.shape[0],):
            raise ModelLoadError(f"{where}: tensor layers.{i}.bias has shape {tuple(bias.shape)}, expected ({weight.shape[0]},)")
        pair = (weight.numpy().astype(np.float32), bias.numpy().astype(np.float32))
        for name, array in zip(("weight", "bias"), pair):
            if not np.isfinite(array).all():
                raise ModelLoadError(f"{where}: tensor layers.{i}.{name} holds NaN or infinite values")
            if array.size and float(np.abs(array).max()) > MAX_WEIGHT:
                raise ModelLoadError(f"{where}: tensor layers.{i}.{name} holds a value beyond {MAX_WEIGHT:g} in magnitude")
        layers.append(pair)
        width = weight.shape[0]
    return layers


def read_network_file(
    path: str | Path, kind: str, metadata_key: str, check_metadata, outputs: int = 1
) -> tuple[dict, list[tuple[np.ndarray, np.ndarray]]]:
    """The checked metadata and network layers of a ``kind`` file (``plan2``, ``planN``): a regular safetensors file,
    not a zip, its metadata under ``metadata_key`` passing ``check_metadata(raw, where)``, its layers
    :func:`check_layers` to ``outputs`` logits; ``ModelLoadError`` (one line) if anything is off.
    """
    meta, tensors, where = read_network_tensors(path, kind, metadata_key, check_metadata)
    return meta, check_layers(tensors, meta["features"], where, outputs=outputs)


def read_network_tensors(path: str | Path, kind: str, metadata_key: str, check_metadata) -> tuple[dict, dict, str]:
    """``(metadata, tensors, where)`` of a ``kind`` file: a regular safetensors file, not a zip, its metadata under
    ``metadata_key`` passing ``check_metadata(raw, where)``; its tensors are not checked yet. ``ModelLoadError``
    (one line) if anything is off.
    """
    path = Path(path)
    where = f"{kind} file {str(path)!r}"
    if not path.is_file():
        raise ModelLoadError(f"no {kind} file at {str(path)!r}: expected a {SUFFIX} file written by train.py")
    with open(path, "rb") as handle:
        if handle.read(2) == b"PK":
            raise ModelLoadError(f"{where} is a zip, not a {SUFFIX} {kind} file written by train.py")
    raw, tensors = read_safetensors(path, where, metadata_key, f"{kind} file")
    return check_metadata(raw, where), tensors, where


def read_plan2_file(path: str | Path) -> tuple[dict, list[tuple[np.ndarray, np.ndarray]]]:
    """The checked metadata and network layers of a plan2 file; ``ModelLoadError`` (one line) if anything is off."""
    return read_network_file(path, "plan2", METADATA_KEY, _check_metadata)
