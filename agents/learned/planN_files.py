"""Table planning files: learned chances of winning for tables of 2 to 5 as safetensors tensors and plain metadata.

A ``planN:PATH`` file holds one or more networks of :class:`agents.learned.planN.ShareValue`, each for the table
sizes it learned at (a table size is played by the one network that learned it). Network ``k`` is the tensors
``networks.<k>.layers.<i>.weight`` (float32, ``(out, in)``) and ``networks.<k>.layers.<i>.bias`` (float32,
``(out,)``) for ``i = 0 .. L-1``, the first reading :func:`num_features` inputs and the last giving ``MAX_PLAYERS``
logits (one per seat, the mover's first). The header's ``__metadata__`` holds under ``"yacht_planN"`` a JSON object:
``format`` (``"yacht-planN"``), ``format_version`` (3), ``rules`` (a name of :data:`yacht_env.rules.RULE_SETS`: any
rule set, bonuses and jokers included), ``rules_fingerprint`` (that rule set's ``fingerprint``), ``features`` (the
input width), ``table_sizes`` (every table size a network learned at, increasing, within 2 to ``MAX_PLAYERS``: the
ones the file plays), ``games`` (the self-play games its networks learned from, all together), ``lead_prior`` (true
or false) and ``networks`` (one object per network, in order: its ``table_sizes``, increasing, no size in two
networks, and its ``games``). A file with a lead prior (:class:`LeadPrior`) also holds ``points_to_come`` (float32,
the shape of a plan file's value table, :func:`agents.learned.plan_files.value_shape`: each sheet's points still to
come, as a solitaire planner learned them, shared by its networks) and each network's ``networks.<k>.lead_weight``
(float32, ``(1,)``), and its networks read :data:`PRIOR_EXTRA` more inputs per seat.

Files of format versions 1 and 2 hold one network, ``layers.<i>.weight`` / ``layers.<i>.bias`` (and, in version 2
with a lead prior, ``lead_weight``), for all of their ``table_sizes``; version 1 has no ``lead_prior`` field (no
prior). They are read as they are.

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
from agents.learned.plan_files import check_games, check_plan_header, check_values, value_shape
from agents.learned.ppo import SHIPPED_MODELS, shipped_file_path
from yacht_env.game import MAX_PLAYERS
from yacht_env.rules import RuleSet, rule_set

FORMAT = "yacht-planN"
FORMAT_VERSION = 3
METADATA_KEY = "yacht_planN"
FIELDS_V1 = ("format", "format_version", "rules", "rules_fingerprint", "features", "table_sizes", "games")
FIELDS_V2 = (*FIELDS_V1, "lead_prior")
FIELDS = (*FIELDS_V2, "networks")
NETWORK_FIELDS = ("table_sizes", "games")  # what the metadata says of each network
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


class PlanNNetwork(NamedTuple):
    """One network of a planN file: the table sizes it learned at (and plays), the self-play games it learned from,
    its ``(weight, bias)`` layers (weight ``(out, in)``) and its lead prior (None: none).
    """

    table_sizes: tuple[int, ...]
    games: int
    layers: list[tuple[np.ndarray, np.ndarray]]
    prior: LeadPrior | None = None


def num_features(rules: RuleSet, prior: bool = False) -> int:
    """The width of the network's input under ``rules``: ``MAX_PLAYERS`` seats of rows and sheet (and, with a lead
    ``prior``, its points to come and expected lead), and the table's.
    """
    return MAX_PLAYERS * (rules.num_rows + SEAT_EXTRA + (PRIOR_EXTRA if prior else 0)) + TABLE_EXTRA


def fields_of(version: int) -> tuple[str, ...]:
    """The metadata fields of a planN file of format ``version``."""
    return {1: FIELDS_V1, 2: FIELDS_V2}.get(version, FIELDS)


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
    """Write the network ``layers`` (``(weight, bias)`` pairs, with its lead ``prior`` if it has one), learned at
    ``table_sizes``, as a planN file of one network, atomically; return the path.
    """
    return write_planN_networks(path, [PlanNNetwork(tuple(table_sizes), games, layers, prior)], rules)


def write_planN_networks(path: str | Path, networks: list[PlanNNetwork], rules: RuleSet | str) -> Path:
    """Write ``networks`` (each for its own table sizes; with a lead prior all or none, on one table of points to
    come) as a planN file, atomically; return the path. ``ValueError`` naming the problem if they do not fit together.
    """
    import torch

    rules = rule_set(rules)
    named_rules(rules.name, rules.fingerprint, f"rules {rules.name!r}")
    networks = list(networks)
    groups = [check_table_sizes(sorted({int(size) for size in network.table_sizes}), "table_sizes") for network in networks]
    sizes = sorted(size for group in groups for size in group)
    if not networks or len(set(sizes)) != len(sizes):
        raise ValueError(f"a planN file needs one network or more, no table size in two of them; got table sizes {groups}")
    priors = [network.prior for network in networks]
    if len({prior is None for prior in priors}) != 1:
        raise ValueError("a planN file's networks either all have a lead prior or none has")
    tables = [np.array(prior.points_to_come, dtype=np.float32).reshape(value_shape(rules)) for prior in priors if prior]
    points = tables[0] if tables else None
    if any(not np.array_equal(table, tables[0]) for table in tables):
        raise ValueError("a planN file's networks must share one lead prior's points to come")
    tensors = {}
    for k, network in enumerate(networks):
        for i, (weight, bias) in enumerate(network.layers):
            tensors[f"networks.{k}.layers.{i}.weight"] = torch.from_numpy(np.array(weight, dtype=np.float32))
            tensors[f"networks.{k}.layers.{i}.bias"] = torch.from_numpy(np.array(bias, dtype=np.float32))
        if network.prior is not None:
            tensors[f"networks.{k}.lead_weight"] = torch.tensor([float(network.prior.weight)], dtype=torch.float32)
    if points is not None:
        tensors["points_to_come"] = torch.from_numpy(points)
    metadata = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "rules": rules.name,
        "rules_fingerprint": rules.fingerprint,
        "features": num_features(rules, points is not None),
        "table_sizes": sizes,
        "games": int(sum(int(network.games) for network in networks)),
        "lead_prior": points is not None,
        "networks": [{"table_sizes": group, "games": int(network.games)} for group, network in zip(groups, networks)],
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
    if "networks" in meta:
        _check_networks(meta, where)
    return meta


def _check_networks(meta: dict, where: str) -> None:
    """A version 3 file's ``networks``: one object or more of :data:`NETWORK_FIELDS`, whose table sizes split the file's
    and whose games add up to its.
    """
    networks = meta["networks"]
    if not isinstance(networks, list) or not 1 <= len(networks) <= len(TABLE_SIZES):
        raise ModelLoadError(f"{where}: networks must be a list of 1 to {len(TABLE_SIZES)} objects, got {str(networks)[:80]}")
    for k, network in enumerate(networks):
        if not isinstance(network, dict) or sorted(network) != sorted(NETWORK_FIELDS):
            fields = ", ".join(NETWORK_FIELDS)
            raise ModelLoadError(f"{where}: networks[{k}] must be an object of {fields}, got {str(network)[:80]}")
        check_table_sizes(network["table_sizes"], f"{where}: networks[{k}]")
        check_games(network["games"], f"{where}: networks[{k}]")
    sizes = sorted(size for network in networks for size in network["table_sizes"])
    if sizes != meta["table_sizes"]:
        raise ModelLoadError(
            f"{where}: the networks' table sizes {[n['table_sizes'] for n in networks]} must split table_sizes "
            f"{meta['table_sizes']}, each size in one network"
        )
    if sum(network["games"] for network in networks) != meta["games"]:
        raise ModelLoadError(f"{where}: the networks' games must add up to games ({meta['games']:,})")


def _network_tensors(tensors: dict, prefix: str) -> dict:
    """The tensors under ``prefix``, taken out of ``tensors``, named without it."""
    return {name[len(prefix) :]: tensors.pop(name) for name in [name for name in tensors if name.startswith(prefix)]}


def _check_lead_weight(weight, where: str, name: str) -> float:
    import torch

    if weight.dtype != torch.float32:
        raise ModelLoadError(f"{where}: tensor {name} has dtype {weight.dtype}, expected float32")
    if tuple(weight.shape) != (1,):
        raise ModelLoadError(f"{where}: tensor {name} has shape {tuple(weight.shape)}, expected (1,)")
    value = float(weight.numpy()[0])
    if not np.isfinite(value) or abs(value) > MAX_WEIGHT:
        raise ModelLoadError(f"{where}: tensor {name} must be finite and at most {MAX_WEIGHT:g} in magnitude, got {value!r}")
    return value


def _read_points(tensors: dict, rules: RuleSet, where: str) -> np.ndarray:
    """The lead prior's points to come, taken out of ``tensors`` and checked."""
    import torch

    if "points_to_come" not in tensors:
        raise ModelLoadError(f"{where}: a file with a lead prior must hold tensor points_to_come")
    points = tensors.pop("points_to_come")
    if points.dtype != torch.float32:
        raise ModelLoadError(f"{where}: tensor points_to_come has dtype {points.dtype}, expected float32")
    if tuple(points.shape) != value_shape(rules):
        raise ModelLoadError(
            f"{where}: tensor points_to_come has shape {tuple(points.shape)}, the {rules.name} rules need {value_shape(rules)}"
        )
    return check_values(points.numpy().astype(np.float64), where, "points_to_come")


