"""The numbers a person types (:mod:`yacht_env.option_values`): ASCII forms read as ``int`` and ``float`` read them,
everything else refused in one line naming the value and the allowed form."""

from __future__ import annotations

import argparse
import math
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from yacht_env.echo import echoed
from yacht_env.option_values import DECIMAL, MAX_LIST_TEXT, MAX_NUMBER_TEXT, decimal_number, whole_number, whole_numbers

NON_ASCII_DIGITS = st.characters(categories=["Nd"]).filter(lambda c: not "0" <= c <= "9")  # ٣, ८, ௫, 𝟙, ...


def refusal(read, text: str) -> str:
    with pytest.raises(argparse.ArgumentTypeError) as error:
        read(text)
    message = str(error.value)
    assert "\n" not in message and message.startswith("expected ")
    return message


@given(st.integers(0, 10**30))
def test_a_whole_number_in_ascii_digits_is_read_as_int_reads_it(n):
    assert whole_number()(str(n)) == n
    assert whole_number(least=None)(str(-n)) == -n  # a negative number where the option allows one


@given(st.integers(-(10**6), 10**6), st.integers(-(10**6), 10**6), st.integers(-(10**6), 10**6))
def test_a_whole_number_outside_its_bounds_is_refused_naming_it_and_the_bounds(n, a, b):
    least, most = min(a, b), max(a, b)
    read = whole_number(noun="a count", least=least, most=most)
    if least <= n <= most:
        assert read(str(n)) == n
    else:
        assert refusal(read, str(n)) == f"expected a count from {least} to {most}, got {n}"


@given(st.lists(NON_ASCII_DIGITS, min_size=1, max_size=6), st.lists(st.sampled_from("0123456789"), max_size=3))
def test_any_other_script_s_digits_are_refused_though_int_reads_them(digits, ascii_digits):
    text = "".join(ascii_digits + digits)
    assert refusal(whole_number(), text) == f"expected an integer 0 or more in digits 0-9, got {echoed(text)}"
    assert "in digits 0-9" in refusal(decimal_number(), text)


@pytest.mark.parametrize("text", [" 5", "5 ", "+5", "1_0", "5.0", "0x10", "--5", "-", "", "٨٠٨٠", "5\n", "²"])
def test_forms_int_reads_or_a_person_may_not_mean_are_refused(text):
    assert refusal(whole_number(least=None), text) == f"expected an integer in digits 0-9, got {echoed(text)}"


@given(st.floats(min_value=0, allow_infinity=False, allow_nan=False))
def test_a_decimal_as_python_writes_it_is_read_back_exactly(x):
    assert decimal_number()(repr(x)) == x
    assert decimal_number(least=None)(repr(-x)) == -x


@given(st.from_regex(DECIMAL, fullmatch=True).filter(lambda text: len(text) <= MAX_NUMBER_TEXT))
def test_every_decimal_form_is_read_as_float_reads_it_or_refused_when_not_finite(text):
    if math.isfinite(float(text)):
        assert decimal_number()(text) == float(text)
    else:  # 1e999
        assert refusal(decimal_number(), text) == f"expected a number 0 or more, got {text}"


@pytest.mark.parametrize("text", ["nan", "inf", "-inf", "NaN", "infinity", "1_0", " 1.5", "1.5 ", "1,5", "1e", "e3", "."])
def test_what_float_reads_beyond_a_person_s_number_is_refused(text):
    message = refusal(decimal_number(least=None), text)
    assert message == f"expected a number in digits 0-9 (a point and an exponent allowed), got {echoed(text)}"


@given(st.text(min_size=MAX_NUMBER_TEXT + 1, max_size=200))
def test_a_value_longer_than_any_number_is_refused_and_echoed_short(text):
    message = refusal(whole_number(), text)
    assert message == f"expected an integer 0 or more of at most {MAX_NUMBER_TEXT} characters, got {echoed(text)}"
    assert not re.search(r"[\x00-\x1f\x7f]", message)  # echoed: cut at 60 characters, control characters escaped


