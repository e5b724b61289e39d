"""Names that moved stay importable under their old names, with a DeprecationWarning that names the new one."""

import importlib
import sys

import pytest

from yacht_env import game
from yacht_env.table import outcome, pettingzoo_env


@pytest.mark.parametrize(
    "old, new, module",
    [
        ("yacht_env.multiplayer", "yacht_env.table.pettingzoo_env", pettingzoo_env),
        ("yacht_env.table.game", "yacht_env.table.outcome", outcome),
    ],
)
def test_a_moved_module_warns_and_is_the_same_module(old, new, module):
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=f"{old} is now {new}"):
        imported = importlib.import_module(old)
    assert imported is module


def test_the_old_name_of_the_game_batch_warns_and_is_the_class():
    with pytest.warns(DeprecationWarning, match="Tables is now yacht_env.game.GameBatch"):
        from yacht_env.game import Tables
    assert Tables is game.GameBatch
    with pytest.raises(AttributeError, match="has no attribute 'Tabels'"):
        game.Tabels  # noqa: B018


def test_the_pettingzoo_env_keeps_its_versioned_name():
    from yacht_env import yacht_v0

    assert yacht_v0.raw_env is pettingzoo_env.raw_env


def test_the_old_names_of_the_score_and_mask_lookups_warn_and_give_the_same_arrays():
    """Each warning points at the line that used the old name (here), not at the library, so a user can find it."""
    from yacht_env import YACHT, ActionLayout, actions

    with pytest.warns(DeprecationWarning, match="score_table is now RuleSet.hand_scores") as warned:
        assert YACHT.score_table is YACHT.hand_scores
    assert warned[0].filename == __file__
    with pytest.warns(DeprecationWarning, match="joker_score_table is now RuleSet.joker_hand_scores") as warned:
        assert YACHT.joker_score_table is YACHT.joker_hand_scores
    assert warned[0].filename == __file__
    with pytest.warns(DeprecationWarning, match="mask_table is now ActionLayout.legal_masks") as warned:
        assert ActionLayout(YACHT).mask_table is ActionLayout(YACHT).legal_masks
    assert warned[0].filename == __file__
    with pytest.warns(DeprecationWarning, match="legal_mask_table is now legal_masks") as warned:
        assert actions.legal_mask_table is actions.legal_masks
    assert warned[0].filename == __file__


def test_the_old_list_of_resumable_policies_warns_and_is_the_registry_s():
    from agents.registry import resumable_policies
    from yacht_play import match

    with pytest.warns(DeprecationWarning, match="BUILT_IN_POLICIES is now agents.registry.resumable_policies") as warned:
        assert match.BUILT_IN_POLICIES == resumable_policies()
    assert warned[0].filename == __file__
    with pytest.raises(AttributeError, match="has no attribute 'BUILT_IN_POLICY'"):
        match.BUILT_IN_POLICY  # noqa: B018
