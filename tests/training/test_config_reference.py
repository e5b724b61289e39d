"""The config reference (docs/configuration.md) against the typed config: every key of ``TrainConfig`` has one row,
in the config's order, whose type, default and bounds are the ones ``train.py`` applies to a config that leaves the
key out or sets it."""

from __future__ import annotations

import re
import types
import typing
from pathlib import Path

import annotated_types
import pytest
import yaml
from pydantic import BaseModel

from agents.training.config import ConfigError, TrainConfig, load_config

PAGE = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"
ROW = re.compile(r"^\| `(?P<key>[a-z_.]+)` \| (?P<type>[^|]+) \| `(?P<default>[^`]*)` \| (?P<bounds>[^|]*) \| (?P<what>.*) \|$")


def keys(model: type[BaseModel] = TrainConfig, prefix: str = "") -> list[str]:
    """Every leaf key of the config, as ``section.key``, in the order the classes declare them."""
    found = []
    for name, field in model.model_fields.items():
        if isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel):
            found += keys(field.annotation, f"{prefix}{name}.")
        else:
            found.append(f"{prefix}{name}")
    return found


def field_of(key: str):
    model, *path, name = [TrainConfig, *key.split(".")]
    for section in path:
        model = model.model_fields[section].annotation
    return model.model_fields[name]


def type_text(annotation) -> str:
    """How the reference names a key's type."""
    if typing.get_origin(annotation) is typing.Literal:
        return "one of " + ", ".join(f"`{value}`" for value in typing.get_args(annotation))
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return " or ".join(type_text(part) for part in typing.get_args(annotation))
    if typing.get_origin(annotation) is list:
        return "list of " + type_text(typing.get_args(annotation)[0]) + "s"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "{" + ", ".join(annotation.model_fields) + "}"
    return {int: "integer", float: "number", bool: "boolean", str: "text", type(None): "null"}[annotation]


def bounds_text(field) -> str:
    """The bounds the field's own metadata sets (a validator's checks are said in words, in the last column)."""
    kinds = {annotated_types.Ge: "ge", annotated_types.Gt: "gt", annotated_types.Le: "le", annotated_types.Lt: "lt"}
    limits = {kinds[type(item)]: getattr(item, kinds[type(item)]) for item in field.metadata if type(item) in kinds}
    parts = []
    if "ge" in limits and "le" in limits:
        parts.append(f"{limits['ge']:,} to {limits['le']:,}")
    else:
        parts += [
            f"{sign} {limits[name]:,}" for name, sign in (("ge", ">="), ("gt", ">"), ("le", "<="), ("lt", "<")) if name in limits
        ]
    shortest = next((item.min_length for item in field.metadata if isinstance(item, annotated_types.MinLen)), None)
    longest = next((item.max_length for item in field.metadata if isinstance(item, annotated_types.MaxLen)), None)
    if longest is not None:
        unit = "items" if typing.get_origin(field.annotation) is list else "characters"
        parts.append(f"{shortest:,} to {longest:,} {unit}" if shortest is not None else f"at most {longest:,} {unit}")
    for item in field.metadata:
        if getattr(item, "pattern", None):
            parts.append(f"matches `{item.pattern}`")
        if getattr(item, "allow_inf_nan", None) is False:
            parts.append("finite")
    return "; ".join(parts)


def default_of(key: str):
    """The value a config that leaves ``key`` out gets."""
    value = TrainConfig().model_dump()
    for part in key.split("."):
        value = value[part]
    return value


def page_rows() -> dict[str, re.Match]:
    rows: dict[str, re.Match] = {}
    for line in PAGE.read_text(encoding="utf-8").splitlines():
        if match := ROW.match(line):
            assert match["key"] not in rows, f"{match['key']} has two rows"
            rows[match["key"]] = match
    return rows


def config_setting(folder: Path, key: str, value) -> Path:
    """A config file that sets only ``key`` (``section.name`` or a top-level name) to ``value``."""
    section, _, name = key.rpartition(".")
    path = folder / "config.yaml"
    path.write_text(yaml.safe_dump({section: {name: value}} if section else {name: value}), encoding="utf-8")
    return path


def test_the_reference_has_a_row_for_every_key_in_the_config_s_order():
    assert list(page_rows()) == keys()


@pytest.mark.parametrize("key", keys())
def test_each_row_gives_the_key_s_type_default_and_bounds(key):
    row, field = page_rows()[key], field_of(key)
    assert row["type"].strip() == type_text(field.annotation)
    assert yaml.safe_load(row["default"]) == default_of(key), f"{key}: the default is {default_of(key)!r}"
    assert row["bounds"].strip() == bounds_text(field)
    assert len(row["what"].strip()) > 10, f"{key}: say what it sets"


@pytest.mark.parametrize("key", keys())
def test_a_config_that_sets_each_key_to_its_documented_default_changes_nothing(key, tmp_path):
    """The defaults as the page writes them are YAML a config can hold: setting one changes nothing."""
    assert load_config(config_setting(tmp_path, key, yaml.safe_load(page_rows()[key]["default"]))) == TrainConfig()


def test_a_bound_the_reference_gives_is_the_one_the_config_applies(tmp_path):
    """The bounds read from the fields are the ones validation applies: just inside passes, just outside is refused."""
    for key, inside, outside in (("seed", 2**32 - 1, 2**32), ("ppo.n_epochs", 10_000, 10_001), ("env.num_envs", 1, 0)):
        assert bounds_text(field_of(key)) != ""
        load_config(config_setting(tmp_path, key, inside))
        with pytest.raises(ConfigError, match=key.rpartition(".")[2]):
            load_config(config_setting(tmp_path, key, outside))


def test_an_empty_mapping_is_a_whole_config_of_the_defaults(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text("{}\n", encoding="utf-8")
    config = load_config(path)
    assert config == TrainConfig() and (config.algorithm, config.env.rules, config.ppo.total_timesteps) == (
        "ppo",
        "yacht",
        200_000,
    )


@pytest.mark.parametrize("section", ["ppo", "dqn", "plan"])
def test_every_network_s_layers_are_bounded_alike(section):
    """One type bounds the hidden layers of every network: 1 to 64 layers, each 1 to 65,536 wide."""
    for widths in ([1], [65_536], [1] * 64):
        assert getattr(load_config(None, [f"{section}.net_arch={widths}"]), section).net_arch == widths
    for widths, message in (
        ([], "List should have at least 1 item"),
        ([1] * 65, "List should have at most 64 items"),
        ([0, 64], "layer widths must be >= 1, got [0, 64]"),
        ([65_537], "layer widths must be at most 65,536, got [65537]"),
    ):
        with pytest.raises(ConfigError) as error:
            load_config(None, [f"{section}.net_arch={widths}"])
        assert f"{section}.net_arch" in str(error.value) and message in str(error.value), str(error.value)
