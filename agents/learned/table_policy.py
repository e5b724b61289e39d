"""Policies at a Yacht table: trained models that read the table, and names resolved for a table.

A model trained in ``Yacht-v0`` with opponents sees table observations (its own position plus
the others' totals and open rows, :mod:`yacht_env.table.encoding`); :class:`TablePPOPolicy`
plays it. Solitaire policies (``random``, ``greedy``, ``optimal``, a solitaire ``ppo:`` model)
sit at a table unchanged and see only their own position. :func:`agents.registry.make_table_policy`
builds either kind from a name, for a table of a given size.
"""

from __future__ import annotations

from typing_extensions import override

from agents.learned.ppo import ModelLoadError, PPOPolicy, predict_actions
from agents.policies.policy import Policy
from yacht_env.encoding import ENCODINGS, make_encoding
from yacht_env.rules import RuleSet, rule_set
from yacht_env.table.encoding import TableEncoding, make_table_encoding


def table_encoding_of(observation_space, num_players: int, rules: RuleSet) -> TableEncoding | None:
    """The table encoding of ``num_players`` whose space is ``observation_space``, or None."""
    for name in ENCODINGS:
        encoding = make_table_encoding(name, num_players, rules)
        if encoding.space == observation_space:
            return encoding
    return None


def is_solitaire_space(observation_space, rules: RuleSet) -> bool:
    """Whether ``observation_space`` is that of a solitaire encoding under ``rules`` (not a table's)."""
    return any(make_encoding(name, rules).space == observation_space for name in ENCODINGS)


class TablePPOPolicy(Policy):
    """A MaskablePPO model trained at a table; plays the most likely legal action by default.

    It is fed table observations in ``table_encoding`` (the encoding it was trained on), so it
    plays only at tables of the size it was trained for.
    """

    def __init__(self, model, name: str = "ppo", rules: RuleSet | None = None, num_players: int = 2, deterministic: bool = True):
        rules = rule_set(rules)
        table_encoding = table_encoding_of(model.observation_space, num_players, rules)
        if table_encoding is None:
            raise ModelLoadError(
                f"model {name}'s observation space {model.observation_space} is no table observation of {num_players} players"
            )
        super().__init__(rules, table_encoding.name)
        self.model = model
        self.name = name
        self.deterministic = deterministic
        self.table_encoding = table_encoding

    @override
    def act_batch(self, observations, action_masks):
        return predict_actions(self.model, self.name, observations, action_masks, self.deterministic)


def model_policy(
    model, name: str, num_players: int, rules: RuleSet | None = None, solitaire: type[PPOPolicy] = PPOPolicy
) -> Policy:
    """The policy of an in-memory model (MaskablePPO, or a model file's network): a table policy if it reads the
    table, else ``solitaire``'s (a Q network's: :class:`agents.learned.dqn.DQNPolicy`).
    """
    rules = rule_set(rules)
    if is_solitaire_space(model.observation_space, rules):
        return solitaire(model, name, rules=rules)
    return TablePPOPolicy(model, name, rules=rules, num_players=num_players)