def test_the_bounds_are_keyword_arguments_so_that_a_forgotten_call_fails_at_once():
    with pytest.raises(TypeError):
        whole_number("5")  # type=whole_number without () would read every value as a noun


@given(st.floats(-1e6, 1e6), st.floats(-1e6, 1e6), st.floats(-1e6, 1e6))
def test_a_decimal_outside_its_bounds_is_refused_naming_it_and_the_bounds(x, a, b):
    least, most = min(a, b), max(a, b)
    read = decimal_number(noun="a temperature", least=least, most=most)
    if least <= x <= most:
        assert read(repr(x)) == x
    else:
        assert refusal(read, repr(x)) == f"expected a temperature from {least:g} to {most:g}, got {x!r}"


@pytest.mark.parametrize("text", ["-0.5", "-1", "-1e-9"])
def test_a_decimal_option_is_zero_or_more_unless_told(text):
    assert refusal(decimal_number(), text) == f"expected a number 0 or more, got {text}"
    assert decimal_number(least=None)(text) == float(text)


@pytest.mark.parametrize("text", ["1e999", "-1e999", "2e308"])
def test_a_decimal_too_large_for_a_float_is_refused_even_with_no_bounds(text):
    assert refusal(decimal_number(least=None), text) == f"expected a number, got {text}"


@pytest.mark.parametrize(
    ("read", "text", "message"),
    [
        (whole_number(noun="a port", most=65535), "70000", "expected a port from 0 to 65535, got 70000"),
        (whole_number(least=1_000_000), "5", "expected an integer 1000000 or more, got 5"),
        (whole_number(least=None, most=10**20), str(10**21), f"expected an integer {10**20} or less, got {10**21}"),
        (decimal_number(most=0.001), "0.5", "expected a number from 0 to 0.001, got 0.5"),
        (decimal_number(least=1.5), "1", "expected a number 1.5 or more, got 1"),
    ],
)
def test_a_refusal_writes_whole_bounds_in_full_and_decimal_bounds_short(read, text, message):
    assert refusal(read, text) == message


def test_a_number_of_32_characters_is_read_and_one_of_33_is_refused():
    assert whole_number()("9" * 32) == int("9" * 32)
    assert decimal_number()("0." + "5" * 30) == float("0." + "5" * 30)
    assert refusal(whole_number(), "9" * 33) == f"expected an integer 0 or more of at most 32 characters, got {echoed('9' * 33)}"
    assert "of at most 32 characters" in refusal(decimal_number(), "0." + "5" * 31)


@given(st.lists(st.integers(-(10**6), 10**6), min_size=1, max_size=12), st.integers(-50, 50), st.integers(-50, 50))
def test_a_list_of_whole_numbers_is_read_in_order_or_refused_whole_naming_it_and_the_bounds(numbers, a, b):
    least, most = min(a, b), max(a, b)
    read = whole_numbers(noun="table sizes", least=least, most=most)
    text = ",".join(map(str, numbers))
    if all(least <= n <= most for n in numbers):
        assert read(text) == numbers
    else:
        assert refusal(read, text) == f"expected table sizes from {least} to {most}, comma-separated, got {echoed(text)}"


@pytest.mark.parametrize("text", ["", ",", "2,", ",2", "2,,3", "2, 3", "2;3", "2,٣", "2,+3", "2,3.0", "--2", "2,--3"])
def test_a_list_with_an_empty_or_unreadable_part_is_refused_whole(text):
    message = refusal(whole_numbers(least=None), text)
    assert message == f"expected integers, comma-separated in digits 0-9, got {echoed(text)}"


def test_a_list_of_200_characters_is_read_and_one_of_201_is_refused():
    longest = "1," * 99 + "11"
    assert len(longest) == MAX_LIST_TEXT == 200
    assert whole_numbers()(longest) == [1] * 99 + [11]
    assert "of at most 200 characters" in refusal(whole_numbers(), longest + "1")
    assert whole_numbers()("0,5") == [0, 5] and "0 or more" in refusal(whole_numbers(), "1,-1")  # 0 or more unless told
