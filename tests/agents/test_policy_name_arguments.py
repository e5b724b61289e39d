"""The arguments of policy names, read one way: ASCII numbers only, one-line refusals naming the name (shortened)
and what is allowed, temperatures of any size without numpy warnings, and each policy's own table sizes."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from agents.policies.softmax import choice_actions, choosable, parse_softmax, probabilities
from agents.policies.win import parse_target
from agents.registry import POLICIES, make_policy, policy_spec
from agents.solvers.target import max_total
from yacht_env.echo import echoed
from yacht_env.rules import YACHT

TOP = max_total(YACHT)
ACTIONS = YACHT.dice.keep_after_reroll.shape[1] + YACHT.num_rows  # re-rolls, then rows
NON_ASCII_DIGITS = st.characters(categories=["Nd", "No"]).filter(lambda char: char not in "0123456789")


def q_values(rng, count: int, ties: bool):
    """Q-values of ``count`` random positions as the solver gives them: the same for actions making the same choice,
    -inf where illegal (some rows always legal), rounded to 0.1 point when ``ties`` (so choices tie too)."""
    hands = rng.integers(0, YACHT.dice.num_hands, size=count)
    q = rng.normal(20, 10, size=(count, ACTIONS))
    q = np.round(q, 1) if ties else q
    q[rng.random(q.shape) < 0.3] = -np.inf
    q[:, -3:] = rng.normal(10, 5, size=(count, 3))
    return np.take_along_axis(q, choice_actions(YACHT)[hands], axis=1), hands


def refused(name: str, allowed: str) -> str:
    with pytest.raises(ValueError) as error:
        make_policy(name)
    message = str(error.value)
    assert "\n" not in message and message.startswith(f"policy {echoed(name)}: ") and allowed in message, message
    return message


@given(st.integers(0, TOP))
def test_a_target_in_ascii_digits_is_read(target):
    assert parse_target(f"target:{target}") == target
    assert parse_target(f"target:{target:05d}") == target  # leading zeros are still the number


@given(st.text(min_size=1, max_size=8).filter(lambda text: not (text.isascii() and text.isdigit())))
def test_a_target_in_anything_but_ascii_digits_is_refused_in_one_line(text):
    refused(f"target:{text}", f"a whole score in 0..{TOP}, in digits 0-9")


@given(st.text(NON_ASCII_DIGITS, min_size=1, max_size=4))
def test_digits_of_other_scripts_and_superscripts_are_refused(digits):
    """int() reads "٣" as 3 and float() "١" as 1, and "²".isdigit() is true though int("²") fails."""
    refused(f"target:{digits}", "digits 0-9")
    refused(f"softmax:{digits}", "digits 0-9")


@given(st.floats(0, 1e6, allow_subnormal=True))
def test_a_temperature_as_python_writes_a_float_is_read_back_exactly(temperature):
    assert parse_softmax(f"softmax:{temperature!r}") == temperature
    assert parse_softmax(f"softmax:{temperature:.3e}") == float(f"{temperature:.3e}")


@pytest.mark.parametrize("text", ["1_000", "1_0.5", " 1", "1 ", "+1", "-0", "inf", "nan", "1e999", "0x10", "1.5.2", "", "e3"])
def test_a_temperature_python_would_read_but_no_one_types_is_refused(text):
    refused(f"softmax:{text}" if text else "softmax:x", "in digits 0-9 (a point and an exponent allowed)")


def test_a_huge_name_is_echoed_cut():
    for name in ("softmax:" + "9" * 100_000, "target:" + "1" * 100_000, "z" * 100_000, "br:" + "x" * 100_000):
        with pytest.raises(ValueError) as error:
            make_policy(name) if not name.startswith("br:") else POLICIES["br:"].build_at_table(name, 2)
        assert len(str(error.value)) < 400 and "characters)" in str(error.value)


@given(st.floats(5e-324, 1e-3), st.integers(0, 2**32 - 1))
def test_a_tiny_temperature_raises_no_warning_and_plays_the_best_choices(temperature, seed):
    """softmax:1e-320 overflowed (q - best) / T and printed numpy RuntimeWarnings; the limit is the best choices."""
    q, hands = q_values(np.random.default_rng(seed), 4, ties=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        p = probabilities(q, hands, YACHT, temperature)
    stands = choosable(q, hands, YACHT)
    best = np.max(q, axis=1, keepdims=True)
    assert np.allclose(p.sum(axis=1), 1.0)
    assert np.all(p[stands & (best - q > 800 * temperature)] == 0)
    if temperature < 1e-300:  # every gap of 0.1 point is past 800 T: the best choices share all
        shares = (stands & (q == best)) / np.sum(stands & (q == best), axis=1, keepdims=True)
        assert np.allclose(p, shares)


@given(st.floats(0.05, 1000), st.integers(0, 2**32 - 1))
def test_at_an_ordinary_temperature_the_probabilities_are_the_softmax(temperature, seed):
    q, hands = q_values(np.random.default_rng(seed), 3, ties=False)
    stands = choosable(q, hands, YACHT)
    weights = np.where(stands, np.exp((q - q.max(axis=1, keepdims=True)) / temperature), 0.0)
    assert np.array_equal(probabilities(q, hands, YACHT, temperature), weights / weights.sum(axis=1, keepdims=True))


@pytest.mark.parametrize("name", ["exact2", "br:optimal", "plan2:yacht", "win"])
def test_a_table_only_policy_names_the_tables_it_sits_at(name):
    """br:, exact2 and plan2: said "a table of 2 to 5" but play only at 2."""
    fewest, most = policy_spec(name).table_sizes
    sizes = f"{fewest}" if fewest == most else f"{fewest} to {most}"
    with pytest.raises(ValueError) as error:
        make_policy(name)
    assert f"plays at a table of {sizes} players" in str(error.value)
    assert {"exact2": "2", "br:optimal": "2", "plan2:yacht": "2", "win": "2 to 5"}[name] == sizes
