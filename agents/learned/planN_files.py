"""Table planning files: a learned chance of winning for tables of 2 to 5 as safetensors tensors and plain metadata.

A ``planN:PATH`` file holds the network of :class:`agents.learned.planN.ShareValue`: tensors ``layers.<i>.weight``
(float32, ``(out, in)``) and ``layers.<i>.bias`` (float32, ``(out,)``) for ``i = 0 .. L-1``, the first reading
:func:`num_features` inputs and the last giving ``MAX_PLAYERS`` logits (one per seat, the mover's first). The
header's ``__metadata__`` holds under ``"yacht_planN"`` a JSON object: ``format`` (``"yacht-planN"``),
``format_version`` (1), ``rules`` (a name of :data:`yacht_env.rules.RULE_SETS`: any rule set, bonuses and jokers
included), ``rules_fingerprint`` (that rule set's ``fingerprint``), ``features`` (the input width), ``table_sizes``
(the table sizes it learned at, increasing, within 2 to ``MAX_PLAYERS``: the ones it plays), ``games`` (the
self-play games it learned from) and, from format version 2, ``lead_prior`` (true or false). A file with a lead
prior (:class:`LeadPrior`) also holds ``points_to_come`` (float32, the shape of a plan file's value table,
:func:`agents.learned.plan_files.value_shape`: each sheet's points still to come, as a solitaire planner learned
them) and ``lead_weight`` (float32, ``(1,)``), and its network reads :data:`PRIOR_EXTRA` more inputs per seat.
Version 1 files (no prior) are read as they are.

Every field, every tensor's name, dtype and shape, and weights that are not finite or beyond the bound are
checked on load (the one check of :func:`agents.learned.plan2_files.check_layers`); anything else is a
:class:`agents.learned.model_files.ModelLoadError` naming the file and the problem in one line. A bare name
(``planN:yahtzee``) is a file the package ships (``agents/models/planN/``).
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import numpy as np

from agents.learned.model_files import ModelLoadError, named_rules, write_safetensors
from agents.learned.plan2_files import MAX_WEIGHT, check_layers, read_network_tensors
from agents.learned.plan_files import check_plan_header, check_values, value_shape
from agents.learned.ppo import SHIPPED_MODELS, shipped_file_path
from yacht_env.game import MAX_PLAYERS
from yacht_env.rules import RuleSet, rule_set

FORMAT = "yacht-planN"
FORMAT_VERSION = 2
METADATA_KEY = "yacht_planN"
FIELDS_V1 = ("format", "format_version", "rules", "rules_fingerprint", "features", "table_sizes", "games")
FIELDS = (*FIELDS_V1, "lead_prior")
PRIOR_TENSORS = ("points_to_come", "lead_weight")
SHIPPED_PLANN = SHIPPED_MODELS / "planN"  # package data: planN:yacht, ...
TABLE_SIZES = tuple(range(2, MAX_PLAYERS + 1))
SEAT_EXTRA = 8  # inputs of a seat beyond its open rows (agents.learned.planN.table_features)
PRIOR_EXTRA = 3  # a seat's inputs from a lead prior: its points to come, its expected lead over the mover, scaled
TABLE_EXTRA = MAX_PLAYERS  # the table size one-hot (2 .. MAX_PLAYERS) and the share of rows open


class LeadPrior(NamedTuple):
    """What a network with a lead prior adds to its inputs and logits (:class:`agents.learned.planN.ShareValue`).

    ``points_to_come``: each sheet's points still to come, a plan file's value table (learned by a solitaire planner
    in its own games); a seat's expected final total is its total plus these. ``weight``: each seat's logit gets
    ``weight`` times its expected lead over the mover (scaled by the rows open), so that before anything is learned
    the shares already favour the seat expected to finish ahead.
    """

    points_to_come: np.ndarray
    weight: float


def num_features(rules: RuleSet, prior: bool = False) -> int:
    """The width of the network's input under ``rules``: ``MAX_PLAYERS`` seats of rows and sheet (and, with a lead
    ``prior``, its points to come and expected lead), and the table's.
    """
    return MAX_PLAYERS * (rules.num_rows + SEAT_EXTRA + (PRIOR_EXTRA if prior else 0)) + TABLE_EXTRA


def fields_of(version: int) -> tuple[str, ...]:
    """The metadata fields of a planN file of format ``version``."""
    return FIELDS_V1 if version == 1 else FIELDS


def planN_file_path(path: str) -> Path:
    """The file ``planN:PATH`` names: a shipped one for a bare name (``yacht``), else the path."""
    return shipped_file_path(path, SHIPPED_PLANN, "planN:")


def check_table_sizes(sizes, where: str) -> list[int]:
    """``sizes`` as a list if it is increasing table sizes within 2 to ``MAX_PLAYERS``, else ``ModelLoadError``."""
    if (
        not isinstance(sizes, list)
        or not sizes
        or any(type(size) is not int or size not in TABLE_SIZES for size in sizes)
        or sorted(set(sizes)) != sizes
    ):
        raise ModelLoadError(
            f"{where}: table_sizes must be increasing table sizes from 2 to {MAX_PLAYERS}, got {str(sizes)[:80]}"
        )
    return sizes


def write_planN_file(
    path: str | Path,
    layers: list[tuple[np.ndarray, np.ndarray]],
    rules: RuleSet | str,
    table_sizes,
    games: int,
    prior: LeadPrior | None = None,
) -> Path:
    """Write the network ``layers`` (``(weight, bias)`` pairs, with its lead ``prior`` if it has one) as a planN file,
    atomically; return the path.
    """
    import torch

    rules = rule_set(rules)
    named_rules(rules.name, rules.fingerprint, f"rules {rules.name!r}")
    sizes = check_table_sizes(sorted({int(size) for size in table_sizes}), "table_sizes")
    tensors = {}
    for i, (weight, bias) in enumerate(layers):
        tensors[f"layers.{i}.weight"] = torch.from_numpy(np.array(weight, dtype=np.float32))
        tensors[f"layers.{i}.bias"] = torch.from_numpy(np.array(bias, dtype=np.float32))
    if prior is not None:
        points = np.array(prior.points_to_come, dtype=np.float32).reshape(value_shape(rules))
        tensors["points_to_come"] = torch.from_numpy(points)
        tensors["lead_weight"] = torch.tensor([float(prior.weight)], dtype=torch.float32)
    metadata = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "rules": rules.name,
        "rules_fingerprint": rules.fingerprint,
        "features": num_features(rules, prior is not None),
        "table_sizes": sizes,
        "games": int(games),
        "lead_prior": prior is not None,
    }
    return write_safetensors(path, tensors, METADATA_KEY, metadata)


def _check_metadata(meta, where: str) -> dict:
    rules = check_plan_header(meta, where, FORMAT, FORMAT_VERSION, fields_of)
    prior = meta.get("lead_prior", False)
    if type(prior) is not bool:
        raise ModelLoadError(f"{where}: lead_prior must be true or false, got {str(prior)[:40]}")
    if type(meta["features"]) is not int or meta["features"] != num_features(rules, prior):
        raise ModelLoadError(
            f"{where}: features must be {num_features(rules, prior)} for the {meta['rules']} rules"
            f"{' with a lead prior' if prior else ''}, got {str(meta['features'])[:40]}"
        )
    check_table_sizes(meta["table_sizes"], where)
    return meta


def _read_prior(tensors: dict, rules: RuleSet, where: str) -> LeadPrior:
    """The lead prior's tensors, taken out of ``tensors`` and checked."""
    import torch

    missing = [name for name in PRIOR_TENSORS if name not in tensors]
    if missing:
        raise ModelLoadError(f"{where}: a file with a lead prior must hold tensor {missing[0]}")
    points, weight = (tensors.pop(name) for name in PRIOR_TENSORS)
    for name, tensor, shape in (("points_to_come", points, value_shape(rules)), ("lead_weight", weight, (1,))):
        if tensor.dtype != torch.float32:
            raise ModelLoadError(f"{where}: tensor {name} has dtype {tensor.dtype}, expected float32")
        if tuple(tensor.shape) != shape:
            raise ModelLoadError(f"{where}: tensor {name} has shape {tuple(tensor.shape)}, the {rules.name} rules need {shape}")
    value = float(weight.numpy()[0])
    if not np.isfinite(value) or abs(value) > MAX_WEIGHT:
        raise ModelLoadError(f"{where}: tensor lead_weight must be finite and at most {MAX_WEIGHT:g} in magnitude, got {value!r}")
    return LeadPrior(check_values(points.numpy().astype(np.float64), where, "points_to_come"), value)


def read_planN_file(path: str | Path) -> tuple[dict, list[tuple[np.ndarray, np.ndarray]], LeadPrior | None]:
    """The checked metadata, network layers and lead prior (None without one) of a planN file; ``ModelLoadError``
    (one line) if anything is off.
    """
    meta, tensors, where = read_network_tensors(path, "planN", METADATA_KEY, _check_metadata)
    prior = _read_prior(tensors, rule_set(meta["rules"]), where) if meta.get("lead_prior", False) else None
    return meta, check_layers(tensors, meta["features"], where, outputs=MAX_PLAYERS), prior