def _read_network(tensors: dict, meta: dict, points, where: str, sizes, games: int, prefix: str) -> PlanNNetwork:
    """The network whose tensors are named ``prefix...`` (and its lead weight), taken out of ``tensors`` and checked."""
    own = _network_tensors(tensors, prefix)
    prior = None
    if points is not None:
        if "lead_weight" not in own:
            raise ModelLoadError(f"{where}: a file with a lead prior must hold tensor {prefix}lead_weight")
        prior = LeadPrior(points, _check_lead_weight(own.pop("lead_weight"), where, f"{prefix}lead_weight"))
    layers = check_layers(own, meta["features"], where if not prefix else f"{where}: {prefix[:-1]}", outputs=MAX_PLAYERS)
    return PlanNNetwork(tuple(sizes), games, layers, prior)


def read_planN_file(path: str | Path) -> tuple[dict, list[PlanNNetwork]]:
    """The checked metadata and networks of a planN file; ``ModelLoadError`` (one line) if anything is off."""
    meta, tensors, where = read_network_tensors(path, "planN", METADATA_KEY, _check_metadata)
    points = _read_points(tensors, rule_set(meta["rules"]), where) if meta.get("lead_prior", False) else None
    if "networks" not in meta:  # versions 1 and 2: one network, its tensors unprefixed
        return meta, [_read_network(tensors, meta, points, where, meta["table_sizes"], meta["games"], "")]
    networks = [
        _read_network(tensors, meta, points, where, network["table_sizes"], network["games"], f"networks.{k}.")
        for k, network in enumerate(meta["networks"])
    ]
    if tensors:
        raise ModelLoadError(f"{where}: unexpected tensor(s) {sorted(tensors)[:4]}")
    return meta, networks


def network_for(networks: list[PlanNNetwork], num_players: int) -> PlanNNetwork | None:
    """The network of ``networks`` that learned at a table of ``num_players`` (None: none did)."""
    return next((network for network in networks if num_players in network.table_sizes), None)
