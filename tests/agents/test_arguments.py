"""The numbers of policy names (``target:200``, ``softmax:1.5``): one reading, and one line refusing a bad one."""

import pytest

from agents.policies.arguments import name_number, refusal
from yacht_env.echo import echoed
from yacht_env.option_values import MAX_NUMBER_TEXT

ALLOWED = "T must be a number"


@pytest.mark.parametrize(("name", "whole", "number"), [("target:200", True, 200), ("target:007", True, 7)])
def test_a_whole_number_is_read_as_an_int(name, whole, number):
    value = name_number(name, "target:", whole, ALLOWED)
    assert value == number and type(value) is int


@pytest.mark.parametrize(("text", "number"), [("1.5", 1.5), (".5", 0.5), ("2e-3", 0.002), ("3", 3.0), ("4.", 4.0)])
def test_a_decimal_is_read_as_a_float(text, number):
    value = name_number(f"softmax:{text}", "softmax:", False, ALLOWED)
    assert value == number and type(value) is float


def test_a_number_of_the_longest_length_is_read_and_one_character_more_is_refused():
    longest = "1" + "0" * (MAX_NUMBER_TEXT - 1)
    assert name_number(f"target:{longest}", "target:", True, ALLOWED) == 10 ** (MAX_NUMBER_TEXT - 1)
    with pytest.raises(ValueError):
        name_number(f"target:{longest}0", "target:", True, ALLOWED)


@pytest.mark.parametrize(
    ("name", "whole"),
    [("target:", True), ("target:1.5", True), ("target:-3", True), ("target:٣", True), ("softmax:-1", False)]
    + [("softmax:inf", False), ("softmax:nan", False), ("softmax:1e", False), ("softmax: 1", False)],
)
def test_anything_else_is_refused_in_one_line_naming_the_name_and_what_is_allowed(name, whole):
    with pytest.raises(ValueError) as error:
        name_number(name, name.split(":")[0] + ":", whole, ALLOWED)
    assert str(error.value) == f"policy {echoed(name)}: {ALLOWED}" == refusal(name, ALLOWED)


def test_a_refusal_shows_a_long_or_hostile_name_shortened_and_escaped():
    name = "softmax:\x1b]0;owned\x07" + "9" * 100
    line = refusal(name, ALLOWED)
    assert "\x1b" not in line and "\n" not in line and line.endswith(f"characters): {ALLOWED}")
