"""What only several players need (yacht_env.table.outcome): win shares, zero-sum rewards, checked table arguments,
the text of a table, and names made unique."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.utils.seeding import np_random
from hypothesis import given
from hypothesis import strategies as st

from yacht_env.game import draw_table_dice
from yacht_env.rules import YACHT
from yacht_env.table.outcome import (
    GameBatch,
    check_reward_mode,
    check_table_dice,
    render_table,
    unique_names,
    win_rewards,
    win_shares,
)

TOTALS = st.lists(st.integers(0, 5), min_size=1, max_size=5)  # few values: ties are common


@given(TOTALS)
def test_the_highest_totals_share_the_win_evenly(totals):
    shares = win_shares(totals)
    best = max(totals)
    winners = [total == best for total in totals]
    assert shares.sum() == pytest.approx(1.0)
    assert shares.tolist() == pytest.approx([1 / sum(winners) if won else 0.0 for won in winners])


@given(TOTALS)
def test_rewards_are_zero_sum_the_winners_sharing_plus_one_and_the_others_minus_one(totals):
    rewards = win_rewards(totals)
    best, n = max(totals), len(totals)
    k = sum(total == best for total in totals)
    assert rewards.sum() == pytest.approx(0.0, abs=1e-12)
    expected = [0.0] * n if k == n else [1 / k if total == best else -1 / (n - k) for total in totals]
    assert rewards.tolist() == pytest.approx(expected)


@given(st.lists(TOTALS.filter(lambda t: len(t) == 3), min_size=1, max_size=4))
def test_shares_and_rewards_are_per_table_along_the_last_axis(tables):
    stacked = np.array(tables)
    np.testing.assert_allclose(win_shares(stacked), [win_shares(t) for t in tables])
    np.testing.assert_allclose(win_rewards(stacked), [win_rewards(t) for t in tables])


def test_a_reward_mode_is_win_or_score():
    assert [check_reward_mode(mode) for mode in ("win", "score")] == ["win", "score"]
    for bad in ("points", None, "Win"):
        with pytest.raises(ValueError, match=f"^reward_mode {bad!r} is not supported; expected 'win' or 'score'$"):
            check_reward_mode(bad)


def test_table_dice_are_one_stream_a_seat_as_int8_and_refused_otherwise():
    faces = draw_table_dice(np_random(3)[0], YACHT, 2)
    checked = check_table_dice(faces.astype(np.int64), YACHT, 2)
    assert checked.dtype == np.int8 and np.array_equal(checked, faces)
    with pytest.raises(ValueError, match=r"one dice stream per seat\), got shape \(2, 12, 3, 5\)"):
        check_table_dice(faces, YACHT, 3)
    bad = faces.copy()
    bad[1, 0, 0, 0] = 7
    with pytest.raises(ValueError, match="7"):
        check_table_dice(bad, YACHT, 2)


def play_first_open_rows(tables: GameBatch, turns: int) -> None:
    """Each seat to act scores its first open row on its first roll, ``turns`` times."""
    for _ in range(turns):
        seat = int(tables.seat[0])
        row = next(c for c in range(YACHT.num_rows) if tables.open_bits[0, seat] >> c & 1)
        tables.play(np.array([YACHT.dice.num_rerolls + row]), np.array([0]))


def table_of(num_players: int, seed: int) -> GameBatch:
    tables = GameBatch(YACHT, num_players, 1)
    tables.start(draw_table_dice(np_random(seed)[0], YACHT, num_players)[None])
    return tables


def test_a_table_in_play_shows_the_seat_to_act_and_every_seat_s_total_and_open_rows():
    tables = table_of(3, seed=5)
    play_first_open_rows(tables, 4)  # seats 0, 1, 2, then 0 again: seat 1 is to act
    text = render_table(tables, 0, ["ann", "bob", "cy"])
    assert text.splitlines()[0].startswith("bob to play")
    totals = [int(total) for total in tables.totals[0]]
    assert text.splitlines()[-1] == f"Table   ann {totals[0]} (10 open)   >bob {totals[1]} (11 open)    cy {totals[2]} (11 open)"


def test_a_finished_table_shows_every_sheet_and_who_won():
    tables = table_of(2, seed=5)
    play_first_open_rows(tables, 2 * YACHT.num_rows)
    totals = tables.totals[0]
    text = render_table(tables, 0, ["ann", "bob"])
    assert "ann" in text.split("\n\n")[0] and "bob" in text.split("\n\n")[1]
    best = int(totals.max())
    winners = [name for name, total in zip(["ann", "bob"], totals) if total == best]
    verb = "wins" if len(winners) == 1 else "share the win"
    assert text.split("\n\n")[-1] == f"{' and '.join(winners)} {verb} with {best}"
    tables.totals[0] = [150, 150]  # a tie, as two sheets could add up
    assert render_table(tables, 0, ["ann", "bob"]).split("\n\n")[-1] == "ann and bob share the win with 150"


def test_a_name_seated_again_is_numbered():
    assert unique_names(["optimal", "optimal", "greedy", "optimal"]) == ["optimal", "optimal (2)", "greedy", "optimal (3)"]
    assert unique_names([]) == []
