"""Small rule sets whose DPs solve in a blink, shared by the agents' tests."""

from yacht_env.rules import Category, RuleSet, all_alike, total, upper

# 3 dice with 3 faces, 4 rows: the target and win tests work its values out by hand.
MINI = RuleSet(
    name="mini",
    categories=(
        Category("ones", upper(1)),
        Category("twos", upper(2)),
        Category("choice", total),
        Category("yacht", all_alike(10)),
    ),
    num_dice=3,
    num_faces=3,
    rolls_per_turn=3,
)


def keep_children_by_hand(dice) -> list[list[int]]:
    """Each keep's children worked out from its dice: the keep with one die of each face added, -1 for a full keep."""
    return [
        [-1] * dice.num_faces
        if len(keep) == dice.num_dice
        else [dice.keep_index[tuple(sorted((*keep, face)))] for face in range(1, dice.num_faces + 1)]
        for keep in dice.keeps
    ]
