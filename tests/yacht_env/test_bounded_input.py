"""Input from outside read within bounds: JSON by size and depth, only regular files, lines up to a length."""

import io
import json
import os
import socket
import stat

import pytest
from hypothesis import given
from hypothesis import strategies as st

from yacht_env.bounded_input import (
    MAX_JSON_DEPTH,
    InputBoundsError,
    _file_kind,
    bounded_lines,
    check_regular_file,
    load_json,
    nested_deeper_than,
    open_regular_file,
)


def nested(depth: int, kinds: str = "[") -> str:
    """JSON nested ``depth`` levels, the level ``i`` an array or an object as ``kinds[i % len(kinds)]`` says."""
    text = "1"
    for level in reversed(range(depth)):
        text = f"[{text}]" if kinds[level % len(kinds)] == "[" else f'{{"a": {text}}}'
    return text


def depth_by_hand(value) -> int:
    if isinstance(value, list):
        return 1 + max(map(depth_by_hand, value), default=0)
    if isinstance(value, dict):
        return 1 + max(map(depth_by_hand, value.values()), default=0)
    return 0


@pytest.mark.parametrize("kinds", ["[", "{", "[{", "{["])
def test_json_nested_to_the_limit_is_read_and_one_level_more_is_refused(kinds):
    assert depth_by_hand(load_json(nested(MAX_JSON_DEPTH, kinds), "meta")) == MAX_JSON_DEPTH
    with pytest.raises(InputBoundsError, match=f"^meta: JSON nested deeper than the {MAX_JSON_DEPTH} levels allowed$"):
        load_json(nested(MAX_JSON_DEPTH + 1, kinds), "meta")


@given(
    st.recursive(
        st.none() | st.integers() | st.text(alphabet='[]{}"\\a', max_size=6),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(alphabet='[]{}"\\', max_size=3), inner, max_size=3),
    ),
    st.integers(0, 6),
)
def test_nesting_is_the_depth_of_the_arrays_and_objects_whatever_their_strings_hold(value, limit):
    raw = json.dumps(value).encode()
    assert nested_deeper_than(raw, limit) == (depth_by_hand(value) > limit)


def test_brackets_after_a_space_or_a_mark_inside_a_string_are_text():
    assert not nested_deeper_than(b'["a ' + b"[" * 10 + b' !"]', 2)
    assert not nested_deeper_than(b'{"k": "!' + b"{" * 10 + b'"}', 2)


def test_many_brackets_side_by_side_are_no_nesting():
    assert not nested_deeper_than(b"[" + b"[], {}, " * 100 + b"[]]", 2)


def test_json_of_the_size_limit_is_read_and_one_byte_more_is_refused():
    assert load_json(b'"' + b"x" * 8 + b'"', "meta", max_bytes=10) == "x" * 8
    with pytest.raises(InputBoundsError, match="^meta: 11 bytes of JSON, more than the 10 allowed$"):
        load_json('"' + "x" * 9 + '"', "meta", max_bytes=10)
    with pytest.raises(InputBoundsError, match="^meta: 12 bytes of JSON"):
        load_json('"' + "é" * 5 + '"', "meta", max_bytes=10)  # counted in UTF-8 bytes, not characters
    with pytest.raises(InputBoundsError, match="^meta: 11 bytes of JSON"):
        load_json('"' + "\ud800" * 3 + '"', "meta", max_bytes=10)  # a lone surrogate counts its three bytes


def test_malformed_json_within_bounds_raises_as_json_does():
    with pytest.raises(json.JSONDecodeError):
        load_json("[1, 2", "meta")


def test_a_regular_file_gives_its_size_and_one_over_the_limit_is_refused_unopened(tmp_path):
    path = tmp_path / "model.json"
    path.write_bytes(b"x" * 10)
    assert check_regular_file(path) == 10 and check_regular_file(path, max_bytes=10) == 10
    with open_regular_file(path, max_bytes=10) as handle:
        assert handle.read() == b"x" * 10
    with pytest.raises(InputBoundsError, match=r"model\.json is 10 bytes, more than the 9 allowed: not read$"):
        open_regular_file(path, max_bytes=9)
    link = tmp_path / "link.json"
    link.symlink_to(path)
    assert check_regular_file(link) == 10  # a link counts as what it points to
    with pytest.raises(FileNotFoundError):
        check_regular_file(tmp_path / "missing.json")


def test_what_is_not_a_regular_file_is_refused_naming_its_kind(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(tmp_path / "sock"))
        kinds = {tmp_path: "a folder", fifo: "a FIFO", "/dev/null": "a character device", tmp_path / "sock": "a socket"}
        for path, kind in kinds.items():
            with pytest.raises(InputBoundsError, match=rf"^{path} is not a regular file \({kind}\): give a file$"):
                open_regular_file(path)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)  # still there, never opened (opening it would block)
    assert _file_kind(0) == "not a plain file"  # a kind Linux has no file of (a door, a whiteout)


def test_lines_are_numbered_from_one_with_their_newlines_the_last_without():
    lines = list(bounded_lines(io.BytesIO(b"a\nbb\n\nccc"), "games.jsonl"))
    assert lines == [(1, b"a\n"), (2, b"bb\n"), (3, b"\n"), (4, b"ccc")]


@pytest.mark.parametrize("ending", [b"\n", b""])
def test_a_line_of_the_limit_is_read_and_one_byte_more_is_refused_naming_it(ending):
    text = b"ok\n" + b"x" * 5 + ending
    assert list(bounded_lines(io.BytesIO(text), "games.jsonl", max_bytes=5))[1] == (2, b"x" * 5 + ending)
    with pytest.raises(InputBoundsError, match=r"^games\.jsonl:2: a line longer than the 5 bytes allowed$"):
        list(bounded_lines(io.BytesIO(b"ok\n" + b"x" * 6 + ending), "games.jsonl", max_bytes=5))


def test_a_long_line_is_refused_having_read_one_byte_past_the_limit_and_no_more():
    handle = io.BytesIO(b"ok\n" + b"x" * 100 + b"\n")
    with pytest.raises(InputBoundsError):
        list(bounded_lines(handle, "games.jsonl", max_bytes=5))
    assert handle.tell() == 3 + 6
