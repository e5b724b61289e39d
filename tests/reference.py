"""RULES.md's score table written out independently of yacht_env.rules, for tests to check against."""

from collections import Counter


def reference_score(dice, category):
    """Points of ``dice`` in ``category`` (a name), straight from RULES.md."""
    counts = Counter(dice)
    faces = {"ones": 1, "twos": 2, "threes": 3, "fours": 4, "fives": 5, "sixes": 6}
    if category in faces:
        return faces[category] * counts[faces[category]]
    if category == "choice":
        return sum(dice)
    if category == "four_of_a_kind":
        return sum(dice) if max(counts.values()) >= 4 else 0
    if category == "full_house":
        return sum(dice) if sorted(counts.values()) == [2, 3] else 0
    if category == "little_straight":
        return 30 if sorted(dice) == [1, 2, 3, 4, 5] else 0
    if category == "big_straight":
        return 30 if sorted(dice) == [2, 3, 4, 5, 6] else 0
    if category == "yacht":
        return 50 if len(counts) == 1 else 0
    raise AssertionError(category)
