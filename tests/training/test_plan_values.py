"""The planning agent's value network (agents.training.plan_values.NetValue) reads its sheet table as it should."""

from __future__ import annotations

import numpy as np
import pytest

from agents.solvers.sheet_solver import equivalent_states, reachable_states
from agents.training.config import load_config
from agents.training.plan_train import value_model
from agents.training.plan_values import NetValue
from yacht_env.rules import RULE_SETS


@pytest.mark.parametrize("rules", ["yatzy", "yahtzee"])
def test_the_network_reads_each_value_of_its_table_once(rules, monkeypatch):
    """Reading the table, the network sees every reachable state whose value is its own once, in chunks that do not
    overlap; the states sharing a value (a subtotal that no longer matters) are copied, not read."""
    import torch

    config = load_config(None, ["algorithm=plan", "plan.value_model=net", f"env.rules={rules}", "plan.net_arch=[4]"])
    model = value_model(config, RULE_SETS[rules])
    assert isinstance(model, NetValue)
    rows = []
    model.net[0].register_forward_hook(lambda layer, args, out: rows.append(len(args[0])))
    with torch.no_grad():
        table = model._read_table()
    reachable = reachable_states(model.player.rules)
    representatives = equivalent_states(model.player.rules, reachable).reshape(-1)[reachable.reshape(-1)]
    assert sum(rows) == len(np.unique(representatives)) < reachable.sum()
    assert max(rows) == 65_536
    flat = table.reshape(-1)
    np.testing.assert_array_equal(flat[np.flatnonzero(reachable)], flat[representatives])  # a copy holds its value
