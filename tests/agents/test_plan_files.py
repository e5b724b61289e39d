"""Plan files read as a stranger's: every field, size and value checked at its limit, in one line naming it."""

import json

import numpy as np
import pytest
import torch
from safetensors import safe_open
from safetensors.torch import save

from agents.learned.model_files import ModelLoadError
from agents.learned.plan2_files import read_plan2_file
from agents.learned.plan_files import (
    METADATA_KEY,
    check_games,
    check_plan_header,
    check_values,
    plan_file_path,
    read_plan_file,
    value_shape,
    write_plan_file,
)
from yacht_env.rules import YACHT, rule_set

WHERE = "plan file 'x'"


def test_the_value_table_has_a_sheet_per_set_of_open_rows_a_subtotal_up_to_the_bonus_and_a_yahtzee_box_where_kept():
    """Yacht: 12 rows, no bonus, no box; Yahtzee: 13 rows, a 63-point bonus, a box; Yatzy: 15 rows, a 63-point bonus."""
    assert value_shape(rule_set("yacht")) == (4096, 1, 1)
    assert value_shape(rule_set("yahtzee")) == (8192, 64, 2)
    assert value_shape(rule_set("yatzy")) == (32768, 64, 1)


def test_a_bare_name_is_a_shipped_plan_and_a_path_is_itself(tmp_path):
    shipped = plan_file_path("yacht")
    assert shipped.parts[-2:] == ("plan", "yacht.safetensors") and shipped.is_file()
    own = tmp_path / "mine.safetensors"
    own.write_bytes(b"")
    assert plan_file_path(str(own)) == own


# -- games ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("games", [0, 1, 10**15])
def test_games_from_none_to_a_checkpoint_name_s_fifteen_digits_are_taken(games):
    assert check_games(games, WHERE) == games


@pytest.mark.parametrize("games", [-1, 10**15 + 1, 5.0, True, "5", None])
def test_games_below_0_past_fifteen_digits_or_not_an_int_are_refused_naming_the_limit(games):
    with pytest.raises(ModelLoadError) as error:
        check_games(games, WHERE)
    assert str(error.value) == f"{WHERE}: games must be an integer >= 0 and at most 1,000,000,000,000,000, got {games!r}"


def test_a_long_games_value_is_echoed_cut_to_sixty_characters():
    with pytest.raises(ModelLoadError) as error:
        check_games("9" * 100, WHERE)
    assert str(error.value).endswith(", got '" + "9" * 59)


# -- values -----------------------------------------------------------------------------------------


def table(shape=(4, 2, 2), fill=5.0):
    """A value table: ``fill`` at every sheet but the full one (sheet 0), which is worth 0."""
    values = np.full(shape, fill)
    values[0] = 0.0
    return values


@pytest.mark.parametrize("largest", [1e6, -1e6, 0.0])
def test_values_up_to_a_million_points_in_magnitude_are_taken(largest):
    values = table()
    values[-1, -1, -1] = largest
    assert check_values(values, WHERE) is values


@pytest.mark.parametrize("largest, shown", [(1e6 + 0.5, "1e+06"), (-2e6, "2e+06"), (5e9, "5e+09")])
def test_values_past_a_million_points_in_magnitude_are_refused(largest, shown):
    values = table()
    values[1, 0, 1] = largest
    with pytest.raises(ModelLoadError) as error:
        check_values(values, WHERE)
    assert str(error.value) == f"{WHERE}: tensor values holds a value of magnitude {shown}, above 1e+06 points"


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_values_that_are_not_finite_are_refused_naming_the_tensor(bad):
    values = table()
    values[2, 1, 0] = bad
    with pytest.raises(ModelLoadError) as error:
        check_values(values, WHERE, "points_to_come")
    assert str(error.value) == f"{WHERE}: tensor points_to_come holds NaN or infinite values"


