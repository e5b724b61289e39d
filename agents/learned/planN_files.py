"""Table planning files: a learned chance of winning for tables of 2 to 5 as safetensors tensors and plain metadata.

A ``planN:PATH`` file holds the network of :class:`agents.learned.planN.ShareValue`: tensors ``layers.<i>.weight``
(float32, ``(out, in)``) and ``layers.<i>.bias`` (float32, ``(out,)``) for ``i = 0 .. L-1``, the first reading
:func:`num_features` inputs and the last giving ``MAX_PLAYERS`` logits (one per seat, the mover's first). The
header's ``__metadata__`` holds under ``"yacht_planN"`` a JSON object: ``format`` (``"yacht-planN"``),
``format_version`` (1), ``rules`` (a name of :data:`yacht_env.rules.RULE_SETS`: any rule set, bonuses and jokers
included), ``rules_fingerprint`` (that rule set's ``fingerprint``), ``features`` (the input width), ``table_sizes``
(the table sizes it learned at, increasing, within 2 to ``MAX_PLAYERS``: the ones it plays) and ``games`` (the
self-play games it learned from).

Every field, every tensor's name, dtype and shape, and weights that are not finite or beyond the bound are
checked on load (the one check of :func:`agents.learned.plan2_files.check_layers`); anything else is a
:class:`agents.learned.model_files.ModelLoadError` naming the file and the problem in one line. A bare name
(``planN:yahtzee``) is a file the package ships (``agents/models/planN/``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from agents.learned.model_files import ModelLoadError, named_rules, write_safetensors
from agents.learned.plan2_files import read_network_file
from agents.learned.plan_files import check_plan_header
from agents.learned.ppo import SHIPPED_MODELS, shipped_file_path
from yacht_env.game import MAX_PLAYERS
from yacht_env.rules import RuleSet, rule_set

FORMAT = "yacht-planN"
FORMAT_VERSION = 1
METADATA_KEY = "yacht_planN"
FIELDS = ("format", "format_version", "rules", "rules_fingerprint", "features", "table_sizes", "games")
SHIPPED_PLANN = SHIPPED_MODELS / "planN"  # package data: planN:yacht, ...
TABLE_SIZES = tuple(range(2, MAX_PLAYERS + 1))
SEAT_EXTRA = 8  # inputs of a seat beyond its open rows (agents.learned.planN.table_features)
TABLE_EXTRA = MAX_PLAYERS  # the table size one-hot (2 .. MAX_PLAYERS) and the share of rows open


def num_features(rules: RuleSet) -> int:
    """The width of the network's input under ``rules``: ``MAX_PLAYERS`` seats of rows and sheet, and the table's."""
    return MAX_PLAYERS * (rules.num_rows + SEAT_EXTRA) + TABLE_EXTRA


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
    path: str | Path, layers: list[tuple[np.ndarray, np.ndarray]], rules: RuleSet | str, table_sizes, games: int
) -> Path:
    """Write the network ``layers`` (``(weight, bias)`` pairs) as a planN file, atomically; return the path."""
    import torch

    rules = rule_set(rules)
    named_rules(rules.name, rules.fingerprint, f"rules {rules.name!r}")
    sizes = check_table_sizes(sorted({int(size) for size in table_sizes}), "table_sizes")
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
        "table_sizes": sizes,
        "games": int(games),
    }
    return write_safetensors(path, tensors, METADATA_KEY, metadata)


def _check_metadata(meta, where: str) -> dict:
    rules = check_plan_header(meta, where, FORMAT, FORMAT_VERSION, FIELDS)
    if type(meta["features"]) is not int or meta["features"] != num_features(rules):
        raise ModelLoadError(
            f"{where}: features must be {num_features(rules)} for the {meta['rules']} rules, got {str(meta['features'])[:40]}"
        )
    check_table_sizes(meta["table_sizes"], where)
    return meta


def read_planN_file(path: str | Path) -> tuple[dict, list[tuple[np.ndarray, np.ndarray]]]:
    """The checked metadata and network layers of a planN file; ``ModelLoadError`` (one line) if anything is off."""
    return read_network_file(path, "planN", METADATA_KEY, _check_metadata, outputs=MAX_PLAYERS)
