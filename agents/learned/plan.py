"""Decision-time planning with a learned sheet value: the ``plan:PATH`` policy.

At every decision the planner values each keep and each row of the current turn exactly, through the
dice probabilities, with the learned value ``V`` of the sheet the turn leaves (a plan file,
:mod:`agents.learned.plan_files`). The turn's values are those of the exact solver's within-turn routine
(:class:`agents.solvers.sheet_solver.SheetSolution`, whose recurrences take any ``V``): given the exact
``V`` it plays exactly as ``optimal``; given a learned one, it plays best under that value. Ties go to
the lowest action index, as for ``optimal``.

It reads the sheet state it needs from any observation encoding (the upper subtotal and the Yahtzee
box under bonus rules), plays one rule set (the file's) and sits at a table as it plays alone.
"""

from __future__ import annotations

import numpy as np
from typing_extensions import override

from agents.learned.model_files import check_trained_rules
from agents.learned.plan_files import plan_file_path, read_plan_file, value_shape
from agents.policies.policy import Policy
from agents.solvers.exact_solution import best_actions
from agents.solvers.sheet_solver import SheetSolution
from yacht_env.rules import RuleSet, rule_set

PREFIX = "plan:"


class TurnPlanner(SheetSolution):
    """The Q-values of a turn under end-of-turn sheet values ``V`` (any ``V``; every state must be finite).

    ``values`` has the shape :func:`agents.learned.plan_files.value_shape` of ``rules``; ``V`` of the full sheet is 0.
    """

    def __init__(self, rules: RuleSet | str, values: np.ndarray):
        rules = rule_set(rules)
        values = np.ascontiguousarray(values, dtype=np.float64)
        if values.shape != value_shape(rules):
            raise ValueError(f"values of the {rules.name} rules have shape {value_shape(rules)}, got {values.shape}")
        if not np.isfinite(values).all():
            raise ValueError("values must be finite for every sheet state")
        values.setflags(write=False)
        super().__init__(rules, values)


class PlanPolicy(Policy):
    """Plays the best action of the current turn under a learned sheet value (lowest action index on ties)."""

    def __init__(self, planner: TurnPlanner, name: str = "plan", rules=None, encoding: str = "flat"):
        super().__init__(rules, encoding)
        self.name = name
        self.planner = planner

    @classmethod
    def load(cls, path: str, rules=None, encoding: str = "flat") -> PlanPolicy:
        """The policy of the plan file at ``path`` (or a shipped one by name: ``plan:yacht``), for a game under ``rules``."""
        rules = rule_set(rules)
        meta, values = read_plan_file(plan_file_path(path))
        check_trained_rules("plan file", path, meta, rules)
        return cls(TurnPlanner(rules, values), f"{PREFIX}{path}", rules=rules, encoding=encoding)

    @override
    def act_batch(self, observations, action_masks):
        q = self.planner.q_values_batch(*self.encoding.decode_positions(observations))
        q = np.where(np.asarray(action_masks) != 0, q, -np.inf)
        return best_actions(q)  # ties within TIE_RELATIVE to the lowest action, as optimal breaks them