@pytest.mark.parametrize("value", [7.0, -7.0])
def test_a_full_sheet_worth_anything_but_0_is_refused_with_its_value(value):
    """The first entry of the full sheet is shown, not those of the sheets after it."""
    values = table(fill=3.0)
    values[0, 0, 0] = value
    with pytest.raises(ModelLoadError) as error:
        check_values(values, WHERE)
    assert str(error.value) == f"{WHERE}: the value of the full sheet (no row open) must be 0, got {value!r}"


def test_only_the_full_sheet_must_be_worth_0():
    values = table(fill=-2.0)
    values[1] = 9.0
    assert check_values(values, WHERE) is values


# -- headers ----------------------------------------------------------------------------------------


def header(**changes):
    meta = {
        "format": "yacht-plan",
        "format_version": 1,
        "rules": "yacht",
        "rules_fingerprint": YACHT.fingerprint,
        "value_model": "tabular",
        "games": 10,
    }
    meta.update(changes)
    return meta


FIELDS = ("format", "format_version", "rules", "rules_fingerprint", "value_model", "games")


@pytest.mark.parametrize("fields", [FIELDS, lambda version: FIELDS])
def test_a_planning_header_gives_its_rules_with_fields_as_a_tuple_or_by_version(fields):
    assert check_plan_header(header(), WHERE, "yacht-plan", 1, fields) is YACHT


@pytest.mark.parametrize("fingerprint", [5, None, ["x"]])
def test_a_rules_fingerprint_that_is_not_a_string_is_refused(fingerprint):
    with pytest.raises(ModelLoadError) as error:
        check_plan_header(header(rules_fingerprint=fingerprint), WHERE, "yacht-plan", 1, FIELDS)
    assert str(error.value) == f"{WHERE}: rules_fingerprint must be a string, got {fingerprint!r}"


def test_a_header_s_games_are_checked():
    with pytest.raises(ModelLoadError, match="games must be an integer"):
        check_plan_header(header(games=10**15 + 1), WHERE, "yacht-plan", 1, FIELDS)


# -- files ------------------------------------------------------------------------------------------


def stored_metadata(path):
    with safe_open(str(path), "pt") as handle:
        return json.loads(handle.metadata()[METADATA_KEY])


@pytest.mark.parametrize("value_model", ["tabular", "net"])
def test_a_plan_file_is_written_as_version_1_and_reads_back_as_float64_values(tmp_path, value_model):
    values = table(value_shape(YACHT), fill=0.25)
    path = write_plan_file(tmp_path / "p.safetensors", values.reshape(-1), "yacht", value_model, np.int64(42))
    expected = header(value_model=value_model, games=42)
    assert stored_metadata(path) == expected
    meta, read = read_plan_file(path)
    assert meta == expected
    assert read.dtype == np.float64 and read.shape == (4096, 1, 1)
    np.testing.assert_array_equal(read, values)


def test_a_plan_file_of_a_yahtzee_box_keeps_every_sheet_state_apart(tmp_path):
    rules = rule_set("yahtzee")
    values = np.arange(np.prod(value_shape(rules)), dtype=np.float64).reshape(value_shape(rules)) % 1000
    values[0] = 0.0
    path = write_plan_file(tmp_path / "p.safetensors", values, rules, "net", 0)
    np.testing.assert_array_equal(read_plan_file(path)[1], values)


def test_a_value_model_other_than_a_table_or_a_network_is_not_written(tmp_path):
    with pytest.raises(ValueError) as error:
        write_plan_file(tmp_path / "p.safetensors", table(value_shape(YACHT)), "yacht", "forest", 0)
    assert str(error.value) == "value_model must be one of tabular, net, got 'forest'"
    assert not (tmp_path / "p.safetensors").exists()


def write_raw(path, tensors, metadata=None):
    path.write_bytes(save(tensors, metadata={METADATA_KEY: json.dumps(metadata or header())}))
    return path


