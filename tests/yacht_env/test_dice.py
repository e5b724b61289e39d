"""Dice combinatorics (yacht_env.dice.DiceSpace) against first principles: every ordered roll enumerated."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import numpy as np
import pytest

from yacht_env.dice import DiceSpace

SPACES = [(1, 2), (2, 3), (3, 4), (5, 6)]


@pytest.fixture(scope="module", params=SPACES, ids=lambda shape: f"{shape[0]}d{shape[1]}")
def space(request):
    return DiceSpace(*request.param)


def rolls(num_dice: int, num_faces: int):
    """Every ordered roll of ``num_dice`` dice, each equally likely."""
    return itertools.product(range(1, num_faces + 1), repeat=num_dice)


def test_hands_are_every_multiset_of_faces_sorted_in_lexicographic_order(space):
    n, f = space.num_dice, space.num_faces
    hands = [tuple(int(d) for d in hand) for hand in space.hands]
    assert hands == sorted({tuple(sorted(roll)) for roll in rolls(n, f)})
    assert space.num_hands == math.comb(n + f - 1, n)
    assert all(space.hand_index[hand] == i for i, hand in enumerate(hands))
    for hand, counts in zip(hands, space.hand_counts):
        assert counts.tolist() == [hand.count(face) for face in range(1, f + 1)]


def test_any_order_of_dice_codes_to_its_hand(space):
    n, f = space.num_dice, space.num_faces
    for roll in rolls(n, f):
        code = space.code(roll)
        assert code == sum((d - 1) * f**i for i, d in enumerate(roll)) == int(np.dot(np.array(roll) - 1, space.place_values))
        assert space.hand_of_code[code] == space.hand_index[tuple(sorted(roll))]


def test_hand_probabilities_are_the_share_of_ordered_rolls_giving_each_hand(space):
    n, f = space.num_dice, space.num_faces
    seen = Counter(tuple(sorted(roll)) for roll in rolls(n, f))
    expected = [seen[tuple(int(d) for d in hand)] / f**n for hand in space.hands]
    np.testing.assert_allclose(space.hand_probabilities, expected, rtol=1e-12)


def test_keeps_are_every_sub_multiset_shortest_first(space):
    n, f = space.num_dice, space.num_faces
    keeps = list(space.keeps)
    assert sorted(keeps, key=lambda keep: (len(keep), keep)) == keeps
    assert set(keeps) == {tuple(sorted(sub)) for size in range(n + 1) for sub in itertools.product(range(1, f + 1), repeat=size)}
    assert space.num_keeps == len(keeps) == math.comb(n + f, n)
    assert space.keep_sizes.tolist() == [len(keep) for keep in keeps]
    assert all(space.keep_index[keep] == i for i, keep in enumerate(keeps))


def test_a_keep_s_hands_are_those_its_re_rolled_dice_can_make_as_often_as_they_make_them(space):
    n, f = space.num_dice, space.num_faces
    for k, keep in enumerate(space.keeps):
        rolled = n - len(keep)
        seen = Counter(tuple(sorted(keep + roll)) for roll in rolls(rolled, f))
        expected = np.zeros(space.num_hands)
        for hand, count in seen.items():
            expected[space.hand_index[hand]] = count / f**rolled
        np.testing.assert_allclose(space.keep_to_hand[k], expected, rtol=1e-12, atol=1e-15)


def test_picking_up_the_dice_of_a_mask_leaves_the_others_kept(space):
    for h, hand in enumerate(space.hands):
        assert space.keep_index[tuple(int(d) for d in hand)] == space.hand_as_keep[h]
        for mask in range(space.num_rerolls):
            picked = [i for i in range(space.num_dice) if mask >> i & 1]
            assert list(space.reroll_positions[mask]) == picked
            assert space.reroll_bits[mask].tolist() == [i in picked for i in range(space.num_dice)]
            assert [space.reroll_rank[mask, i] for i in picked] == list(range(len(picked)))
            assert all(space.reroll_rank[mask, i] == 0 for i in range(space.num_dice) if i not in picked)
            kept = tuple(int(d) for i, d in enumerate(hand) if i not in picked)
            assert space.keeps[space.keep_after_reroll[h, mask]] == kept


def test_a_re_roll_lands_the_fresh_dice_where_the_picked_up_ones_were(space):
    f = space.num_faces
    for h, hand in enumerate(space.hands):
        for mask in range(space.num_rerolls):
            picked = space.reroll_positions[mask]
            kept = [int(d) for i, d in enumerate(hand) if i not in picked]
            for fresh in itertools.islice(rolls(len(picked), f), 7):
                assert space.hands[space.reroll(h, mask, fresh)].tolist() == sorted(kept + list(fresh))
                dice = [int(d) for d in hand]
                for face, position in zip(fresh, picked):
                    dice[position] = face
                assert space.kept_code[h, mask] + sum((face - 1) * f**p for face, p in zip(fresh, picked)) == space.code(dice)


def test_a_keep_s_parents_are_it_less_one_die_of_each_face_it_holds(space):
    for k, keep in enumerate(space.keeps):
        parents = [space.keeps[p] for p in space.keep_parents[k]]
        expected = []
        for face in sorted(set(keep)):
            less = list(keep)
            less.remove(face)
            expected.append(tuple(less))
        assert parents == expected + [keep] * (space.num_dice - len(expected))


def test_the_tables_are_read_only(space):
    for table in (space.hands, space.keep_to_hand, space.keep_after_reroll, space.reroll_rank, space.kept_code):
        with pytest.raises(ValueError, match="read-only"):
            table.flat[0] = 0


@pytest.mark.parametrize("num_dice, num_faces", [(0, 6), (5, 1), (-1, 6)])
def test_too_few_dice_or_faces_are_refused_naming_both(num_dice, num_faces):
    with pytest.raises(ValueError, match=f"^need at least 1 die and 2 faces, got {num_dice} dice and {num_faces} faces$"):
        DiceSpace(num_dice, num_faces)


def test_the_smallest_space_is_one_coin():
    coin = DiceSpace(1, 2)
    assert coin.hands.tolist() == [[1], [2]] and coin.num_rerolls == 2 and coin.hand_probabilities.tolist() == [0.5, 0.5]


def test_the_default_space_is_five_six_sided_dice():
    default = DiceSpace()
    assert (default.num_dice, default.num_faces, default.num_hands, default.num_keeps) == (5, 6, 252, 462)
