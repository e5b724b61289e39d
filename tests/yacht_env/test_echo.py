"""The one step by which an error message repeats its input: short, one line, no terminal escape."""

from __future__ import annotations

import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from yacht_env.echo import MAX_ECHO, MAX_PATH_ECHO, echoed, echoed_path
from yacht_env.safe_text import BIDI_CONTROLS


def safe(text: str) -> bool:
    """No control character, lone surrogate or bidirectional override: nothing a terminal acts on."""
    return not any(unicodedata.category(char) in ("Cc", "Cs") or char in BIDI_CONTROLS for char in text)


@given(st.text(max_size=300))
def test_a_value_is_quoted_escaped_and_cut(value):
    shown = echoed(value)
    assert safe(shown) and "\n" not in shown
    if len(value) <= MAX_ECHO:
        assert shown == repr(value)
    else:
        assert shown == repr(value[:MAX_ECHO]) + f"... ({len(value):,} characters)"


@given(st.text(max_size=600))
def test_a_path_is_unquoted_escaped_and_cut(path):
    shown = echoed_path(path)
    assert safe(shown) and "\n" not in shown
    cut = len(path) > MAX_PATH_ECHO
    assert shown.endswith(f"... ({len(path):,} characters)") == cut or path.endswith(" characters)")
    if safe(path) and not cut:
        assert shown == path  # an ordinary name as it is: accents, emoji, spaces and quotes too


def test_a_huge_value_is_bounded_whatever_its_characters():
    for value in ("x" * 100_000, "\x1b" * 100_000, "\U0010ffff" * 100_000):
        assert len(echoed(value)) < 12 * MAX_ECHO and len(echoed_path(value)) < 12 * MAX_PATH_ECHO
    assert echoed(list(range(100_000))).endswith(" characters)") and len(echoed(list(range(100_000)))) < 2 * MAX_ECHO


def test_a_value_is_cut_only_past_its_limit():
    assert echoed("x" * MAX_ECHO) == repr("x" * MAX_ECHO)
    assert echoed("x" * (MAX_ECHO + 1)) == repr("x" * MAX_ECHO) + f"... ({MAX_ECHO + 1} characters)"
    assert echoed("abc", limit=2) == "'ab'... (3 characters)"


def test_what_is_not_text_is_cut_by_its_repr_only_past_its_limit():
    # repr(12345) is 5 characters
    assert [echoed(12345, limit=limit) for limit in (6, 5, 4)] == ["12345", "12345", "1234... (5 characters)"]


def test_a_path_is_cut_only_past_its_limit():
    assert echoed_path("p" * MAX_PATH_ECHO) == "p" * MAX_PATH_ECHO
    assert echoed_path("p" * (MAX_PATH_ECHO + 1)) == "p" * MAX_PATH_ECHO + f"... ({MAX_PATH_ECHO + 1} characters)"


def test_the_security_page_states_the_bounds_the_messages_keep():
    import re
    from pathlib import Path

    page = (Path(__file__).resolve().parents[2] / "docs" / "security.md").read_text()
    said = re.search(r"cut after its first\s+(\d+) characters, a file name or URL after its first (\d+),", page)
    assert said is not None and (int(said[1]), int(said[2])) == (MAX_ECHO, MAX_PATH_ECHO)