ZEROS = torch.zeros((4096, 1, 1))


@pytest.mark.parametrize(
    "tensors, problem",
    [
        ({"other": ZEROS}, "expected exactly one tensor 'values', got ['other']"),
        ({}, "expected exactly one tensor 'values', got []"),
        (
            {name: torch.zeros(1) for name in "abcdefg"},
            "expected exactly one tensor 'values', got ['a', 'b', 'c', 'd', 'e']",
        ),
        ({"values": torch.zeros((4095, 1, 1))}, "tensor values has shape (4095, 1, 1), the yacht rules need (4096, 1, 1)"),
        ({"values": torch.zeros((4096, 1, 2))}, "tensor values has shape (4096, 1, 2), the yacht rules need (4096, 1, 1)"),
        ({"values": torch.zeros(4096)}, "tensor values has shape (4096,), the yacht rules need (4096, 1, 1)"),
        ({"values": ZEROS.half()}, "tensor values has dtype torch.float16, expected float32"),
        ({"values": ZEROS.double()}, "tensor values has dtype torch.float64, expected float32"),
    ],
)
def test_a_plan_file_s_tensors_are_refused_in_one_line_naming_what_is_wrong(tmp_path, tensors, problem):
    path = write_raw(tmp_path / "bad.safetensors", tensors)
    with pytest.raises(ModelLoadError) as error:
        read_plan_file(path)
    assert str(error.value) == f"plan file {str(path)!r}: {problem}"


def test_a_plan_file_s_values_are_checked_on_load(tmp_path):
    path = write_raw(tmp_path / "bad.safetensors", {"values": torch.full((4096, 1, 1), 2e6)})
    with pytest.raises(ModelLoadError, match="above 1e"):
        read_plan_file(path)


@pytest.mark.parametrize("value_model", ["forest", 1, None])
def test_a_plan_file_of_another_value_model_is_refused(tmp_path, value_model):
    path = write_raw(tmp_path / "bad.safetensors", {"values": ZEROS}, header(value_model=value_model))
    with pytest.raises(ModelLoadError) as error:
        read_plan_file(path)
    assert str(error.value) == f"plan file {str(path)!r}: value_model must be one of tabular, net, got {value_model!r}"


def test_a_version_1_header_written_by_hand_reads(tmp_path):
    path = write_raw(tmp_path / "p.safetensors", {"values": ZEROS})
    assert read_plan_file(path)[0]["format_version"] == 1


# -- what is not a plan file, for both planners' files -------------------------------------------------

READERS = [(read_plan_file, "plan"), (read_plan2_file, "plan2")]


@pytest.mark.parametrize("read, kind", READERS)
@pytest.mark.parametrize("start", [b"PA", b"P", b"\x00\x00", b"Q", b"zz"])
def test_a_file_starting_otherwise_than_a_zip_is_not_called_one(tmp_path, read, kind, start):
    path = tmp_path / "p.safetensors"
    path.write_bytes(start + b" not safetensors at all")
    with pytest.raises(ModelLoadError) as error:
        read(path)
    assert "zip" not in str(error.value) and "not a readable" in str(error.value)


@pytest.mark.parametrize("read, kind", READERS)
def test_a_zip_is_refused_before_it_is_parsed(tmp_path, read, kind):
    path = tmp_path / "p.safetensors"
    path.write_bytes(b"PK\x03\x04")
    with pytest.raises(ModelLoadError) as error:
        read(path)
    assert str(error.value) == f"{kind} file {str(path)!r} is a zip, not a .safetensors {kind} file written by train.py"


@pytest.mark.parametrize("read, kind", READERS)
def test_a_folder_is_no_plan_file(tmp_path, read, kind):
    with pytest.raises(ModelLoadError) as error:
        read(tmp_path)
    assert str(error.value) == f"no {kind} file at {str(tmp_path)!r}: expected a .safetensors file written by train.py"
